package pipeline

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
)

// hub fans events out to observers. Each observer has a bounded ring
// drained by its own goroutine. With no observers an event costs one
// atomic load. When an observer's ring fills up, the observer is marked
// full and new events for it are dropped and counted until it has drained
// half of its ring, so what it does receive is a contiguous stream. While
// every observer is full, an event costs one atomic load and a counter
// increment on the reporting node, as good as no observer at all.
type hub struct {
	clock    *clock
	log      *zap.Logger
	capacity int
	mu       sync.Mutex // serialises add and close
	list     atomic.Pointer[[]*watcher]
	wg       sync.WaitGroup
	closed   bool

	// activity is set on every push of an idle-activity frame, for the idle
	// monitor: the task clock reading, in nanoseconds.
	activity   atomic.Int64
	isActivity func(frames.Frame) bool

	_ [64]byte
	// counts holds the number of observers in its upper 32 bits and the
	// number of them that are not full in its lower 32 bits: one load tells
	// an event that there is nobody to tell or that everybody is full. It
	// changes only when an observer is added, fills up or drains, so nodes
	// read it from their own caches.
	counts atomic.Uint64
	_      [64]byte
	// drops counts events dropped for the task's own pushes and for pushes
	// from goroutines other than the node's own.
	drops atomic.Uint64
}

type watcher struct {
	counts *atomic.Uint64 // the hub's observer counts
	full   atomic.Bool
	o      observers.Observer
	filter observers.Filter
	// lossless observers are never full: a put that finds no room waits
	// on room (under mu) until drain frees a slot.
	lossless bool
	room     *sync.Cond
	blocked  int // puts waiting for room
	mu       sync.Mutex
	buf      []observers.Event
	head     int
	size     int
	waiting  bool
	closing  bool
	notify   chan struct{}
	done     chan struct{}
	dropped  atomic.Uint64
}

func newHub(c *clock, log *zap.Logger, capacity int, isActivity func(frames.Frame) bool) *hub {
	h := &hub{clock: c, log: log, capacity: capacity, isActivity: isActivity}
	empty := []*watcher{}
	h.list.Store(&empty)
	return h
}

// add registers an observer; it may be called at any time, also while
// the pipeline runs.
func (h *hub) add(o observers.Observer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	old := *h.list.Load()
	if reflect.TypeOf(o).Comparable() {
		for _, w := range old {
			if w.o == o {
				return // added already: an observer sees each event once
			}
		}
	}
	w := &watcher{counts: &h.counts, o: o, buf: make([]observers.Event, h.capacity), notify: make(chan struct{}, 1), done: make(chan struct{})}
	w.filter, _ = o.(observers.Filter)
	if l, ok := o.(observers.Lossless); ok && l.Lossless() {
		w.lossless = true
		w.room = sync.NewCond(&w.mu)
	}
	next := make([]*watcher, len(old), len(old)+1)
	copy(next, old)
	next = append(next, w)
	h.list.Store(&next)
	h.counts.Add(1<<32 | 1)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		w.drain()
	}()
}

// pushed reports that src pushed f towards dst; src is nil for the task's
// own pushes, and own says the caller runs on src's goroutine.
func (h *hub) pushed(src *node, dst observers.Node, f frames.Frame, dir frames.Direction, first, own bool) {
	if h.isActivity != nil && h.isActivity(f) {
		h.activity.Store(int64(h.clock.Now()))
	}
	if h.skip(src, own) {
		return
	}
	e := observers.Event{Kind: observers.Pushed, Destination: dst, Frame: f, Direction: dir, FirstSeen: first}
	if src != nil {
		e.Source = src // not a typed nil for the task's own pushes
	}
	h.fanOut(src, own, &e)
}

// processed reports that n is about to process f; it runs on n's goroutine.
func (h *hub) processed(n *node, f frames.Frame, dir frames.Direction) {
	if h.skip(n, true) {
		return
	}
	e := observers.Event{Kind: observers.Processed, Destination: n, Frame: f, Direction: dir}
	h.fanOut(n, true, &e)
}

// skip reports whether an event from n has nobody to go to: there are no
// observers, or every one is full, and then it counts the drops (on n, or
// on the hub when n is nil; own says the caller runs on n's goroutine).
// This is all an event costs in those cases: one load and an increment.
func (h *hub) skip(n *node, own bool) bool {
	c := h.counts.Load()
	if c == 0 {
		return true
	}
	if uint32(c) == 0 {
		h.countDrops(n, own, int(c>>32))
		return true
	}
	return false
}

// fanOut gives e, stamped with the time, to every observer that is not full
// and wants it, and counts a drop for every full one.
func (h *hub) fanOut(n *node, own bool, e *observers.Event) {
	stamped := false
	for _, w := range *h.list.Load() {
		if w.full.Load() {
			h.countDrops(n, own, 1)
			continue
		}
		if w.filter != nil && !w.filter.Wants(e.Kind, e.Frame) {
			continue
		}
		if !stamped {
			e.At, stamped = h.clock.Now(), true
		}
		w.put(e)
	}
}

// countDrops counts k events that full observers missed, on the reporting
// node when there is one.
func (h *hub) countDrops(n *node, own bool, k int) {
	if n == nil {
		h.drops.Add(uint64(k))
		return
	}
	n.countDrops(k, own)
}

func (w *watcher) put(e *observers.Event) {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return
	}
	n := len(w.buf)
	for w.lossless && w.size == n && !w.closing {
		w.blocked++
		w.room.Wait()
		w.blocked--
	}
	if w.closing {
		w.mu.Unlock()
		return
	}
	if w.size == n {
		if !w.full.Load() {
			w.full.Store(true)
			w.counts.Add(^uint64(0)) // one fewer open
		}
		w.mu.Unlock()
		w.dropped.Add(1)
		return
	}
	w.buf[(w.head+w.size)%n] = *e
	w.size++
	wake := w.waiting
	w.waiting = false
	w.mu.Unlock()
	if wake {
		w.notify <- struct{}{}
	}
}

func (w *watcher) drain() {
	defer close(w.done)
	for {
		w.mu.Lock()
		if w.size == 0 {
			if w.closing {
				w.mu.Unlock()
				return
			}
			w.waiting = true
			w.mu.Unlock()
			<-w.notify
			continue
		}
		e := w.buf[w.head]
		w.buf[w.head] = observers.Event{}
		w.head = (w.head + 1) % len(w.buf)
		w.size--
		if w.size <= len(w.buf)/2 && w.full.Load() {
			w.full.Store(false)
			w.counts.Add(1)
		}
		if w.blocked > 0 {
			w.room.Signal()
		}
		w.mu.Unlock()
		w.o.Observe(e)
	}
}

// discard drops what w still holds, counting it, so that its goroutine
// ends as soon as the event it is handling returns.
func (w *watcher) discard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropped.Add(uint64(w.size))
	clear(w.buf)
	w.head, w.size = 0, 0
}

// close stops accepting events and waits until every observer has handled
// what was buffered, or until the deadline; it returns false on timeout.
func (h *hub) close(timeout time.Duration) bool {
	h.mu.Lock()
	h.closed = true
	ws := *h.list.Load()
	h.mu.Unlock()
	for _, w := range ws {
		w.mu.Lock()
		w.closing = true
		wake := w.waiting
		w.waiting = false
		if w.room != nil {
			w.room.Broadcast() // waiting puts give up: the task is ending
		}
		w.mu.Unlock()
		if wake {
			w.notify <- struct{}{}
		}
	}
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		h.log.Warn("observers did not drain before the deadline; dropping what they still hold", zap.Duration("timeout", timeout))
		for _, w := range ws {
			w.discard()
		}
		return false
	}
}

// dropped returns how many events observers lost because they were full.
func (h *hub) dropped(nodes []*node) uint64 {
	var total uint64
	for _, w := range *h.list.Load() {
		total += w.dropped.Load()
	}
	total += h.drops.Load()
	for _, n := range nodes {
		total += n.drops.Load()
	}
	return total
}

// clock is the task clock: monotonic time since the task was created.
type clock struct{ start time.Time }

// Now implements [Clock].
func (c *clock) Now() time.Duration { return time.Since(c.start) }

// Clock reads the task clock: monotonic time since the task was created.
type Clock interface {
	Now() time.Duration
}
