package openairealtime

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
)

// Service is a speech-to-speech model over the OpenAI Realtime API. It is
// two processors that go together ([Service.Pipeline]): the session node,
// which holds the WebSocket session, sends the user's audio and turns the
// server's events into frames, and the function node, an [llm.Service]
// that runs the model's function calls with the registry and the
// settle-once rules of the cascaded pipeline. Put a [Service.PlayedTap]
// after the output transport so that an interruption truncates the
// model's audio where the user stopped hearing it.
//
// Construct it with [New]; register functions before or while it runs.
type Service struct {
	opts Options
	url  string
	err  error // a bad base URL, reported when the session starts

	main  realtime
	funcs functions
	tap   tap

	// calls are the function calls of model responses waiting for the
	// function node: the session goroutine puts them, the function node's
	// response job takes them.
	callsMu sync.Mutex
	calls   map[*frames.LLMContext][]frames.LLMToolCall

	// decls are the declared tools, sent in session.update.
	declMu sync.Mutex
	decls  []frames.LLMTool
}

// New returns a service configured by o.
func New(o Options) *Service {
	o = o.withDefaults()
	s := &Service{opts: o, calls: map[*frames.LLMContext][]frames.LLMToolCall{}}
	s.url, s.err = RealtimeURL(o.BaseURL, o.Model)
	name := o.Name
	if name == "" {
		name = fmt.Sprintf("OpenAIRealtime#%d", frames.NextID())
	}
	s.main = realtime{s: s, name: name, audio: make(chan *frames.InputAudioRaw, audioQueue), wake: make(chan struct{}, 1)}
	s.funcs = functions{s: s, name: name + "/functions"}
	s.funcs.svc = llm.NewService(provider{s}, llm.ServiceOptions{
		Name:            s.funcs.name,
		Sequential:      o.SequentialFunctions,
		FunctionTimeout: o.FunctionTimeout,
	})
	s.tap.name = name + "/played"
	if err := s.Register(o.Functions...); err != nil && s.err == nil {
		s.err = err
	}
	return s
}

// Model implements [frames.Modeler].
func (s *Service) Model() string { return s.opts.Model }

// URL returns the WebSocket URL the session dials.
func (s *Service) URL() string { return s.url }

// Pipeline returns the service's two processors in order: put it where
// the LLM (and STT and TTS) of a cascaded pipeline would be,
//
//	transport.In → rtvi → [agent] → rt.Pipeline() → transport.Out → rt.PlayedTap()
//
// Calling it again returns the same processors.
func (s *Service) Pipeline() *pipeline.Pipeline {
	return pipeline.New(&s.main, &s.funcs)
}

// PlayedTap returns the processor to put right after the output
// transport: it counts the bot audio the transport has taken to play, so
// that an interruption truncates the model's item at the position actually
// played. Without it the position is estimated from the time since the
// bot started speaking.
func (s *Service) PlayedTap() pipeline.Processor { return &s.tap }

// Register makes fns callable and offers them to the model; a session
// already open gets the new tool list. A function registered again
// replaces the previous one.
func (s *Service) Register(fns ...llm.Function) error {
	if len(fns) == 0 {
		return nil
	}
	if err := s.funcs.svc.Register(fns...); err != nil {
		return err
	}
	s.declMu.Lock()
	for _, f := range fns {
		replaced := false
		for i := range s.decls {
			if s.decls[i].Name == f.Name {
				s.decls[i] = f.Tool()
				replaced = true
			}
		}
		if !replaced {
			s.decls = append(s.decls, f.Tool())
		}
	}
	s.declMu.Unlock()
	s.main.command(command{kind: cmdTools})
	return nil
}

// Functions returns the llm.Service that runs the model's function calls,
// for what takes one (to ask which functions it has). It is part of
// [Service.Pipeline] already: do not put it in a pipeline.
func (s *Service) Functions() *llm.Service { return s.funcs.svc }

// RegisterFallback sets the handler for calls to functions that are not
// registered (see [llm.Service.RegisterFallback]).
func (s *Service) RegisterFallback(f llm.Function) error { return s.funcs.svc.RegisterFallback(f) }

// Unregister removes the function name and stops offering it.
func (s *Service) Unregister(name string) {
	s.funcs.svc.Unregister(name)
	s.declMu.Lock()
	for i := range s.decls {
		if s.decls[i].Name == name {
			s.decls = append(s.decls[:i], s.decls[i+1:]...)
			break
		}
	}
	s.declMu.Unlock()
	s.main.command(command{kind: cmdTools})
}

// setTools replaces the tools offered to the model (an LLMSetTools frame);
// the functions stay registered.
func (s *Service) setTools(decls []frames.LLMTool) {
	s.declMu.Lock()
	s.decls = append([]frames.LLMTool(nil), decls...)
	s.declMu.Unlock()
	s.main.command(command{kind: cmdTools})
}

func (s *Service) tools() []frames.LLMTool {
	s.declMu.Lock()
	defer s.declMu.Unlock()
	return append([]frames.LLMTool(nil), s.decls...)
}

// putCalls hands the calls of one model response to the function node.
func (s *Service) putCalls(calls []frames.LLMToolCall) *frames.LLMContext {
	req := &frames.LLMContext{Tools: s.tools()}
	s.callsMu.Lock()
	if len(s.calls) >= maxWaitingResponses {
		// Requests an interruption flushed before the function node saw
		// them: their calls never run.
		clear(s.calls)
	}
	s.calls[req] = calls
	s.callsMu.Unlock()
	return req
}

func (s *Service) hasCalls(req *frames.LLMContext) bool {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	_, ok := s.calls[req]
	return ok
}

func (s *Service) takeCalls(req *frames.LLMContext) []frames.LLMToolCall {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	c := s.calls[req]
	delete(s.calls, req)
	return c
}

// maxWaitingResponses bounds the responses whose calls wait for the
// function node.
const maxWaitingResponses = 16

// provider feeds the function node's llm.Service the calls the session
// received: the "response" to a request is its calls, nothing else.
type provider struct{ s *Service }

func (p provider) Model() string { return p.s.opts.Model }

func (p provider) Stream(_ context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	calls := p.s.takeCalls(req)
	return func(yield func(llm.Event, error) bool) {
		for _, c := range calls {
			if !yield(llm.ToolCallEvent(c), nil) {
				return
			}
		}
	}
}

// functions is the function node: an llm.Service that only ever runs the
// calls the session node hands it. Other LLMContext frames (an assistant
// aggregator's re-run requests) pass through to the session node, which
// drops them: the server keeps the conversation.
type functions struct {
	s    *Service
	name string
	svc  *llm.Service
}

func (f *functions) Name() string { return f.name }

func (f *functions) Setup(ctx context.Context, su pipeline.Setup) error { return f.svc.Setup(ctx, su) }

func (f *functions) ProcessFrame(ctx context.Context, h *pipeline.Handle, fr frames.Frame, dir frames.Direction) error {
	switch fr := fr.(type) {
	case *frames.LLMContext:
		if dir == frames.Downstream && f.s.hasCalls(fr) {
			return f.svc.ProcessFrame(ctx, h, fr, dir)
		}
	case *frames.FunctionCallResult:
		if dir == frames.Downstream {
			// A result from above (a client function's, from RTVI): the
			// function service takes in those of its own calls.
			return f.svc.ProcessFrame(ctx, h, fr, dir)
		}
	case *frames.Start, *frames.Interruption, *frames.LLMConfigureOutput:
		return f.svc.ProcessFrame(ctx, h, fr, dir)
	}
	return nil
}

// tap counts the audio the output transport has taken, per model item.
type tap struct {
	name string
	used atomic.Bool

	mu      sync.Mutex
	item    string
	samples int64
	rate    int
}

func (t *tap) Name() string { return t.name }

func (t *tap) Setup(context.Context, pipeline.Setup) error {
	t.used.Store(true)
	return nil
}

func (t *tap) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if a, ok := f.(*frames.TTSAudioRaw); ok && dir == frames.Downstream && a.SampleRate > 0 {
		t.mu.Lock()
		if a.ContextID != t.item || a.SampleRate != t.rate {
			t.item, t.samples, t.rate = a.ContextID, 0, a.SampleRate
		}
		t.samples += int64(a.NumFrames())
		t.mu.Unlock()
	}
	return nil
}

// current returns how much of the latest item the output has taken.
func (t *tap) current() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rate == 0 {
		return 0
	}
	return time.Duration(t.samples) * time.Second / time.Duration(t.rate)
}

// played returns how much of item the output has taken, and whether the
// tap is in the pipeline at all.
func (t *tap) played(item string) (time.Duration, bool) {
	if !t.used.Load() {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.item != item || t.rate == 0 {
		return 0, true
	}
	return time.Duration(t.samples) * time.Second / time.Duration(t.rate), true
}

// audioQueue bounds the user audio frames waiting for the session
// goroutine (2.5 s of 20 ms frames); past it, frames are dropped.
const audioQueue = 128

// cmdKind says what a command from the node asks of the session.
type cmdKind uint8

const (
	cmdUserStarted cmdKind = iota + 1
	cmdUserStopped
	cmdInterrupted
	cmdBotStarted
	cmdBotStopped
	cmdResult
	cmdCancelled
	cmdSpeak
	cmdAppend
	cmdRun
	cmdTools
)

// command is one request from the node (or a caller) to the session
// goroutine.
type command struct {
	kind   cmdKind
	at     time.Time
	text   string
	msgs   []frames.LLMMessage
	run    bool
	result *frames.FunctionCallResult
	cancel *frames.FunctionCallCancel
}

// maxCommands bounds the commands waiting for the session goroutine.
const maxCommands = 4096

// realtime is the session node.
type realtime struct {
	s    *Service
	name string
	out  pipeline.Outlet
	log  *zap.Logger

	// Owned by the node goroutine.
	started      bool
	metrics      bool
	usageMetrics bool

	// The node's way to the session goroutine: user audio on a bounded
	// channel, commands on a bounded queue (shared with callers of
	// Register), wake signalling that commands wait.
	audio   chan *frames.InputAudioRaw
	dropped atomic.Uint64
	cmdMu   sync.Mutex
	cmds    []command
	wake    chan struct{}
}

func (p *realtime) Name() string { return p.name }

// Model implements frames.Modeler.
func (p *realtime) Model() string { return p.s.opts.Model }

func (p *realtime) Setup(_ context.Context, su pipeline.Setup) error {
	log := su.Logger
	if log == nil {
		log = zap.NewNop()
	}
	p.cmdMu.Lock() // command reads it from other goroutines
	p.log = log
	p.cmdMu.Unlock()
	su.Attach(&p.out)
	return nil
}

// command queues c for the session goroutine.
func (p *realtime) command(c command) {
	p.cmdMu.Lock()
	if len(p.cmds) >= maxCommands {
		if p.log != nil {
			p.log.Warn("too many commands wait for the realtime session; dropping one", zap.Int("max", maxCommands))
		}
		p.cmdMu.Unlock()
		return
	}
	p.cmds = append(p.cmds, c)
	p.cmdMu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// takeCommands returns the queued commands, reusing buf.
func (p *realtime) takeCommands(buf []command) []command {
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	buf = append(buf[:0], p.cmds...)
	clear(p.cmds)
	p.cmds = p.cmds[:0]
	return buf
}

func (p *realtime) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	framework := p.s.opts.TurnDetection == FrameworkTurns
	switch f := f.(type) {
	case *frames.Start:
		p.metrics, p.usageMetrics = f.EnableMetrics, f.EnableUsageMetrics
		if !p.started {
			p.started = true
			outRate := f.AudioOutSampleRate
			if outRate <= 0 {
				outRate = apiRate
			}
			st := &state{p: p, outRate: outRate, metrics: f.EnableMetrics, usage: f.EnableUsageMetrics}
			if err := p.out.Go("realtime session", st.run); err != nil {
				return err
			}
		}
	case *frames.InputAudioRaw:
		h.Consume()
		select {
		case p.audio <- f:
		default:
			if n := p.dropped.Add(1); n == 1 || n%500 == 0 {
				h.Logger().Warn("user audio dropped: the realtime session is not keeping up", zap.Uint64("dropped", n))
			}
		}
	case *frames.UserStartedSpeaking:
		if framework && dir == frames.Downstream {
			h.Forward()
			h.Interrupt()
			p.command(command{kind: cmdUserStarted})
		}
	case *frames.UserStoppedSpeaking:
		if framework && dir == frames.Downstream {
			p.command(command{kind: cmdUserStopped})
		}
	case *frames.Interruption:
		p.command(command{kind: cmdInterrupted})
	case *frames.BotStartedSpeaking:
		if dir == frames.Upstream {
			p.command(command{kind: cmdBotStarted, at: time.Now()})
		}
	case *frames.BotStoppedSpeaking:
		if dir == frames.Upstream {
			p.command(command{kind: cmdBotStopped, at: time.Now()})
		}
	case *frames.FunctionCallResult:
		if dir == frames.Upstream {
			p.command(command{kind: cmdResult, result: f})
		}
	case *frames.FunctionCallCancel:
		if dir == frames.Upstream {
			p.command(command{kind: cmdCancelled, cancel: f})
		}
	case *frames.TTSSpeak:
		if dir == frames.Downstream {
			h.Consume()
			if f.Text != "" {
				p.command(command{kind: cmdSpeak, text: f.Text})
			}
		}
	case *frames.LLMMessagesAppend:
		if dir == frames.Downstream {
			h.Consume()
			p.command(command{kind: cmdAppend, msgs: f.Messages, run: f.RunLLM})
		}
	case *frames.LLMRun:
		if dir == frames.Downstream {
			h.Consume()
			p.command(command{kind: cmdRun})
		}
	case *frames.LLMSetTools:
		if dir == frames.Downstream {
			h.Consume()
			p.s.setTools(f.Tools)
		}
	case *frames.LLMContext:
		// The server keeps the conversation: a context from an aggregator
		// has nothing to add.
		h.Consume()
	}
	return nil
}
