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
// (drop oldest, count drops) drained by its own goroutine. With no
// observers an event costs one atomic load.
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
}

type watcher struct {
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
	w := &watcher{o: o, buf: make([]observers.Event, h.capacity), notify: make(chan struct{}, 1), done: make(chan struct{})}
	w.filter, _ = o.(observers.Filter)
	old := *h.list.Load()
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

func (h *hub) pushed(src *node, dst observers.Node, f frames.Frame, dir frames.Direction, first bool) {
	if h.isActivity != nil && h.isActivity(f) {
		h.activity.Store(int64(h.clock.Now()))
	}
	ws := *h.list.Load()
	if len(ws) == 0 {
		return
	}
	var srcNode observers.Node
	if src != nil {
		srcNode = src
	}
	e := observers.Event{Kind: observers.Pushed, Source: srcNode, Destination: dst, Frame: f, Direction: dir, At: h.clock.Now(), FirstSeen: first}
	for _, w := range ws {
		w.put(&e)
	}
}

func (h *hub) processed(n *node, f frames.Frame, dir frames.Direction) {
	ws := *h.list.Load()
	if len(ws) == 0 {
		return
	}
	e := observers.Event{Kind: observers.Processed, Destination: n, Frame: f, Direction: dir, At: h.clock.Now()}
	for _, w := range ws {
		w.put(&e)
	}
}

func (w *watcher) put(e *observers.Event) {
	if w.filter != nil && !w.filter.Wants(e.Kind, e.Frame) {
		return
	}
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return
	}
	n := len(w.buf)
	if w.size == n {
		w.buf[w.head] = *e
		w.head = (w.head + 1) % n
		w.dropped.Add(1)
	} else {
		w.buf[(w.head+w.size)%n] = *e
		w.size++
	}
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

func (h *hub) dropped() uint64 {
	var total uint64
	for _, w := range *h.list.Load() {
		total += w.dropped.Load()
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
