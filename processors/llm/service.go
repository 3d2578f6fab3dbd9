package llm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/pipeline"
)

// DefaultFunctionTimeout bounds a function call when neither the function
// nor the service sets a timeout.
const DefaultFunctionTimeout = 30 * time.Second

// ServiceOptions configure a [Service]. The zero value is ready to use.
type ServiceOptions struct {
	// Name is the processor's display name. Default: "LLMService#<id>".
	Name string
	// Sequential runs the function calls of one response one after another,
	// in the order the model made them. By default they run in parallel.
	Sequential bool
	// FunctionTimeout bounds every call whose function sets no timeout.
	// Zero means [DefaultFunctionTimeout]; negative means no timeout.
	FunctionTimeout time.Duration
	// MaxClientResultBytes bounds the result a client gives for a client
	// function; a larger one settles the call with an [ErrorResult]
	// instead, so a client cannot fill the conversation. Zero means
	// [DefaultMaxClientResultBytes].
	MaxClientResultBytes int
}

// DefaultMaxClientResultBytes bounds a client function's result when the
// service sets no bound.
const DefaultMaxClientResultBytes = 64 << 10

// maxSettledIDs bounds the settled tool_call_ids a service remembers, to
// tell a late result for one of its calls from a result for a call it
// never made.
const maxSettledIDs = 256

// Service is the streaming LLM processor. A [frames.LLMContext] from either
// direction starts a response as a job: [frames.LLMFullResponseStart],
// [frames.LLMText] frames as the model streams, then
// [frames.LLMFullResponseEnd], always balanced, also on error and
// interruption. An interruption cancels the stream. Function calls the
// model makes are announced ([frames.FunctionCallsStarted],
// [frames.FunctionCallInProgress]) and run with their registered handlers,
// or, for client functions, wait for the client's result, which arrives as
// a [frames.FunctionCallResult] from upstream and is taken in (results for
// calls the service did not make pass on); each call settles exactly once
// with a [frames.FunctionCallResult] or a [frames.FunctionCallCancel] that
// the service pushes. TTFB, processing and token-usage metrics go
// downstream as [frames.Metrics] when the task enables them.
//
// Register functions before or while the pipeline runs; both are safe.
type Service struct {
	provider Provider
	opts     ServiceOptions
	name     string

	// The functions: Register and its kin may be called from any
	// goroutine while responses (jobs) look them up.
	fnMu     sync.RWMutex
	fns      map[string]Function
	fallback *Function

	// out runs the function handlers as background work of the task, so
	// the task cancels them (Cancel, teardown) and waits for them.
	out pipeline.Outlet
	// log is the task's logger, set in Setup before any handler starts;
	// sampled is a sampled copy for lines that a client can cause.
	log     *zap.Logger
	sampled *zap.Logger

	// Owned by the node goroutine.
	skipTTS      bool
	metrics      bool
	usageMetrics bool

	// Function calls in flight: added by the response job that dispatches
	// them, removed by whichever goroutine settles a call (its handler,
	// its timer, the node goroutine on an interruption).
	callMu   sync.Mutex
	inflight map[string]*call
	// settledIDs remembers the latest settled calls (a ring of
	// maxSettledIDs), so that a late client result is recognised and
	// dropped rather than passed on as someone else's.
	settledIDs  map[string]struct{}
	settledRing []string
	settledNext int
}

// NewService returns a service that gets its responses from p.
func NewService(p Provider, o ServiceOptions) *Service {
	s := &Service{provider: p, opts: o, fns: map[string]Function{}, inflight: map[string]*call{}, settledIDs: map[string]struct{}{}}
	s.name = o.Name
	if s.name == "" {
		s.name = fmt.Sprintf("LLMService#%d", frames.NextID())
	}
	s.log = zap.NewNop()
	s.sampled = s.log
	return s
}

// Setup implements [pipeline.Setupper]: function handlers become the
// task's background work.
func (s *Service) Setup(_ context.Context, su pipeline.Setup) error {
	if su.Logger != nil {
		s.log = su.Logger
		s.sampled = logsample.Logger(su.Logger)
	}
	su.Attach(&s.out)
	return nil
}

// Name implements [pipeline.Namer].
func (s *Service) Name() string { return s.name }

// Register makes fns callable. A function registered again replaces the
// previous one; calls already running keep their handler.
func (s *Service) Register(fns ...Function) error {
	for _, f := range fns {
		if err := f.validate(); err != nil {
			return err
		}
	}
	s.fnMu.Lock()
	defer s.fnMu.Unlock()
	for _, f := range fns {
		s.fns[f.Name] = f
	}
	return nil
}

// RegisterFallback sets the catch-all handler for calls to functions that
// are not registered; its Name, Description and Parameters are ignored.
// Without one, such calls settle with a "not currently available" error
// result.
func (s *Service) RegisterFallback(f Function) error {
	if f.Client {
		return errors.New("llm: the fallback function cannot run on the client")
	}
	if f.Handler == nil {
		return errors.New("llm: fallback function has no handler")
	}
	s.fnMu.Lock()
	defer s.fnMu.Unlock()
	s.fallback = &f
	return nil
}

// Unregister removes the function name; later calls to it get the fallback
// or the "not currently available" result.
func (s *Service) Unregister(name string) {
	s.fnMu.Lock()
	defer s.fnMu.Unlock()
	delete(s.fns, name)
}

// IsClientFunction reports whether name is registered as a function the
// client runs ([Function.Client]). The RTVI observer asks it, to name such
// calls to the client whatever its report level. It is safe to call from
// any goroutine.
func (s *Service) IsClientFunction(name string) bool {
	s.fnMu.RLock()
	defer s.fnMu.RUnlock()
	f, ok := s.fns[name]
	return ok && f.Client
}

func (s *Service) lookup(name string) (Function, bool) {
	s.fnMu.RLock()
	defer s.fnMu.RUnlock()
	if f, ok := s.fns[name]; ok {
		return f, true
	}
	if s.fallback != nil {
		f := *s.fallback
		f.Name = name
		return f, true
	}
	return Function{}, false
}

// ProcessFrame implements [pipeline.Processor].
func (s *Service) ProcessFrame(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		s.metrics, s.usageMetrics = f.EnableMetrics, f.EnableUsageMetrics
	case *frames.LLMContext:
		h.Consume()
		r := response{s: s, req: f, skipTTS: s.skipTTS, metrics: s.metrics, usage: s.usageMetrics, name: h.Name()}
		h.Go(r.run)
	case *frames.LLMConfigureOutput:
		h.Consume()
		s.skipTTS = f.SkipTTS
	case *frames.Interruption:
		s.cancelOnInterruption()
	case *frames.FunctionCallResult:
		s.clientResult(h, f)
	}
	return nil
}

// response is one inference, run as a job.
type response struct {
	s       *Service
	req     *frames.LLMContext
	skipTTS bool
	metrics bool
	usage   bool
	name    string
}

func (r *response) run(ctx context.Context, out pipeline.Pusher) error {
	s := r.s
	out.Push(&frames.LLMFullResponseStart{SkipTTS: r.skipTTS}, frames.Downstream)
	began := time.Now()
	var (
		calls    []frames.LLMToolCall
		usage    frames.LLMTokenUsage
		gotUsage bool
		first    = true
		ended    bool
	)
	end := func() {
		if ended {
			return
		}
		ended = true
		var data []frames.Metric
		if r.metrics {
			data = append(data, frames.Metric{Kind: frames.MetricProcessing, Processor: r.name, Model: r.model(), Value: time.Since(began)})
		}
		if r.usage && gotUsage {
			data = append(data, frames.Metric{Kind: frames.MetricLLMUsage, Processor: r.name, Model: r.model(), Usage: usage})
		}
		if len(data) > 0 {
			out.Push(&frames.Metrics{Data: data}, frames.Downstream)
		}
		out.Push(&frames.LLMFullResponseEnd{SkipTTS: r.skipTTS}, frames.Downstream)
	}
	defer end()

	for ev, err := range s.provider.Stream(ctx, r.req) {
		if err != nil {
			if ctx.Err() != nil {
				return nil // interrupted or cancelled: not a failure
			}
			out.PushError(&frames.Error{Err: err, Category: frames.CategoryOf(err), Subject: "The language model"})
			return nil
		}
		if first {
			first = false
			if r.metrics {
				out.Push(&frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricTTFB, Processor: r.name, Model: r.model(), Value: time.Since(began)}}}, frames.Downstream)
			}
		}
		switch ev.Kind {
		case EventText:
			if ev.Text != "" {
				out.Push(&frames.LLMText{Text: ev.Text, SkipTTS: r.skipTTS}, frames.Downstream)
			}
		case EventToolCall:
			calls = append(calls, ev.ToolCall)
		case EventUsage:
			usage, gotUsage = ev.Usage, true
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	end()
	if len(calls) > 0 {
		s.dispatch(out, r.req, calls)
	}
	return nil
}

func (r *response) model() string {
	if m, ok := r.s.provider.(frames.Modeler); ok {
		return m.Model()
	}
	return ""
}

func (s *Service) logStack(function string, panicked any, stack []byte) {
	s.log.Error("function handler panicked", zap.String("function", function), zap.Any("panic", panicked), zap.ByteString("stack", stack))
}
