package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// callState is where a call is in its life. It only moves away from
// callRunning, once: that move is the settlement.
type callState uint8

const (
	callRunning callState = iota
	callResult
	callTimedOut
	callCancelled
)

func (st callState) String() string {
	switch st {
	case callResult:
		return "with a result"
	case callTimedOut:
		return "by its timeout"
	case callCancelled:
		return "by cancellation"
	}
	return "not yet"
}

// call is one function call in flight.
type call struct {
	s     *Service
	out   pipeline.Pusher
	fn    Function
	known bool
	fc    frames.FunctionCall
	group string
	req   *frames.LLMContext
	// argErr says why the arguments are unusable; the handler is not run.
	argErr               string
	cancelOnInterruption bool
	timeout              time.Duration

	// ctx is the handler's context: it lives on the handler's goroutine,
	// derived from the task's background context when the handler starts.
	ctx context.Context

	// mu guards the call's settlement, shared by the handler's goroutine,
	// its timer and the node goroutine (an interruption cancels it).
	mu     sync.Mutex
	state  callState
	timer  *time.Timer
	cancel context.CancelFunc // set when the handler starts
	// done is closed when a client function's call settles; the
	// goroutine that waits for the client's answer waits on it.
	done chan struct{}
}

// dispatch announces the calls of one response and starts their handlers.
// Every InProgress frame is pushed before any handler starts, so none of
// the group's results can reach the assistant aggregator before all of the
// group's siblings are known there.
func (s *Service) dispatch(out pipeline.Pusher, req *frames.LLMContext, toolCalls []frames.LLMToolCall) {
	group := uuid.NewString()
	calls := make([]*call, 0, len(toolCalls))
	announced := make([]frames.FunctionCall, 0, len(toolCalls))
	seen := make(map[string]bool, len(toolCalls))
	for _, tc := range toolCalls {
		id := tc.ID
		if id == "" || seen[id] {
			id = "call_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24]
		}
		seen[id] = true
		c := &call{s: s, out: out, group: group, req: req}
		c.fc = frames.FunctionCall{Name: tc.Name, ToolCallID: id}
		args := strings.TrimSpace(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		var probe any
		if err := json.Unmarshal([]byte(args), &probe); err != nil {
			c.argErr = fmt.Sprintf("The arguments for %s were not valid JSON (%v); nothing was run. Call it again with a complete JSON object.", tc.Name, err)
			c.fc.Arguments = json.RawMessage("{}")
		} else {
			c.fc.Arguments = json.RawMessage(args)
		}
		c.fn, c.known = s.lookup(tc.Name)
		if c.known && c.fn.Client {
			c.done = make(chan struct{})
		}
		c.cancelOnInterruption = !c.known || !c.fn.KeepOnInterruption
		c.timeout = s.timeoutFor(c.fn)
		calls = append(calls, c)
		announced = append(announced, c.fc)
	}

	pipeline.Broadcast(out, func() *frames.FunctionCallsStarted {
		return &frames.FunctionCallsStarted{Calls: announced, GroupID: group}
	})

	s.callMu.Lock()
	for _, c := range calls {
		s.inflight[c.fc.ToolCallID] = c
	}
	s.callMu.Unlock()

	for _, c := range calls {
		pipeline.Broadcast(out, func() *frames.FunctionCallInProgress {
			return &frames.FunctionCallInProgress{FunctionCall: c.fc, CancelOnInterruption: c.cancelOnInterruption, GroupID: group}
		})
	}

	// The handlers are the task's background work: their contexts end
	// when the task is cancelled or tears down, and the task waits for
	// them (naming any that ignores its context).
	if s.opts.Sequential {
		s.start("functions "+group, calls, func(ctx context.Context) error {
			for _, c := range calls {
				c.run(ctx)
			}
			return nil
		})
		return
	}
	for _, c := range calls {
		s.start("function "+c.fc.Name+" "+c.fc.ToolCallID, []*call{c}, func(ctx context.Context) error {
			c.run(ctx)
			return nil
		})
	}
}

// start runs fn as background work of the task. When the task has ended
// (a response that finished after End), the calls fn would have run are
// settled as cancelled instead; their frames go nowhere, but they leave
// the calls in flight.
func (s *Service) start(name string, calls []*call, fn func(ctx context.Context) error) {
	if err := s.out.Go(name, fn); err != nil {
		for _, c := range calls {
			c.settleCancelled()
		}
	}
}

func (s *Service) timeoutFor(f Function) time.Duration {
	t := f.Timeout
	if t == 0 {
		t = s.opts.FunctionTimeout
	}
	if t == 0 {
		t = DefaultFunctionTimeout
	}
	if t < 0 {
		return 0
	}
	return t
}

// forget removes c from the calls in flight and remembers its id among
// the settled ones.
func (s *Service) forget(c *call) {
	id := c.fc.ToolCallID
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if s.inflight[id] == c {
		delete(s.inflight, id)
	}
	if _, ok := s.settledIDs[id]; ok {
		return
	}
	if len(s.settledRing) < maxSettledIDs {
		s.settledRing = append(s.settledRing, id)
	} else {
		delete(s.settledIDs, s.settledRing[s.settledNext])
		s.settledRing[s.settledNext] = id
		s.settledNext = (s.settledNext + 1) % maxSettledIDs
	}
	s.settledIDs[id] = struct{}{}
}

// clientResult takes in a result pushed to the service for one of its
// client function calls in flight, which settles the call unless it has
// settled already. A result for a call of the service that has settled,
// or for one that runs on the server, is dropped with a (sampled) log
// line; results for calls the service does not know pass on.
func (s *Service) clientResult(h *pipeline.Handle, f *frames.FunctionCallResult) {
	id := f.ToolCallID
	s.callMu.Lock()
	c := s.inflight[id]
	_, settled := s.settledIDs[id]
	s.callMu.Unlock()
	if c == nil && !settled {
		return // not a call of this service
	}
	h.Consume()
	log := s.sampled
	switch {
	case c == nil:
		log.Info("dropping a function result for a call that has settled",
			zap.String("function", f.Name), zap.String("tool_call_id", id))
		return
	case !c.known || !c.fn.Client:
		log.Warn("dropping a function result from outside for a call the server runs",
			zap.String("function", c.fc.Name), zap.String("tool_call_id", id))
		return
	case f.Name != "" && f.Name != c.fc.Name:
		log.Warn("dropping a function result that names another function",
			zap.String("function", c.fc.Name), zap.String("named", f.Name), zap.String("tool_call_id", id))
		return
	}
	v := f.Result
	if n, limit := resultSize(v), s.maxClientResult(); n > limit {
		log.Warn("client function result too large; the model is told so",
			zap.String("function", c.fc.Name), zap.String("tool_call_id", id), zap.Int("bytes", n), zap.Int("max", limit))
		v = ErrorResult{Error: fmt.Sprintf("The result of %s was too large (%d bytes, at most %d) and was not used.", c.fc.Name, n, limit)}
	}
	rerun := RerunDefault
	if r := f.Properties.RunLLM; r != nil {
		rerun = RerunNever
		if *r {
			rerun = RerunAlways
		}
	}
	if !c.settleResult(v, rerun) {
		log.Info("dropping a function result for a call that has settled",
			zap.String("function", c.fc.Name), zap.String("tool_call_id", id), zap.String("settled", c.settledHow()))
	}
}

func (s *Service) maxClientResult() int {
	if s.opts.MaxClientResultBytes > 0 {
		return s.opts.MaxClientResultBytes
	}
	return DefaultMaxClientResultBytes
}

// resultSize is the size of a result that came as text (what a client
// sends); values built in Go count as 0.
func resultSize(v any) int {
	switch r := v.(type) {
	case json.RawMessage:
		return len(r)
	case string:
		return len(r)
	}
	return 0
}

// cancelOnInterruption cancels every call in flight that an interruption
// cancels, each with its own FunctionCallCancel.
func (s *Service) cancelOnInterruption() {
	s.callMu.Lock()
	var victims []*call
	for _, c := range s.inflight {
		if c.cancelOnInterruption {
			victims = append(victims, c)
		}
	}
	s.callMu.Unlock()
	for _, c := range victims {
		c.settleCancelled()
	}
}

// run runs the call's handler on the current goroutine under ctx, unless
// the call settled before it could start (cancelled while queued).
func (c *call) run(ctx context.Context) {
	c.mu.Lock()
	if c.state != callRunning {
		c.mu.Unlock()
		return
	}
	var cancel context.CancelFunc
	c.ctx, cancel = context.WithCancel(ctx)
	defer cancel()
	c.cancel = cancel
	if c.timeout > 0 {
		c.timer = time.AfterFunc(c.timeout, c.settleTimedOut)
	}
	c.mu.Unlock()

	switch {
	case !c.known:
		c.settleResult(ErrorResult{Error: fmt.Sprintf("The function %s is not currently available.", c.fc.Name)}, RerunDefault)
		return
	case c.argErr != "":
		c.settleResult(ErrorResult{Error: c.argErr}, RerunDefault)
		return
	case c.fn.Client:
		c.await(ctx)
		return
	}
	err := c.invoke()
	if err == nil {
		c.settleResult(nil, RerunDefault) // a no-op when the handler settled
		return
	}
	if c.ctx.Err() != nil && c.settled() && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return // it stopped because it was told to
	}
	c.out.PushError(fmt.Errorf("llm: function %s (%s) failed: %w", c.fc.Name, c.fc.ToolCallID, err))
	c.settleResult(ErrorResult{Error: fmt.Sprintf("The function %s failed.", c.fc.Name)}, RerunDefault)
}

// await waits for a client function's call to settle: with the client's
// result, by its timeout or by cancellation. When the task ends first, the
// call is cancelled.
func (c *call) await(ctx context.Context) {
	select {
	case <-c.done:
	case <-ctx.Done():
		c.settleCancelled()
	}
}

// invoke calls the handler, turning a panic into an error.
func (c *call) invoke() (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.s.logStack(c.fc.Name, r, debug.Stack())
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.fn.Handler(c.ctx, FunctionCallParams{
		Name:       c.fc.Name,
		ToolCallID: c.fc.ToolCallID,
		Arguments:  c.fc.Arguments,
		GroupID:    c.group,
		Context:    c.req,
		Out:        c.out,
		call:       c,
	})
}

// settle moves the call out of callRunning; only the first caller wins.
func (c *call) settle(to callState) bool {
	c.mu.Lock()
	if c.state != callRunning {
		c.mu.Unlock()
		return false
	}
	c.state = to
	t := c.timer
	if c.done != nil {
		close(c.done)
	}
	c.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	c.s.forget(c)
	return true
}

func (c *call) settled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state != callRunning
}

func (c *call) settledHow() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "settled " + c.state.String()
}

func (c *call) settleResult(v any, rerun Rerun) bool {
	if !c.settle(callResult) {
		return false
	}
	c.pushResult(v, rerun)
	return true
}

func (c *call) pushResult(v any, rerun Rerun) {
	props := frames.FunctionCallResultProperties{}
	switch rerun {
	case RerunAlways:
		yes := true
		props.RunLLM = &yes
	case RerunNever:
		no := false
		props.RunLLM = &no
	}
	pipeline.Broadcast(c.out, func() *frames.FunctionCallResult {
		return &frames.FunctionCallResult{FunctionCall: c.fc, Result: v, GroupID: c.group, Properties: props}
	})
}

// stop cancels the handler's context, if the handler has started.
func (c *call) stop() {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// settleTimedOut tells the model the call failed and stops the handler.
func (c *call) settleTimedOut() {
	if !c.settle(callTimedOut) {
		return
	}
	msg := fmt.Sprintf("The function %s did not finish within %v and was stopped.", c.fc.Name, c.timeout)
	if c.done != nil {
		msg = fmt.Sprintf("The function %s runs on the user's device, which did not answer within %v.", c.fc.Name, c.timeout)
	}
	c.pushResult(ErrorResult{Error: msg}, RerunDefault)
	c.stop()
}

// settleCancelled cancels the call (interruption).
func (c *call) settleCancelled() {
	if !c.settle(callCancelled) {
		return
	}
	pipeline.Broadcast(c.out, func() *frames.FunctionCallCancel {
		return &frames.FunctionCallCancel{Name: c.fc.Name, ToolCallID: c.fc.ToolCallID}
	})
	c.stop()
}
