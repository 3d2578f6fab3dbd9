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

// segmentSize is the number of items in one block of a ring. Blocks are
// linked, so a growing queue never copies what it holds. A ring keeps a few
// spare blocks, so a queue that fills and empties does not allocate, and
// returns the rest to a process-wide pool, so a backlog moving down a
// chain of processors reuses the blocks its upstream queues released
// instead of making garbage.
const segmentSize = 128

type segment struct {
	items [segmentSize]item
	next  *segment
}

// ring is an unbounded FIFO of items made of linked fixed-size blocks. It
// counts the uninterruptible frames it holds, so an interruption that finds
// none drops everything at once.
type ring struct {
	head, tail *segment
	hi, ti     int // read index in head, write index in tail
	size       int
	keep       int      // uninterruptible frames held
	pushed     uint64   // items ever pushed: the sequence number of the next one
	spare      *segment // a free list of at most maxSpares clean blocks
	spares     int
}

// maxSpares bounds the free blocks a ring keeps for itself.
const maxSpares = 2

// segments holds clean blocks (every item zero) that rings released beyond
// their spares. The garbage collector empties it when it is not used.
var segments = sync.Pool{New: func() any { return new(segment) }}

func (r *ring) len() int { return r.size }

// reserve gives the ring a spare block if it has none, so that its first
// push does not allocate.
func (r *ring) reserve() {
	if r.spare == nil {
		r.spare, r.spares = segments.Get().(*segment), 1
	}
}

func (r *ring) push(it item) {
	if r.tail == nil || r.ti == segmentSize {
		s := r.spare
		if s != nil {
			r.spare, s.next = s.next, nil
			r.spares--
		} else {
			s = segments.Get().(*segment)
		}
		if r.tail == nil {
			r.head, r.hi = s, 0
		} else {
			r.tail.next = s
		}
		r.tail, r.ti = s, 0
	}
	r.tail.items[r.ti] = it
	r.ti++
	r.size++
	r.pushed++
	if it.f.Lane() == frames.LaneUninterruptible {
		r.keep++
	}
}

func (r *ring) pop() (item, bool) {
	if r.size == 0 {
		return item{}, false
	}
	it := r.head.items[r.hi]
	r.head.items[r.hi] = item{}
	r.hi++
	r.size--
	if r.hi == segmentSize || r.size == 0 {
		r.advance()
	}
	if r.keep > 0 && it.f.Lane() == frames.LaneUninterruptible {
		r.keep--
	}
	return it, true
}

// advance moves past a consumed head block and recycles it; pop has
// already zeroed every item in it.
func (r *ring) advance() {
	old := r.head
	if r.size == 0 {
		r.head, r.tail, r.hi, r.ti = nil, nil, 0, 0
	} else {
		r.head, r.hi = old.next, 0
	}
	old.next = nil
	if r.spares < maxSpares {
		old.next, r.spare = r.spare, old
		r.spares++
		return
	}
	segments.Put(old)
}

func (r *ring) peek() (item, bool) {
	if r.size == 0 {
		return item{}, false
	}
	return r.head.items[r.hi], true
}

// each calls fn for every item in order until fn returns false.
func (r *ring) each(fn func(item) bool) {
	i := r.hi
	for s := r.head; s != nil; s = s.next {
		end := segmentSize
		if s == r.tail {
			end = r.ti
		}
		for ; i < end; i++ {
			if !fn(s.items[i]) {
				return
			}
		}
		i = 0
	}
}

// drop empties the ring.
func (r *ring) drop() int {
	n := r.size
	r.head, r.tail, r.hi, r.ti, r.size, r.keep = nil, nil, 0, 0, 0, 0
	return n // pushed stays: sequence numbers keep counting
}

// resetBefore drops the interruptible items pushed before sequence number
// cut, keeping uninterruptible ones and everything pushed since, in order.
// It returns how many it dropped.
func (r *ring) resetBefore(cut uint64) int {
	first := r.pushed - uint64(r.size) // sequence number of the head
	if cut <= first {
		return 0
	}
	if cut >= r.pushed {
		return r.reset()
	}
	before, i := int(cut-first), 0
	return r.filter(func(it item) bool {
		keep := i >= before || keepUninterruptible(it)
		i++
		return keep
	})
}

// filter keeps the items for which keep returns true, in order, and
// returns how many it removed.
func (r *ring) filter(keep func(item) bool) int {
	var kept ring
	kept.spare, kept.spares = r.spare, r.spares
	r.each(func(it item) bool {
		if keep(it) {
			kept.push(it)
		}
		return true
	})
	removed := r.size - kept.size
	kept.pushed = r.pushed
	*r = kept
	return removed
}

// reset drops every interruptible item, keeping uninterruptible ones in
// order, and returns how many it dropped. Without uninterruptible items
// it costs O(1).
func (r *ring) reset() int {
	if r.keep == 0 {
		return r.drop()
	}
	return r.filter(keepUninterruptible)
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
	q.unlockAndNotify()
}

// PushAll appends fs in order as one step: no frame pushed by another
// goroutine lands between them. It never blocks.
func (q *FrameQueue) PushAll(fs []frames.Frame, dir frames.Direction) {
	if len(fs) == 0 {
		return
	}
	q.mu.Lock()
	for _, f := range fs {
		q.r.push(item{f, dir})
	}
	q.unlockAndNotify()
}

// unlockAndNotify records the high-water mark after a push, releases q.mu
// and wakes a waiting reader.
func (q *FrameQueue) unlockAndNotify() {
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
	return q.r.reset()
}

// Clear empties the queue completely, uninterruptible frames included (for
// cancellation). It returns the number of frames dropped.
func (q *FrameQueue) Clear() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.r.drop()
}

// Has reports whether a queued frame satisfies match.
func (q *FrameQueue) Has(match func(frames.Frame) bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	found := false
	q.r.each(func(it item) bool {
		found = match(it.f)
		return !found
	})
	return found
}

func keepUninterruptible(it item) bool { return frames.IsUninterruptible(it.f) }
