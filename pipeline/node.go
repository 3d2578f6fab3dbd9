package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
	"github.com/framewire/framewire/observers"
)

// receiver is anything a node can push to: another node, a pipeline edge,
// or a parallel branch collector.
type receiver interface {
	receive(it item)
}

// endpoint is a push target together with its identity for observers.
type endpoint struct {
	r    receiver
	node observers.Node // nil for edges outside the processors
}

// node runs one processor on its own goroutine. It owns a three-priority
// inbox (Start, system, ordered) and the epoch context that interruptions
// cancel.
type node struct {
	proc Processor
	name string
	rt   *runtime
	log  *zap.Logger

	down, up endpoint

	mu      sync.Mutex
	cuts    []uint64 // per queued interruption: the ordered sequence number when it arrived
	start   ring
	system  ring
	ordered ring
	waiting bool // the loop is parked on notify
	high    int  // the deepest the system and ordered lanes have been together
	warnAt  int  // the depth that next logs a warning (see inboxWarnDepth)
	notify  chan struct{}
	stopped chan struct{}

	// Owned by the node goroutine.
	started   bool
	ctx       context.Context
	cancel    context.CancelFunc
	epoch     context.Context // nil until an ordered frame needs it after Start or an interruption
	endEpoch  context.CancelFunc
	epochJobs []*job
	h         Handle

	// holds counts jobs holding the ordered lane; changed under mu, read
	// without it on the fast path.
	holds atomic.Int32
	// urgent counts queued Start and system frames; changed under mu, read
	// without it on the fast path.
	urgent atomic.Int32
	// batch holds ordered frames taken from the inbox ahead of time, so
	// a busy node takes the lock once per batch. It is the head of the
	// ordered lane: interruptions flush it like the rest.
	batch []item
	bi    int

	// interrupting is set from the start of an interruption until the
	// interruption has been forwarded; deferred holds what cancelled jobs
	// pushed meanwhile.
	interrupting atomic.Bool
	deferMu      sync.Mutex
	deferred     []item

	cancelling atomic.Bool
	unusable   atomic.Bool
	_          [64]byte      // keep drops off the cache lines neighbours read
	drops      atomic.Uint64 // events observers missed, counted here
	_          [64]byte
	localDrops uint64 // drops counted on the node goroutine, not yet published
	jobs       sync.WaitGroup

	// Background work started through outlets, and the outlets attached.
	bgMu     sync.Mutex
	bgLive   map[*background]struct{}
	bgWG     sync.WaitGroup
	bgClosed bool
	outlets  []*Outlet

	// onCancelReceived is set by composites that must notice a Cancel
	// before their goroutine gets to it.
	onCancelReceived func()
}

func newNode(p Processor, rt *runtime) *node {
	n := &node{
		proc:    p,
		rt:      rt,
		notify:  make(chan struct{}, 1),
		stopped: make(chan struct{}),
		bgLive:  map[*background]struct{}{},
		warnAt:  inboxWarnDepth,
	}
	n.name = processorName(p)
	n.log = rt.log.Named(n.name)
	n.ctx, n.cancel = context.WithCancel(rt.ctx)
	n.h.n = n
	// The system lane carries interruptions: its first block is reserved
	// now, so the first interruption of a session does not wait for an
	// allocation at every hop. Audio pipelines keep one anyway.
	n.system.reserve()
	return n
}

func processorName(p Processor) string {
	if nm, ok := p.(Namer); ok {
		return nm.Name()
	}
	t := reflect.TypeOf(p)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	if name == "" {
		name = "Processor"
	}
	return fmt.Sprintf("%s#%d", name, frames.NextID())
}

// highWater returns the deepest the node's inbox has been.
func (n *node) highWater() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.high
}

// Name implements observers.Node.
func (n *node) Name() string { return n.name }

// Processor implements observers.Node.
func (n *node) Processor() any { return n.proc }

// inboxWarnDepth is the inbox depth at which a node first warns that its
// processor is falling behind; it warns again each time the depth doubles.
// Inboxes are unbounded (the system lane must never refuse a frame), so
// this warning and [Task.QueueHighWater] are how a growing one shows.
const inboxWarnDepth = 1024

// receive queues a frame pushed to this node by a neighbour. It never
// blocks. After a Cancel has been handled, everything is dropped.
func (n *node) receive(it item) {
	if n.cancelling.Load() {
		return
	}
	n.mu.Lock()
	switch it.f.Lane() {
	case frames.LaneStart:
		n.start.push(it)
		n.urgent.Add(1)
	case frames.LaneSystem:
		n.system.push(it)
		n.urgent.Add(1)
		if _, ok := it.f.(*frames.Interruption); ok {
			// The interruption flushes what was queued before it arrived,
			// not what arrives while it waits to be processed.
			n.cuts = append(n.cuts, n.ordered.pushed)
		}
	default:
		n.ordered.push(it)
	}
	warn := 0
	if d := n.system.size + n.ordered.size; d > n.high {
		n.high = d
		if d >= n.warnAt {
			warn, n.warnAt = d, 2*n.warnAt
		}
	}
	n.wakeLocked()
	n.mu.Unlock()
	if warn > 0 {
		n.log.Warn("the processor is falling behind: frames are piling up in its inbox", zap.Int("queued", warn))
	}
	if n.onCancelReceived != nil {
		if _, ok := it.f.(*frames.Cancel); ok {
			n.onCancelReceived()
		}
	}
}

// wakeLocked wakes the loop if it is parked; n.mu must be held. The send
// cannot block: the channel is empty whenever the loop is waiting.
func (n *node) wakeLocked() {
	if n.waiting {
		n.waiting = false
		n.notify <- struct{}{}
	}
}

// batchSize is how many ordered frames a node takes from its inbox at once.
const batchSize = 64

// idleSpins is how many times an idle node yields before it parks.
const idleSpins = 3

// take returns the next frame to process: Start first; then, once started,
// system frames, then ordered frames unless a job holds the ordered lane.
func (n *node) take() (item, bool) {
	if n.bi < len(n.batch) && n.urgent.Load() == 0 && n.holds.Load() == 0 {
		return n.nextBatched(), true
	}
	spins := 0
	n.mu.Lock()
	for {
		if it, ok := n.start.pop(); ok {
			n.urgent.Add(-1)
			n.mu.Unlock()
			return it, true
		}
		if n.started {
			if it, ok := n.system.pop(); ok {
				n.urgent.Add(-1)
				n.mu.Unlock()
				return it, true
			}
			if n.holds.Load() == 0 {
				if n.bi == len(n.batch) {
					n.batch, n.bi = n.batch[:0], 0
					for len(n.batch) < batchSize {
						it, ok := n.ordered.pop()
						if !ok {
							break
						}
						n.batch = append(n.batch, it)
					}
				}
				if n.bi < len(n.batch) {
					n.mu.Unlock()
					return n.nextBatched(), true
				}
			}
		}
		if spins < idleSpins {
			// Yield a few times before parking: a busy neighbour usually
			// pushes again within a scheduler slice, and waking a parked
			// goroutine costs more than checking again.
			spins++
			n.mu.Unlock()
			goruntime.Gosched()
			n.mu.Lock()
			continue
		}
		n.waiting = true
		n.mu.Unlock()
		n.publishDrops()
		select {
		case <-n.notify:
		case <-n.stopped:
			return item{}, false
		}
		n.mu.Lock()
	}
}

func (n *node) nextBatched() item {
	it := n.batch[n.bi]
	n.batch[n.bi] = item{}
	n.bi++
	return it
}

// flushBatch drops the batched ordered frames, keeping uninterruptible
// ones when keep is set.
func (n *node) flushBatch(keep bool) {
	kept := n.batch[:0]
	for _, it := range n.batch[n.bi:] {
		if keep && frames.IsUninterruptible(it.f) {
			kept = append(kept, it)
		}
	}
	clear(n.batch[len(kept):])
	n.batch, n.bi = kept, 0
}

// run is the node's loop. A panic in the processor is recovered once per
// panic, not guarded per frame: the loop then reports it and carries on.
func (n *node) run() {
	for !n.runUntilPanic() {
	}
	n.publishDrops()
}

// runUntilPanic processes frames until the node stops (true) or the
// processor panics (false, after reporting the panic).
func (n *node) runUntilPanic() (stopped bool) {
	defer func() {
		if r := recover(); r != nil {
			h := &n.h
			f := h.f
			n.log.Error("processor panicked", zap.Any("panic", r), zap.String("frame", frames.Name(f)),
				zap.ByteString("stack", debug.Stack()))
			if f == nil {
				n.PushError(fmt.Errorf("panic in node runtime: %v", r))
				return
			}
			n.PushError(fmt.Errorf("panic while processing %s: %v", frames.TypeName(f), r))
			n.finish(f, h.dir)
		}
	}()
	for {
		it, ok := n.take()
		if !ok {
			return true
		}
		n.handle(it)
	}
}

func (n *node) handle(it item) {
	f, dir := it.f, it.dir
	switch f.(type) {
	case *frames.Start:
		n.started = true
	case *frames.Interruption:
		n.interrupt()
	case *frames.Cancel:
		n.cancelling.Store(true)
		n.cancel()
	}
	n.rt.hub.processed(n, f, dir)
	if n.unusable.Load() {
		n.push(f, dir, true)
		if _, ok := f.(*frames.Interruption); ok {
			n.pushDeferred()
		}
		return
	}
	ctx := n.ctx
	if f.Lane() == frames.LaneOrdered {
		if n.epoch == nil {
			n.epoch, n.endEpoch = context.WithCancel(n.ctx)
		}
		ctx = n.epoch
	}
	h := &n.h
	h.f, h.dir, h.ctx, h.done = f, dir, ctx, false
	if err := n.proc.ProcessFrame(ctx, h, f, dir); err != nil {
		n.PushError(err)
	}
	n.finish(f, dir)
}

// finish forwards the current frame unless the processor forwarded or
// consumed it, and empties the node after a Cancel.
func (n *node) finish(f frames.Frame, dir frames.Direction) {
	h := &n.h
	if !h.done {
		h.done = true
		n.push(f, dir, true)
	}
	h.f, h.ctx = nil, nil
	if _, ok := f.(*frames.Interruption); ok {
		n.pushDeferred()
	}
	if _, ok := f.(*frames.Cancel); ok {
		n.flushBatch(false)
		n.mu.Lock()
		n.start.drop()
		n.system.drop()
		n.ordered.drop()
		n.cuts = n.cuts[:0]
		n.urgent.Store(0)
		n.mu.Unlock()
	}
}

// interrupt cancels the epoch's work, waits for held jobs (bounded), drops
// queued interruptible frames and ends the epoch; the next ordered frame
// opens a new one, so the interruption's own path allocates nothing. The
// interruption frame being handled is at the head of cuts: only what was
// queued before that frame arrived is flushed.
func (n *node) interrupt() {
	n.interrupting.Store(true)
	if n.endEpoch != nil {
		n.endEpoch()
		n.epoch, n.endEpoch = nil, nil
	}
	if len(n.epochJobs) > 0 {
		deadline := time.NewTimer(n.rt.opts.JobCancelTimeout)
		for _, j := range n.epochJobs {
			select {
			case <-j.done:
			case <-deadline.C:
				n.log.Warn("job ignored its cancellation; releasing the ordered lane without it")
				n.release(j)
			}
		}
		deadline.Stop()
		clear(n.epochJobs)
		n.epochJobs = n.epochJobs[:0]
	}
	n.flushBatch(true)
	n.mu.Lock()
	if len(n.cuts) > 0 {
		n.ordered.resetBefore(n.cuts[0])
		n.cuts = n.cuts[:copy(n.cuts, n.cuts[1:])]
	}
	n.mu.Unlock()
}

// Push implements [Pusher]. It is safe for concurrent use.
func (n *node) Push(f frames.Frame, dir frames.Direction) { n.push(f, dir, false) }

// push sends f on; own says the caller is the node's own goroutine, which
// lets observer bookkeeping skip atomic operations.
func (n *node) push(f frames.Frame, dir frames.Direction, own bool) {
	ep := &n.down
	if dir == frames.Upstream {
		ep = &n.up
	}
	first := framebook.MarkPushed(f.FrameBase())
	if ep.r == nil {
		return
	}
	n.rt.hub.pushed(n, ep.node, f, dir, first, own)
	ep.r.receive(item{f, dir})
}

// countDrops counts k events that full observers missed. On the node's
// own goroutine the count is kept locally and published in batches (and
// whenever the node goes idle), so a backlogged observer costs no atomic
// operation per event.
func (n *node) countDrops(k int, own bool) {
	if !own {
		n.drops.Add(uint64(k))
		return
	}
	n.localDrops += uint64(k)
	if n.localDrops >= 1024 {
		n.publishDrops()
	}
}

// publishDrops moves the locally counted drops to the shared counter.
func (n *node) publishDrops() {
	if n.localDrops > 0 {
		n.drops.Add(n.localDrops)
		n.localDrops = 0
	}
}

// PushError implements [Pusher].
func (n *node) PushError(err error) {
	if err == nil {
		return
	}
	var ef *frames.Error
	if !errors.As(err, &ef) {
		ef = &frames.Error{Err: err, Processor: n.name}
		ef.Category = frames.CategoryOf(err)
	}
	if ef.Processor == "" {
		ef.Processor = n.name
	}
	if ef.Permanent() && ef.Processor == n.name {
		n.unusable.Store(true)
	}
	n.log.Warn("processor error", zap.Error(err))
	n.Push(ef, frames.Upstream)
}

// job is slow work started by a processor.
type job struct {
	done     chan struct{}
	hold     bool
	released atomic.Bool
}

func (n *node) startJob(ctx context.Context, hold, interruptible bool, fn JobFunc) {
	j := &job{done: make(chan struct{}), hold: hold}
	if hold {
		n.mu.Lock()
		n.holds.Add(1)
		n.mu.Unlock()
	}
	if interruptible {
		// Forget finished jobs so the list stays short.
		live := n.epochJobs[:0]
		for _, old := range n.epochJobs {
			select {
			case <-old.done:
			default:
				live = append(live, old)
			}
		}
		clear(n.epochJobs[len(live):])
		n.epochJobs = append(live, j)
	}
	n.jobs.Add(1)
	go func() {
		defer n.jobs.Done()
		defer close(j.done)
		defer n.release(j)
		if err := n.runJob(ctx, fn, &jobPusher{n: n, ctx: ctx}); err != nil && ctx.Err() == nil {
			n.PushError(err)
		}
	}()
}

func (n *node) runJob(ctx context.Context, fn JobFunc, out Pusher) (err error) {
	defer func() {
		if r := recover(); r != nil {
			n.log.Error("job panicked", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("panic in job: %v", r)
		}
	}()
	return fn(ctx, out)
}

// jobPusher is the Pusher a job gets. While its node handles an
// interruption, frames a cancelled job pushes (typically the closing frame
// of a response) are held back and pushed right after the interruption, so
// the next processor does not flush them as stale.
type jobPusher struct {
	n   *node
	ctx context.Context
}

// Push implements [Pusher].
func (p *jobPusher) Push(f frames.Frame, dir frames.Direction) {
	n := p.n
	if p.ctx.Err() != nil && n.interrupting.Load() {
		n.deferMu.Lock()
		if n.interrupting.Load() {
			n.deferred = append(n.deferred, item{f, dir})
			n.deferMu.Unlock()
			return
		}
		n.deferMu.Unlock()
	}
	n.Push(f, dir)
}

// PushError implements [Pusher].
func (p *jobPusher) PushError(err error) { p.n.PushError(err) }

// pushDeferred ends the interruption window: it pushes what cancelled jobs
// pushed during it, in order, after the interruption itself.
func (n *node) pushDeferred() {
	n.deferMu.Lock()
	held := n.deferred
	n.deferred = nil
	n.interrupting.Store(false)
	n.deferMu.Unlock()
	for _, it := range held {
		n.Push(it.f, it.dir)
	}
}

// release gives back a job's hold on the ordered lane, once.
func (n *node) release(j *job) {
	if !j.hold || !j.released.CompareAndSwap(false, true) {
		return
	}
	n.mu.Lock()
	n.holds.Add(-1)
	n.wakeLocked()
	n.mu.Unlock()
}

// stop ends the loop, cancels the node's work and detaches its outlets.
// It does not wait.
func (n *node) stop() {
	n.cancel()
	n.closeBackground()
	select {
	case <-n.stopped:
	default:
		close(n.stopped)
	}
}

// Handle is what a processor uses while it handles a frame: it pushes
// frames, forwards or consumes the current one, and starts jobs. Push and
// PushError may be called from any goroutine; the other methods only
// during ProcessFrame.
type Handle struct {
	n    *node
	f    frames.Frame
	dir  frames.Direction
	ctx  context.Context
	done bool
}

// Push sends f to the next processor in direction dir.
func (h *Handle) Push(f frames.Frame, dir frames.Direction) { h.n.Push(f, dir) }

// PushError sends an upstream [frames.Error] for err.
func (h *Handle) PushError(err error) { h.n.PushError(err) }

// Pusher returns the node's [Pusher], to keep beyond this call.
func (h *Handle) Pusher() Pusher { return h.n }

// Forward pushes the current frame on in its direction now, rather than
// when ProcessFrame returns. Use it to forward Start before doing start work
// that pushes frames of its own. It is a no-op the second time.
func (h *Handle) Forward() {
	if !h.done && h.f != nil {
		h.done = true
		h.n.push(h.f, h.dir, true)
	}
}

// Consume keeps the current frame from being forwarded.
func (h *Handle) Consume() { h.done = true }

// Go starts a job that holds the ordered lane until it returns: ordered
// frames wait behind it while system frames keep flowing. An interruption
// cancels the job's context (unless the current frame is uninterruptible)
// and waits for it, up to the task's job-cancel timeout.
func (h *Handle) Go(fn JobFunc) {
	h.n.startJob(h.ctx, true, h.interruptible(), fn)
}

// GoBackground starts a job that does not hold the ordered lane. Its
// context is cancelled like Go's, but an interruption does not wait for it.
func (h *Handle) GoBackground(fn JobFunc) {
	h.n.startJob(h.ctx, false, false, fn)
}

func (h *Handle) interruptible() bool {
	return h.f != nil && h.f.Lane() == frames.LaneOrdered
}

// Interrupt starts an interruption from this processor: it pushes an
// [frames.Interruption] both downstream and upstream (a broadcast pair),
// and the caller carries on afterwards. The caller's own queue is left
// alone: what waits there came from upstream before the decision to
// interrupt (a final transcription, say) and is not stale bot output.
func (h *Handle) Interrupt() {
	Broadcast(h.n, newInterruption)
}

func newInterruption() *frames.Interruption { return &frames.Interruption{} }

// Logger returns the processor's logger.
func (h *Handle) Logger() *zap.Logger { return h.n.log }

// Name returns the processor's display name.
func (h *Handle) Name() string { return h.n.name }

// Clock returns the task clock.
func (h *Handle) Clock() Clock { return h.n.rt.clock }
