package pipeline

import (
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
// half of its ring: a backlogged observer then costs one atomic load per
// event, and what it does receive is a contiguous stream.
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

	drops dropCounters // drops counted for the task's own pushes
}

type watcher struct {
	slot    int // index into the nodes' drop counters
	full    atomic.Bool
	o       observers.Observer
	filter  observers.Filter
	mu      sync.Mutex
	buf     []observers.Event
	head    int
	size    int
	waiting bool
	closing bool
	notify  chan struct{}
	done    chan struct{}
	dropped atomic.Uint64
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
	w := &watcher{o: o, buf: make([]observers.Event, h.capacity), notify: make(chan struct{}, 1), done: make(chan struct{})}
	w.slot = min(len(old), dropSlots-1)
	w.filter, _ = o.(observers.Filter)
	next := make([]*watcher, len(old), len(old)+1)
	copy(next, old)
	next = append(next, w)
	h.list.Store(&next)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		w.drain()
	}()
}

// dropSlots is how many observers get their own drop counter in each
// node; further observers share the last one.
const dropSlots = 8

// dropCounters count, per node and observer slot, the events dropped
// because the observer was full. Each node has its own, so counting a
// drop does not bounce a shared cache line between cores.
type dropCounters [dropSlots]atomic.Uint64

func (h *hub) pushed(src *node, dst observers.Node, f frames.Frame, dir frames.Direction, first, own bool) {
	if h.isActivity != nil && h.isActivity(f) {
		h.activity.Store(int64(h.clock.Now()))
	}
	ws := *h.list.Load()
	if len(ws) == 0 {
		return
	}
	var e observers.Event
	built := false
	for _, w := range ws {
		if !w.accepts(src, own, &h.drops, observers.Pushed, f) {
			continue
		}
		if !built {
			built = true
			var srcNode observers.Node
			if src != nil {
				srcNode = src
			}
			e = observers.Event{Kind: observers.Pushed, Source: srcNode, Destination: dst, Frame: f, Direction: dir, At: h.clock.Now(), FirstSeen: first}
		}
		w.put(&e)
	}
}

func (h *hub) processed(n *node, f frames.Frame, dir frames.Direction) {
	ws := *h.list.Load()
	if len(ws) == 0 {
		return
	}
	var e observers.Event
	built := false
	for _, w := range ws {
		if !w.accepts(n, true, &h.drops, observers.Processed, f) {
			continue
		}
		if !built {
			built = true
			e = observers.Event{Kind: observers.Processed, Destination: n, Frame: f, Direction: dir, At: h.clock.Now()}
		}
		w.put(&e)
	}
}

// accepts reports whether w wants the event; a full observer's drop is
// counted on the reporting node (or the hub for the task's own pushes);
// own says the caller runs on that node's goroutine.
func (w *watcher) accepts(n *node, own bool, hubDrops *dropCounters, kind observers.EventKind, f frames.Frame) bool {
	if w.full.Load() {
		if n != nil {
			n.countDrop(w.slot, own)
		} else {
			hubDrops[w.slot].Add(1)
		}
		return false
	}
	return w.filter == nil || w.filter.Wants(kind, f)
}

func (w *watcher) put(e *observers.Event) {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return
	}
	n := len(w.buf)
	if w.size == n {
		w.full.Store(true)
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
		}
		w.mu.Unlock()
		w.o.Observe(e)
	}
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
		h.log.Warn("observers did not drain before the deadline", zap.Duration("timeout", timeout))
		return false
	}
}

// dropped returns how many events observers lost because they were full.
func (h *hub) dropped(nodes []*node) uint64 {
	var total uint64
	for _, w := range *h.list.Load() {
		total += w.dropped.Load()
	}
	for i := range h.drops {
		total += h.drops[i].Load()
	}
	for _, n := range nodes {
		for i := range n.drops {
			total += n.drops[i].Load()
		}
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
