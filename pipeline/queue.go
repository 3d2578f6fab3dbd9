package pipeline

import (
	"sync"

	"github.com/framewire/framewire/frames"
)

// item is one queued frame with the direction it travels in.
type item struct {
	f   frames.Frame
	dir frames.Direction
}

// ring is a growable FIFO ring buffer. It never shrinks below its initial
// capacity and reuses its storage, so steady-state pushes do not allocate.
type ring struct {
	buf        []item
	head, size int
}

func (r *ring) len() int { return r.size }

func (r *ring) push(it item) {
	if r.size == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.size)%len(r.buf)] = it
	r.size++
}

func (r *ring) grow() {
	n := len(r.buf) * 2
	if n == 0 {
		n = 16
	}
	buf := make([]item, n)
	for i := 0; i < r.size; i++ {
		buf[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = buf, 0
}

func (r *ring) pop() (item, bool) {
	if r.size == 0 {
		return item{}, false
	}
	it := r.buf[r.head]
	r.buf[r.head] = item{}
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return it, true
}

func (r *ring) peek() (item, bool) {
	if r.size == 0 {
		return item{}, false
	}
	return r.buf[r.head], true
}

// filter keeps the items for which keep returns true, in order, and
// returns how many it removed.
func (r *ring) filter(keep func(item) bool) int {
	kept := 0
	for i := 0; i < r.size; i++ {
		it := r.buf[(r.head+i)%len(r.buf)]
		if keep(it) {
			r.buf[(r.head+kept)%len(r.buf)] = it
			kept++
		}
	}
	for i := kept; i < r.size; i++ {
		r.buf[(r.head+i)%len(r.buf)] = item{}
	}
	removed := r.size - kept
	r.size = kept
	return removed
}

// FrameQueue is the one FIFO queue type of the framework: a mutex, a ring
// buffer and a notify channel. Every queue of frames (inside nodes,
// transports and services) uses it, so every queue honours uninterruptible
// frames on [FrameQueue.Reset]. The zero value is an empty, unbounded queue
// ready to use.
type FrameQueue struct {
	mu     sync.Mutex
	r      ring
	notify chan struct{}
	high   int
}

func (q *FrameQueue) wake() chan struct{} {
	if q.notify == nil {
		q.notify = make(chan struct{}, 1)
	}
	return q.notify
}

// Push appends f. It never blocks.
func (q *FrameQueue) Push(f frames.Frame, dir frames.Direction) {
	q.mu.Lock()
	q.r.push(item{f, dir})
	if q.r.size > q.high {
		q.high = q.r.size
	}
	ch := q.wake()
	q.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Pop removes and returns the oldest frame, if any.
func (q *FrameQueue) Pop() (frames.Frame, frames.Direction, bool) {
	q.mu.Lock()
	it, ok := q.r.pop()
	q.mu.Unlock()
	return it.f, it.dir, ok
}

// Peek returns the oldest frame without removing it.
func (q *FrameQueue) Peek() (frames.Frame, frames.Direction, bool) {
	q.mu.Lock()
	it, ok := q.r.peek()
	q.mu.Unlock()
	return it.f, it.dir, ok
}

// Ready returns a channel that receives a value after a Push. Wait on it
// when Pop finds the queue empty; a value may be stale, so Pop again.
func (q *FrameQueue) Ready() <-chan struct{} {
	q.mu.Lock()
	ch := q.wake()
	q.mu.Unlock()
	return ch
}

// Len returns the number of queued frames (the depth gauge).
func (q *FrameQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.r.size
}

// HighWater returns the largest depth the queue has reached.
func (q *FrameQueue) HighWater() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.high
}

// Reset empties the queue for an interruption: uninterruptible frames stay,
// in order. It returns the number of frames dropped.
func (q *FrameQueue) Reset() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.r.filter(keepUninterruptible)
}

// Clear empties the queue completely, uninterruptible frames included (for
// cancellation). It returns the number of frames dropped.
func (q *FrameQueue) Clear() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.r.filter(func(item) bool { return false })
}

// Has reports whether a queued frame satisfies match.
func (q *FrameQueue) Has(match func(frames.Frame) bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := 0; i < q.r.size; i++ {
		if match(q.r.buf[(q.r.head+i)%len(q.r.buf)].f) {
			return true
		}
	}
	return false
}

func keepUninterruptible(it item) bool { return frames.IsUninterruptible(it.f) }
