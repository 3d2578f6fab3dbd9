package pipeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
)

// UnusablePolicy says what a task does when a processor becomes unusable
// (a failed setup or a permanent error).
type UnusablePolicy uint8

const (
	// ContinueWhenUnusable keeps the pipeline running; the processor
	// forwards frames untouched.
	ContinueWhenUnusable UnusablePolicy = iota
	// EndWhenUnusable ends the task gracefully.
	EndWhenUnusable
	// CancelWhenUnusable cancels the task.
	CancelWhenUnusable
)

// TaskOptions configure a [Task]. The zero value is ready to use: every
// zero field takes the default given in its comment.
type TaskOptions struct {
	// Logger receives the runtime's logs. Default: zap.NewNop().
	Logger *zap.Logger
	// Observers watch every hop from the start.
	Observers []observers.Observer
	// ObserverBuffer is each observer's buffer size in events; when it is
	// full the oldest event is dropped and counted. Default: 4096.
	ObserverBuffer int

	// SetupTimeout bounds processor setup. Default: 20s.
	SetupTimeout time.Duration
	// StartTimeout bounds the wait for Start to reach the end. Default: 20s.
	StartTimeout time.Duration
	// CancelTimeout bounds the wait for Cancel to reach the end, and the
	// cleanup of processors. Default: 20s.
	CancelTimeout time.Duration
	// EndTimeout bounds the wait for End (or Stop) to reach the end;
	// past it the task cancels, so a processor that holds the ordered lane
	// forever cannot keep the task alive. Default: 1m; negative waits
	// forever. Cancel always preempts it.
	EndTimeout time.Duration
	// JobCancelTimeout bounds how long an interruption waits for a
	// cancelled job. Default: 1s.
	JobCancelTimeout time.Duration
	// DrainTimeout bounds how long the task waits for observers to handle
	// their buffered events when it finishes; what they still hold then is
	// discarded and counted in ObserverDrops. Default: 2s.
	DrainTimeout time.Duration

	// IdleTimeout fires the idle event when no idle-activity frame has been
	// pushed anywhere for that long. Default: 5m; negative disables it.
	IdleTimeout time.Duration
	// IsActivity says which frames count as activity. Default: BotSpeaking
	// and UserSpeaking.
	IsActivity func(frames.Frame) bool
	// KeepRunningWhenIdle stops the idle timeout from cancelling the task.
	KeepRunningWhenIdle bool

	// Heartbeats turns on periodic heartbeat frames.
	Heartbeats bool
	// HeartbeatPeriod is the interval between heartbeats. Default: 1s.
	HeartbeatPeriod time.Duration
	// HeartbeatMonitor fires the heartbeat-timeout event when no heartbeat
	// has come back for that long. Default: 10s.
	HeartbeatMonitor time.Duration

	// AudioInSampleRate is put into Start. Default: 16000.
	AudioInSampleRate int
	// AudioOutSampleRate is put into Start. Default: 24000.
	AudioOutSampleRate int
	// EnableMetrics and EnableUsageMetrics are put into Start.
	EnableMetrics, EnableUsageMetrics bool

	// Unusable is the unusable-processor policy. Default: continue.
	Unusable UnusablePolicy
}

func (o TaskOptions) withDefaults() TaskOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.ObserverBuffer <= 0 {
		o.ObserverBuffer = 4096
	}
	def(&o.SetupTimeout, 20*time.Second)
	def(&o.StartTimeout, 20*time.Second)
	def(&o.CancelTimeout, 20*time.Second)
	def(&o.EndTimeout, time.Minute)
	def(&o.JobCancelTimeout, time.Second)
	def(&o.DrainTimeout, 2*time.Second)
	def(&o.IdleTimeout, 5*time.Minute)
	def(&o.HeartbeatPeriod, time.Second)
	def(&o.HeartbeatMonitor, 10*time.Second)
	if o.IsActivity == nil {
		o.IsActivity = func(f frames.Frame) bool {
			switch f.(type) {
			case *frames.BotSpeaking, *frames.UserSpeaking:
				return true
			}
			return false
		}
	}
	if o.AudioInSampleRate == 0 {
		o.AudioInSampleRate = 16000
	}
	if o.AudioOutSampleRate == 0 {
		o.AudioOutSampleRate = 24000
	}
	return o
}

// runtime is what the nodes of one task share.
type runtime struct {
	ctx   context.Context
	log   *zap.Logger
	clock *clock
	hub   *hub
	opts  TaskOptions
}

// ErrStartTimeout is returned by [Task.Run] when Start did not reach the
// end of the pipeline in time.
var ErrStartTimeout = errors.New("pipeline: start frame did not reach the sink in time")

// ErrSetupTimeout is returned by [Task.Run] when processor setup took too long.
var ErrSetupTimeout = errors.New("pipeline: processor setup timed out")

// Task runs a pipeline: it sets up the processors, sends Start and waits
// for it at the end, then feeds queued frames in until End, Stop or Cancel
// has gone all the way through, and cleans up. A Task runs once.
//
// Frames from outside enter through one ordered ingress ([Task.QueueFrame]),
// so their order is kept whoever queues them. Cancel never waits behind
// queued frames or a stuck End: the control loop selects on it.
type Task struct {
	opts TaskOptions
	root Processor
	rt   *runtime
	hub  *hub

	ingress    FrameQueue
	requests   FrameQueue // frames that left the pipeline upstream or bounced at the sink
	reached    chan frames.Frame
	cancelCh   chan string
	cancelOnce sync.Once
	ran        atomic.Bool
	finished   chan struct{}

	mu         sync.Mutex
	started    []func()
	finishedFn []func(reason string)
	errorFn    []func(*frames.Error)
	idleFn     []func()
	hbTimeout  []func()
	downFn     atomic.Pointer[[]reachHook]
	upFn       atomic.Pointer[[]reachHook]

	flushes       map[uint64]chan struct{} // pending Flush probes by token
	lastHeartbeat atomic.Int64
	nodesMu       sync.Mutex
	nodes         []*node  // every node, branches included
	first, last   endpoint // the ends of the top-level chain, or the edges when it is empty
	unusableSeen  map[string]bool
}

// reachHook is a hook of [OnDownstream] or [OnUpstream], typed by its
// wrapper.
type reachHook func(frames.Frame)

// NewTask returns a task that will run p with opts.
func NewTask(p Processor, opts TaskOptions) *Task {
	opts = opts.withDefaults()
	c := &clock{start: time.Now()}
	t := &Task{
		opts:         opts,
		root:         p,
		reached:      make(chan frames.Frame, 16),
		cancelCh:     make(chan string, 1),
		finished:     make(chan struct{}),
		unusableSeen: map[string]bool{},
	}
	t.hub = newHub(c, opts.Logger, opts.ObserverBuffer, opts.IsActivity)
	for _, o := range opts.Observers {
		t.hub.add(o)
	}
	t.rt = &runtime{log: opts.Logger, clock: c, hub: t.hub, opts: opts}
	return t
}

// OnStarted registers fn to run when Start has reached the end of the
// pipeline. Handlers run in registration order on the task's goroutine.
func (t *Task) OnStarted(fn func()) { addHandler(t, &t.started, fn) }

// OnFinished registers fn to run when the task has finished.
func (t *Task) OnFinished(fn func(reason string)) { addHandler(t, &t.finishedFn, fn) }

// OnError registers fn for error frames that reach the head of the pipeline.
func (t *Task) OnError(fn func(*frames.Error)) { addHandler(t, &t.errorFn, fn) }

// OnIdleTimeout registers fn for the idle timeout.
func (t *Task) OnIdleTimeout(fn func()) { addHandler(t, &t.idleFn, fn) }

// OnHeartbeatTimeout registers fn for the heartbeat timeout.
func (t *Task) OnHeartbeatTimeout(fn func()) { addHandler(t, &t.hbTimeout, fn) }

func addHandler[F any](t *Task, list *[]F, fn F) {
	t.mu.Lock()
	*list = append(*list, fn)
	t.mu.Unlock()
}

// OnDownstream registers fn for every frame of type T that leaves the end
// of the pipeline (T = [frames.Frame] sees them all). fn runs inline on the
// goroutine of the last processor, so it must be fast.
func OnDownstream[T frames.Frame](t *Task, fn func(T)) {
	addHook(&t.mu, &t.downFn, typed(fn))
}

// OnUpstream registers fn for every frame of type T that leaves the head of
// the pipeline upstream. fn runs inline, so it must be fast.
func OnUpstream[T frames.Frame](t *Task, fn func(T)) {
	addHook(&t.mu, &t.upFn, typed(fn))
}

func typed[T frames.Frame](fn func(T)) func(frames.Frame) {
	return func(f frames.Frame) {
		if v, ok := f.(T); ok {
			fn(v)
		}
	}
}

func addHook(mu *sync.Mutex, p *atomic.Pointer[[]reachHook], fn reachHook) {
	mu.Lock()
	defer mu.Unlock()
	var old []reachHook
	if cur := p.Load(); cur != nil {
		old = *cur
	}
	next := append(append([]reachHook(nil), old...), fn)
	p.Store(&next)
}

// AddObserver adds an observer; it may be called at any time.
func (t *Task) AddObserver(o observers.Observer) { t.hub.add(o) }

// ObserverDrops returns how many events observers lost to full buffers.
func (t *Task) ObserverDrops() uint64 {
	t.nodesMu.Lock()
	nodes := t.nodes
	t.nodesMu.Unlock()
	return t.hub.dropped(nodes)
}

// QueueHighWater returns the deepest any processor's inbox has been, in
// frames: how far the slowest processor fell behind. Queues are unbounded
// (see [FrameQueue]), so this is what tells an operator that one is
// growing. It is 0 before the task runs.
func (t *Task) QueueHighWater() int {
	t.nodesMu.Lock()
	nodes := t.nodes
	t.nodesMu.Unlock()
	high := 0
	for _, n := range nodes {
		high = max(high, n.highWater())
	}
	return high
}

// QueueFrame queues f to enter the pipeline downstream. It never blocks.
func (t *Task) QueueFrame(f frames.Frame) { t.ingress.Push(f, frames.Downstream) }

// QueueFrames queues fs in order as one step: a frame queued meanwhile,
// such as the End that an EndTask from inside the pipeline asks for, comes
// before or after all of them.
func (t *Task) QueueFrames(fs ...frames.Frame) { t.ingress.PushAll(fs, frames.Downstream) }

// EndWhenDone queues an End: the task ends gracefully once everything
// queued before it has gone through the pipeline.
func (t *Task) EndWhenDone() { t.QueueFrame(&frames.End{}) }

// Cancel stops the task at once. It never blocks and is safe to call from
// event handlers and more than once.
func (t *Task) Cancel(reason string) {
	t.cancelOnce.Do(func() { t.cancelCh <- reason })
}

// Done is closed when the task has finished.
func (t *Task) Done() <-chan struct{} { return t.finished }

// Clock returns the task clock.
func (t *Task) Clock() Clock { return t.rt.clock }

// handlersOf copies a handler list under the task's lock, so handlers run
// without it and may register more handlers or cancel the task.
func handlersOf[F any](t *Task, list *[]F) []F {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]F(nil), (*list)...)
}

// fire runs handlers in registration order.
func fire(handlers []func()) {
	for _, fn := range handlers {
		fn()
	}
}

// sinkEdge receives what leaves the pipeline downstream.
type sinkEdge struct{ t *Task }

func (s sinkEdge) receive(it item) {
	t := s.t
	if hooks := t.downFn.Load(); hooks != nil {
		for _, h := range *hooks {
			h(it.f)
		}
	}
	switch f := it.f.(type) {
	case *frames.Start, *frames.End, *frames.Stop, *frames.Cancel:
		t.reached <- f
	case *frames.Heartbeat:
		t.lastHeartbeat.Store(int64(t.rt.clock.Now()))
	case *frames.EndTask, *frames.StopTask, *frames.CancelTask, *frames.InterruptionTask:
		t.requests.Push(f, frames.Upstream)
	case *frames.Flush:
		t.last.r.receive(item{f, frames.Upstream})
	}
}

// sourceEdge receives what leaves the pipeline upstream.
type sourceEdge struct{ t *Task }

func (s sourceEdge) receive(it item) {
	t := s.t
	if hooks := t.upFn.Load(); hooks != nil {
		for _, h := range *hooks {
			h(it.f)
		}
	}
	switch f := it.f.(type) {
	case *frames.EndTask, *frames.StopTask, *frames.CancelTask, *frames.InterruptionTask, *frames.Error:
		t.requests.Push(it.f, frames.Upstream)
	case *frames.Flush:
		t.mu.Lock()
		ch := t.flushes[f.Token]
		delete(t.flushes, f.Token)
		t.mu.Unlock()
		if ch != nil {
			close(ch)
		}
	}
}

// Flush waits until every frame queued before the call has gone through
// the whole pipeline: it sends a probe down to the end and back up to the
// head. It returns ctx's error if ctx ends first, for example because a
// processor holds the ordered lane.
func (t *Task) Flush(ctx context.Context) error {
	token := frames.NextID()
	ch := make(chan struct{})
	t.mu.Lock()
	if t.flushes == nil {
		t.flushes = map[uint64]chan struct{}{}
	}
	t.flushes[token] = ch
	t.mu.Unlock()
	t.QueueFrame(&frames.Flush{Token: token})
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		delete(t.flushes, token)
		t.mu.Unlock()
		return ctx.Err()
	case <-t.finished:
		return errors.New("pipeline: task finished before the flush completed")
	}
}
