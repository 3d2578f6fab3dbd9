package uiagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/errorid"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// Work is the body of a task-group worker. It reports progress with
// update (any JSON-encodable value, sent verbatim to the client, for
// example map[string]string{"text": "searching…"}) and returns its
// response. A nil error completes the worker ("completed"); an error made
// with [Failed] ends it "failed" with the given response; any other error
// (a panic too) ends it "error" with {"error": [WorkerErrorText](id)}:
// the error itself is logged with that id, never sent, as its text may
// hold what the client must not see. ctx ends when the group is
// cancelled (by the user, a timeout, another worker's error or the end of
// the pipeline): return promptly then; what a cancelled worker returns is
// not sent.
type Work func(ctx context.Context, update func(data any)) (response any, err error)

// Worker is one named peer of a task group.
type Worker struct {
	// Name identifies the worker on the client's card; unique in a group.
	Name string
	// Work does the job.
	Work Work
}

// failure is the error made by Failed.
type failure struct{ response any }

func (f *failure) Error() string { return "uiagent: worker failed" }

// Failed returns the error a [Work] returns to end with status "failed"
// and response: the worker ran but could not do its job.
func Failed(response any) error { return &failure{response: response} }

// FailedResponse returns the response of an error made by [Failed] (found
// with errors.As, so a wrapped one counts) and true, or nil and false for
// any other error. It lets code that carries a Work's outcome elsewhere,
// such as a worker served over a bus, keep the "failed" status and its
// response.
func FailedResponse(err error) (response any, ok bool) {
	var f *failure
	if !errors.As(err, &f) {
		return nil, false
	}
	return f.response, true
}

// GroupOptions configure one task group.
type GroupOptions struct {
	// Label is shown on the client's card; empty sends none.
	Label string
	// NotCancellable refuses the client's cancel requests (groups are
	// cancellable by default, as in Pipecat). The server can always
	// cancel.
	NotCancellable bool
	// Timeout, when positive, cancels the group if it is still running
	// after this long.
	Timeout time.Duration
	// KeepOnError lets the other workers run on when one ends with an
	// error or failure. By default the group is then cancelled.
	KeepOnError bool
	// OnUpdate is called for each update forwarded to the client.
	OnUpdate func(worker string, data json.RawMessage)
	// OnCompleted is called for each worker's completion, the synthesized
	// cancelled ones included, after it was sent.
	OnCompleted func(Completion)
	// OnDone is called once when the group is over, after group_completed.
	OnDone func(g *Group)
}

// Completion is the end of one worker, as sent to the client.
type Completion struct {
	Worker string
	Status wire.TaskStatus
	// Response is the worker's encoded response; nil when there is none
	// (always for cancelled workers).
	Response json.RawMessage
	// Err is the worker's error, for statuses "failed" and "error": for
	// the server's own use. Its text is not in Response, and must not be
	// shown to the client or the model.
	Err error
}

// WorkerErrorText is the error a worker that ended with an error (status
// "error") reports in its response, {"error": WorkerErrorText(id)}: id is
// the error id of the log line that holds the error itself.
func WorkerErrorText(id string) string { return "the worker ran into a problem (error id " + id + ")" }

// TaskGroupsOptions configure [TaskGroups]. The zero value is ready to use.
type TaskGroupsOptions struct {
	// Name is the processor's display name. Default: "TaskGroups#<id>".
	Name string
	// Logger receives the logs. Default: the task's logger.
	Logger *zap.Logger
	// MaxGroups bounds the groups running at once: Start refuses more
	// with [ErrTooManyGroups]. 0 means [DefaultMaxGroups]; negative means
	// no limit.
	MaxGroups int
	// MaxWorkers bounds the workers running at once, across groups, and
	// so the workers of one group: Start refuses a group that would pass
	// it with [ErrTooManyWorkers]. A worker counts until its Work returns,
	// even after its group was cancelled. 0 means [DefaultMaxWorkers];
	// negative means no limit.
	MaxWorkers int
}

// Default limits of [TaskGroups]: enough for an agent's research
// fan-outs, small enough that a client asking for groups without end
// cannot exhaust the process.
const (
	DefaultMaxGroups  = 16
	DefaultMaxWorkers = 64
)

// Errors of [TaskGroups.Start] when a limit is reached; the group is not
// started and nothing is sent for it. Test with errors.Is.
var (
	ErrTooManyGroups  = errors.New("uiagent: too many task groups running")
	ErrTooManyWorkers = errors.New("uiagent: too many task-group workers running")
)

// TaskGroups runs task groups (ui-agent.md §4): one dispatch to named
// workers that share an id, whose lifecycle the client shows as a card.
// Each group sends group_started, the workers' updates, one completion per
// worker and group_completed exactly once, as rtvi.UITaskFrames that the
// RTVI observer words for each client (ui-task for RTVI 1.3.0,
// ui-job-group for later clients). Cancelling a group synthesizes a
// "cancelled" completion for every worker still running, then
// group_completed; anything a worker sends afterwards is dropped. Nothing
// of this touches the LLM context.
//
// An [Agent] has one ([Agent.Tasks]). On its own, TaskGroups is an
// LLM-free processor: put it downstream of the rtvi.Processor, which
// gives it the client's cancel requests (honoured for cancellable groups
// only) and the pipeline's End (which cancels what is still running).
type TaskGroups struct {
	once   sync.Once
	opts   TaskGroupsOptions
	name   string
	log    atomic.Pointer[zap.Logger]
	clog   atomic.Pointer[zap.Logger] // log, sampled: lines a client can cause
	ownLog bool                       // the logger came from the options
	out    *pipeline.Outlet           // own, or the agent's
	own    pipeline.Outlet
	now    func() time.Time

	// mu guards the groups. It is needed: they are shared by the node
	// (cancel requests, End), the workers (updates, completions), the
	// timeout timers and the callers of Start and Cancel.
	mu      sync.Mutex
	groups  map[string]*Group
	workers int // workers started and not yet returned
	closed  bool

	maxGroups, maxWorkers int // in force; math.MaxInt for none
}

// NewTaskGroups returns task groups with o. The zero TaskGroups works
// too.
func NewTaskGroups(o TaskGroupsOptions) *TaskGroups {
	tg := &TaskGroups{opts: o}
	tg.ensure()
	return tg
}

// newTaskGroups returns task groups that push through out (an agent's).
func newTaskGroups(o TaskGroupsOptions, out *pipeline.Outlet) *TaskGroups {
	tg := &TaskGroups{opts: o, out: out}
	tg.ensure()
	return tg
}

// ensure sets the groups up on first use.
func (tg *TaskGroups) ensure() { tg.once.Do(tg.init) }

func (tg *TaskGroups) init() {
	tg.name = tg.opts.Name
	if tg.name == "" {
		tg.name = fmt.Sprintf("TaskGroups#%d", frames.NextID())
	}
	if tg.out == nil {
		tg.out = &tg.own
	}
	tg.now = time.Now
	tg.groups = map[string]*Group{}
	tg.maxGroups = limit(tg.opts.MaxGroups, DefaultMaxGroups)
	tg.maxWorkers = limit(tg.opts.MaxWorkers, DefaultMaxWorkers)
	log := tg.opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	tg.setLogger(log)
	tg.ownLog = tg.opts.Logger != nil
}

func (tg *TaskGroups) setLogger(l *zap.Logger) {
	tg.log.Store(l)
	tg.clog.Store(sampled(l))
}

// limit returns the limit in force for an option: def for 0, none
// (math.MaxInt) for a negative value.
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return math.MaxInt
	}
	return v
}

// Name implements pipeline.Namer.
func (tg *TaskGroups) Name() string { tg.ensure(); return tg.name }

// Setup implements pipeline.Setupper: it attaches the outlet the
// envelopes go out through and the workers run on, as the task's
// background work.
func (tg *TaskGroups) Setup(_ context.Context, s pipeline.Setup) error {
	tg.ensure()
	s.Attach(tg.out)
	if s.Logger != nil && !tg.ownLog {
		tg.setLogger(s.Logger)
	}
	return nil
}

// ProcessFrame implements pipeline.Processor: the client's cancel requests
// (forwarded, so other owners see them too) and End, which cancels the
// groups still running before it passes.
func (tg *TaskGroups) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	tg.ensure()
	switch f := f.(type) {
	case *rtvi.UICancelTaskFrame:
		tg.HandleCancel(f)
	case *frames.End:
		tg.cancelAll("the session ended")
	}
	return nil
}

// Cleanup implements pipeline.Cleaner: it cancels the groups still
// running, without sending anything (the session is over). Their workers
// are the task's background work, which the task waits for.
func (tg *TaskGroups) Cleanup(context.Context) error {
	tg.ensure()
	tg.mu.Lock()
	tg.closed = true
	var closed []*Group
	for _, g := range tg.groups {
		g.closeLocked("the pipeline stopped", false)
		closed = append(closed, g)
	}
	tg.mu.Unlock()
	for _, g := range closed {
		g.drain()
	}
	return nil
}

// Group is one running (or finished) task group.
type Group struct {
	tg          *TaskGroups
	id          string
	workers     []string
	opts        GroupOptions
	cancels     []context.CancelFunc // guarded by tg.mu: the running workers'
	done        chan struct{}
	timer       *time.Timer
	finished    map[string]bool // guarded by tg.mu
	completions []Completion    // guarded by tg.mu
	over        bool            // guarded by tg.mu
	reason      string          // guarded by tg.mu
	hooks       []func()        // guarded by tg.mu: hooks waiting to run
	draining    bool            // guarded by tg.mu: a goroutine runs hooks
}

// ID returns the group's id (job_id / task_id on the wire).
func (g *Group) ID() string { return g.id }

// Workers returns the workers' names, in dispatch order.
func (g *Group) Workers() []string { return append([]string(nil), g.workers...) }

// Done is closed when the group is over: group_completed was sent and
// the group's hooks have run.
func (g *Group) Done() <-chan struct{} { return g.done }

// Completions returns the completions sent so far, in order.
func (g *Group) Completions() []Completion {
	g.tg.mu.Lock()
	defer g.tg.mu.Unlock()
	return append([]Completion(nil), g.completions...)
}

// CancelReason returns why the group was cancelled, or "" if it was not.
func (g *Group) CancelReason() string {
	g.tg.mu.Lock()
	defer g.tg.mu.Unlock()
	return g.reason
}

// Wait waits until the group is over and returns its completions, in the
// order they were sent, or ctx's error.
func (g *Group) Wait(ctx context.Context) ([]Completion, error) {
	select {
	case <-g.done:
		return g.Completions(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Cancel cancels the group from the server side (never refused) and
// reports whether it was still running. reason is for the logs; empty
// means "cancelled".
func (g *Group) Cancel(reason string) bool {
	if reason == "" {
		reason = "cancelled"
	}
	g.tg.mu.Lock()
	ok := !g.over
	g.cancelLocked(reason)
	g.tg.mu.Unlock()
	g.drain()
	return ok
}

// Start dispatches workers as one group and returns once group_started
// has been sent; the workers run on, and the group ends by itself (the
// fire-and-forget form). Names must be unique and non-empty. Past the
// limits of [TaskGroupsOptions] it returns an error that wraps
// [ErrTooManyGroups] or [ErrTooManyWorkers], and sends nothing.
func (tg *TaskGroups) Start(o GroupOptions, workers ...Worker) (*Group, error) {
	tg.ensure()
	if len(workers) == 0 {
		return nil, errors.New("uiagent: a task group needs at least one worker")
	}
	names := make([]string, len(workers))
	seen := make(map[string]bool, len(workers))
	for i, w := range workers {
		switch {
		case w.Name == "":
			return nil, fmt.Errorf("uiagent: worker %d has no name", i)
		case seen[w.Name]:
			return nil, fmt.Errorf("uiagent: two workers are named %q", w.Name)
		case w.Work == nil:
			return nil, fmt.Errorf("uiagent: worker %q has nothing to do", w.Name)
		}
		seen[w.Name] = true
		names[i] = w.Name
	}
	g := &Group{tg: tg, id: uuid.NewString(), workers: names, opts: o,
		done: make(chan struct{}), finished: make(map[string]bool, len(names))}

	tg.mu.Lock()
	switch {
	case tg.closed:
		tg.mu.Unlock()
		return nil, pipeline.ErrTaskEnded
	case len(tg.groups) >= tg.maxGroups:
		tg.mu.Unlock()
		return nil, fmt.Errorf("%w (the limit is %d)", ErrTooManyGroups, tg.maxGroups)
	case len(workers) > tg.maxWorkers-tg.workers:
		running := tg.workers
		tg.mu.Unlock()
		return nil, fmt.Errorf("%w (%d running, %d more asked for, the limit is %d)", ErrTooManyWorkers,
			running, len(workers), tg.maxWorkers)
	}
	tg.workers += len(workers)
	tg.groups[g.id] = g
	tg.emit(wire.GroupStarted{TaskID: g.id, Agents: names, Label: o.Label, Cancellable: !o.NotCancellable, At: tg.at()})
	if o.Timeout > 0 {
		g.timer = time.AfterFunc(o.Timeout, func() {
			if g.Cancel("timed out") {
				tg.log.Load().Info("task group timed out", zap.String("id", g.id), zap.Duration("timeout", o.Timeout))
			}
		})
	}
	tg.mu.Unlock()

	for i, w := range workers {
		if err := g.start(w); err != nil {
			tg.mu.Lock()
			tg.workers -= len(workers) - i // these never run
			tg.mu.Unlock()
			g.Cancel("the task has ended")
			return nil, err
		}
	}
	return g, nil
}

// Run starts a group and waits until it is over; when ctx ends first, the
// group is cancelled (and Run still waits for group_completed).
func (tg *TaskGroups) Run(ctx context.Context, o GroupOptions, workers ...Worker) ([]Completion, error) {
	g, err := tg.Start(o, workers...)
	if err != nil {
		return nil, err
	}
	select {
	case <-g.done:
		return g.Completions(), nil
	case <-ctx.Done():
		g.Cancel("the caller gave up")
		<-g.done
		return g.Completions(), ctx.Err()
	}
}

// Group returns the running group id, or nil.
func (tg *TaskGroups) Group(id string) *Group {
	tg.ensure()
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.groups[id]
}

// RunningWorkers returns the number of workers still running, across groups
// (those of cancelled groups that have not returned yet included).
func (tg *TaskGroups) RunningWorkers() int {
	tg.ensure()
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.workers
}

// Running returns the number of groups still running.
func (tg *TaskGroups) Running() int {
	tg.ensure()
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return len(tg.groups)
}

// Cancel cancels the running group id from the server side (never
// refused) and reports whether there was one.
func (tg *TaskGroups) Cancel(id, reason string) bool {
	g := tg.Group(id)
	return g != nil && g.Cancel(reason)
}

// DefaultCancelReason is the reason of a client cancel request that gave
// none.
const DefaultCancelReason = "cancelled by user"

// HandleCancel honours a client's cancel request: the group must be
// running and cancellable. It reports whether the group was cancelled;
// unknown ids and non-cancellable groups are refused (logged at debug).
func (tg *TaskGroups) HandleCancel(f *rtvi.UICancelTaskFrame) bool {
	tg.ensure()
	if f == nil || f.TaskID == "" {
		return false
	}
	reason := f.Reason
	if reason == "" {
		reason = DefaultCancelReason
	}
	log := tg.clog.Load() // the client's requests: sampled
	tg.mu.Lock()
	g := tg.groups[f.TaskID]
	switch {
	case g == nil:
		tg.mu.Unlock()
		log.Debug("cancel request for an unknown task group", zap.String("id", f.TaskID))
		return false
	case g.opts.NotCancellable:
		tg.mu.Unlock()
		log.Debug("cancel request for a task group that is not cancellable", zap.String("id", f.TaskID))
		return false
	}
	g.cancelLocked(reason)
	tg.mu.Unlock()
	g.drain()
	return true
}

// cancelAll cancels every running group with envelopes.
func (tg *TaskGroups) cancelAll(reason string) {
	tg.ensure()
	tg.mu.Lock()
	var cancelled []*Group
	for _, g := range tg.groups {
		g.cancelLocked(reason)
		cancelled = append(cancelled, g)
	}
	tg.mu.Unlock()
	for _, g := range cancelled {
		g.drain()
	}
}

// at is the envelope time, epoch milliseconds.
func (tg *TaskGroups) at() int64 { return tg.now().UnixMilli() }

// emit pushes one envelope; tg.mu must be held, so envelopes leave in
// lifecycle order.
func (tg *TaskGroups) emit(e wire.TaskEvent) {
	tg.out.Push(&rtvi.UITaskFrame{Event: e}, frames.Downstream)
}

// queueLocked queues hooks (and the closing of done) to run outside the
// lock, in the order the lifecycle happened; tg.mu must be held. Whoever
// queues calls drain once the lock is released.
func (g *Group) queueLocked(fn func()) { g.hooks = append(g.hooks, fn) }

// drain runs the queued hooks unless another goroutine is running them
// (which then also runs these). A hook may call back into the group.
func (g *Group) drain() {
	tg := g.tg
	tg.mu.Lock()
	if g.draining {
		tg.mu.Unlock()
		return
	}
	g.draining = true
	for len(g.hooks) > 0 {
		fn := g.hooks[0]
		g.hooks[0] = nil
		g.hooks = g.hooks[1:]
		tg.mu.Unlock()
		fn()
		tg.mu.Lock()
	}
	g.hooks = nil
	g.draining = false
	tg.mu.Unlock()
}

// start runs the worker w as the task's background work, under a context
// of its own that the group cancels when it ends. A worker whose group is
// over before it starts does not run. The worker was counted by Start; it
// stops counting when it returns.
func (g *Group) start(w Worker) error {
	return g.tg.out.Go("task group "+g.id+" worker "+w.Name, func(ctx context.Context) error {
		defer g.tg.workerDone()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		g.tg.mu.Lock()
		if g.over {
			g.tg.mu.Unlock()
			return nil
		}
		g.cancels = append(g.cancels, cancel)
		g.tg.mu.Unlock()
		g.run(ctx, w)
		return nil
	})
}

// workerDone stops counting a worker that has returned.
func (tg *TaskGroups) workerDone() {
	tg.mu.Lock()
	tg.workers--
	tg.mu.Unlock()
}

// run runs one worker and reports its end.
func (g *Group) run(ctx context.Context, w Worker) {
	update := func(data any) { g.update(w.Name, data) }
	resp, err := g.work(ctx, w, update)
	c := Completion{Worker: w.Name, Status: wire.StatusCompleted}
	var f *failure
	switch {
	case err == nil:
		c.Response = encode(resp)
	case errors.As(err, &f):
		c.Status, c.Response, c.Err = wire.StatusFailed, encode(f.response), err
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		c.Status, c.Err = wire.StatusCancelled, err
	default:
		// The error's text is the server's business (an upstream's URL, a
		// path, a stack): the client's card and whoever reads the
		// response (the model) get an id that finds it in the log.
		id := errorid.New()
		g.tg.clog.Load().Warn("task-group worker ended with an error", zap.String("id", g.id),
			zap.String("worker", w.Name), zap.String("error_id", id), zap.Error(err))
		c.Status, c.Err = wire.StatusError, err
		c.Response = encode(map[string]string{"error": WorkerErrorText(id)})
	}
	g.tg.mu.Lock()
	g.completeLocked(c)
	g.tg.mu.Unlock()
	g.drain()
}

// work calls the worker, turning a panic into an error.
func (g *Group) work(ctx context.Context, w Worker, update func(any)) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			g.tg.log.Load().Error("task-group worker panicked", zap.String("worker", w.Name), zap.Any("panic", r),
				zap.ByteString("stack", debug.Stack()))
			resp, err = nil, fmt.Errorf("worker %s panicked: %v", w.Name, r)
		}
	}()
	return w.Work(ctx, update)
}

// update forwards a worker's update unless the worker or group is over.
func (g *Group) update(worker string, data any) {
	raw := encode(data)
	tg := g.tg
	tg.mu.Lock()
	if g.over || g.finished[worker] {
		tg.mu.Unlock()
		tg.log.Load().Debug("dropping a late task-group update", zap.String("id", g.id), zap.String("worker", worker))
		return
	}
	var d wire.Payload
	if raw != nil {
		d = wire.RawJSON(raw)
	}
	tg.emit(wire.TaskUpdate{TaskID: g.id, AgentName: worker, Data: d, At: tg.at()})
	if fn := g.opts.OnUpdate; fn != nil {
		g.queueLocked(func() { fn(worker, raw) })
	}
	tg.mu.Unlock()
	g.drain()
}

// completeLocked sends a worker's completion, then cancels the group on an
// error (unless KeepOnError) or closes it when every worker is done.
func (g *Group) completeLocked(c Completion) {
	if g.over || g.finished[c.Worker] {
		g.tg.log.Load().Debug("dropping a late task-group completion", zap.String("id", g.id), zap.String("worker", c.Worker))
		return
	}
	g.sendCompletionLocked(c)
	if (c.Status == wire.StatusError || c.Status == wire.StatusFailed) && !g.opts.KeepOnError {
		g.cancelLocked(fmt.Sprintf("worker %s ended with %s", c.Worker, c.Status))
		return
	}
	if len(g.finished) == len(g.workers) {
		g.closeLocked("", true)
	}
}

func (g *Group) sendCompletionLocked(c Completion) {
	g.finished[c.Worker] = true
	g.completions = append(g.completions, c)
	var resp wire.Payload
	if c.Response != nil {
		resp = wire.RawJSON(c.Response)
	}
	g.tg.emit(wire.TaskCompleted{TaskID: g.id, AgentName: c.Worker, Status: c.Status, Response: resp, At: g.tg.at()})
	if fn := g.opts.OnCompleted; fn != nil {
		g.queueLocked(func() { fn(c) })
	}
}

// cancelLocked synthesizes "cancelled" for every worker still running,
// sends group_completed and stops the workers.
func (g *Group) cancelLocked(reason string) {
	if g.over {
		return
	}
	for _, w := range g.workers {
		if !g.finished[w] {
			g.sendCompletionLocked(Completion{Worker: w, Status: wire.StatusCancelled})
		}
	}
	g.closeLocked(reason, true)
}

// closeLocked ends the group: group_completed (when send is set), the
// timer and workers stopped, the group forgotten.
func (g *Group) closeLocked(reason string, send bool) {
	if g.over {
		return
	}
	g.over, g.reason = true, reason
	if send {
		g.tg.emit(wire.GroupCompleted{TaskID: g.id, At: g.tg.at()})
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	for _, cancel := range g.cancels {
		cancel()
	}
	g.cancels = nil
	delete(g.tg.groups, g.id)
	if fn := g.opts.OnDone; fn != nil {
		g.queueLocked(func() { fn(g) })
	}
	g.queueLocked(func() { close(g.done) })
}

// encode encodes a worker's value now (so later changes to it cannot
// reach the wire): nil stays nil, raw JSON is kept when valid, anything
// that cannot be encoded becomes null.
func encode(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		if json.Valid(x) {
			return x
		}
		return json.RawMessage("null")
	case wire.RawJSON:
		if json.Valid(x) {
			return json.RawMessage(x)
		}
		return json.RawMessage("null")
	case wire.Payload:
		return json.RawMessage(x.AppendJSON(nil))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
