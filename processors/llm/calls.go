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

// forget removes c from the calls in flight.
func (s *Service) forget(c *call) {
	s.callMu.Lock()
	if s.inflight[c.fc.ToolCallID] == c {
		delete(s.inflight, c.fc.ToolCallID)
	}
	s.callMu.Unlock()
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
	c.pushResult(ErrorResult{Error: fmt.Sprintf("The function %s did not finish within %v and was stopped.", c.fc.Name, c.timeout)}, RerunDefault)
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
