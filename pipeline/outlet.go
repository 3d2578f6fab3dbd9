package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
)

// ErrTaskEnded is returned by [Outlet.Go] once the task the outlet was
// attached to has ended.
var ErrTaskEnded = errors.New("pipeline: the task has ended")

// MaxPending bounds what an [Outlet] keeps before it is attached: frames
// pushed and background work started before the task sets the processor
// up. Past it the oldest frames are dropped (and counted in the log when
// the outlet is attached); background work past it is refused.
const MaxPending = 1024

// Outlet is a processor's way out of its node from any goroutine: it
// pushes frames and runs background work that lives as long as the task.
// It is valid from the moment the processor is constructed, so a processor
// can offer methods such as Send or Say that work before, during and after
// the task runs:
//
//   - before the task has set the processor up, pushed frames wait in the
//     outlet (up to [MaxPending]) and background work waits to start; both
//     go in, in order, when Setup attaches the outlet;
//   - while the task runs, Push is the node's own push (no lock, no
//     allocation) and Go starts a goroutine the task owns;
//   - once the task has ended, pushed frames are dropped and Go returns
//     [ErrTaskEnded].
//
// The zero Outlet is ready to use. A processor keeps one as a field and
// attaches it in Setup with [Setup.Attach]. An Outlet is safe for
// concurrent use; it must not be copied after first use.
type Outlet struct {
	n atomic.Pointer[node] // set while attached to a running task

	mu      sync.Mutex
	ended   bool
	pending []item
	dropped int
	work    []background
}

var _ Pusher = (*Outlet)(nil)

// Push implements [Pusher]: it sends f to the next processor in direction
// dir. The caller gives up f.
func (o *Outlet) Push(f frames.Frame, dir frames.Direction) {
	if n := o.n.Load(); n != nil {
		n.Push(f, dir)
		return
	}
	o.mu.Lock()
	if n := o.n.Load(); n != nil { // attached meanwhile
		o.mu.Unlock()
		n.Push(f, dir)
		return
	}
	if !o.ended {
		if len(o.pending) == MaxPending {
			o.pending = o.pending[:copy(o.pending, o.pending[1:])]
			o.dropped++
		}
		o.pending = append(o.pending, item{f, dir})
	}
	o.mu.Unlock()
}

// PushError implements [Pusher]: it sends an upstream [frames.Error] naming
// the processor. Before the outlet is attached the error waits like any
// frame; its processor name is filled in when it goes in.
func (o *Outlet) PushError(err error) {
	if err == nil {
		return
	}
	if n := o.n.Load(); n != nil {
		n.PushError(err)
		return
	}
	o.Push(&frames.Error{Err: err}, frames.Upstream)
}

// Go runs fn on a goroutine of its own that the task owns: ctx ends when
// the task is cancelled and when it tears down after End; the task waits
// for fn (bounded by its cancel timeout) and names it in the log, by name,
// if it does not return. An error fn returns while ctx is live, or a
// panic, becomes an upstream [frames.Error]. Frames go out through the
// outlet.
//
// Work started before the outlet is attached starts when it is; after the
// task has ended Go starts nothing and returns [ErrTaskEnded].
func (o *Outlet) Go(name string, fn func(ctx context.Context) error) error {
	if n := o.n.Load(); n != nil {
		if n.goBackground(name, fn) {
			return nil
		}
		return ErrTaskEnded
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := o.n.Load(); n != nil {
		if n.goBackground(name, fn) {
			return nil
		}
		return ErrTaskEnded
	}
	if o.ended {
		return ErrTaskEnded
	}
	if len(o.work) == MaxPending {
		return fmt.Errorf("pipeline: %d background jobs already wait for the task to start", MaxPending)
	}
	o.work = append(o.work, background{name: name, fn: fn})
	return nil
}

// attach binds the outlet to n and lets in what waited.
func (o *Outlet) attach(n *node) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = false
	if o.dropped > 0 {
		n.log.Warn("frames pushed before the task started were dropped", zap.Int("dropped", o.dropped),
			zap.Int("kept", MaxPending))
		o.dropped = 0
	}
	for i, it := range o.pending {
		if e, ok := it.f.(*frames.Error); ok && e.Processor == "" && e.Err != nil {
			n.PushError(e.Err)
		} else {
			n.Push(it.f, it.dir)
		}
		o.pending[i] = item{}
	}
	o.pending = o.pending[:0]
	for i, w := range o.work {
		n.goBackground(w.name, w.fn)
		o.work[i] = background{}
	}
	o.work = o.work[:0]
	o.n.Store(n)
}

// detach ends the outlet's life with its task.
func (o *Outlet) detach() {
	o.mu.Lock()
	o.n.Store(nil)
	o.ended = true
	clear(o.pending)
	o.pending = o.pending[:0]
	o.mu.Unlock()
}

// background is one piece of work started through an [Outlet].
type background struct {
	name string
	fn   func(ctx context.Context) error
	done chan struct{}
}

// goBackground starts fn under the node's context unless the node has
// stopped; it reports whether it started.
func (n *node) goBackground(name string, fn func(ctx context.Context) error) bool {
	n.bgMu.Lock()
	if n.bgClosed {
		n.bgMu.Unlock()
		return false
	}
	b := &background{name: name, done: make(chan struct{})}
	n.bgLive[b] = struct{}{}
	n.bgWG.Add(1)
	n.bgMu.Unlock()
	go func() {
		defer n.bgWG.Done()
		defer func() {
			n.bgMu.Lock()
			delete(n.bgLive, b)
			n.bgMu.Unlock()
		}()
		if err := n.runBackground(name, fn); err != nil && n.ctx.Err() == nil {
			n.PushError(err)
		}
	}()
	return true
}

func (n *node) runBackground(name string, fn func(ctx context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			n.log.Error("background work panicked", zap.String("work", name), zap.Any("panic", r),
				zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("panic in background work %q: %v", name, r)
		}
	}()
	return fn(n.ctx)
}

// closeBackground refuses new background work and detaches the node's
// outlets; the context of running work has been cancelled by then.
func (n *node) closeBackground() {
	n.bgMu.Lock()
	n.bgClosed = true
	outlets := n.outlets
	n.outlets = nil
	n.bgMu.Unlock()
	for _, o := range outlets {
		o.detach()
	}
}

// stuckBackground names the node's background work that is still running.
func (n *node) stuckBackground() []string {
	n.bgMu.Lock()
	defer n.bgMu.Unlock()
	var names []string
	for b := range n.bgLive {
		names = append(names, n.name+"/"+b.name)
	}
	return names
}

// Attach binds o to the processor's node for the life of the task: what
// waited in o goes in, in order, and o's pushes and background work belong
// to this task from now on. Call it from Setup.
func (s Setup) Attach(o *Outlet) {
	if s.n == nil {
		panic("pipeline: Setup.Attach called on a Setup the task did not make")
	}
	s.n.bgMu.Lock()
	s.n.outlets = append(s.n.outlets, o)
	s.n.bgMu.Unlock()
	o.attach(s.n)
}
