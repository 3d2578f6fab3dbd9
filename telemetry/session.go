package telemetry

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

// GenAISystemer is what an LLM service may implement (no import needed) to
// name its gen_ai.system ("openai", "anthropic", ...) on its spans.
type GenAISystemer interface {
	GenAISystem() string
}

// SessionOptions describe one session (one conversation).
type SessionOptions struct {
	// ID identifies the session; it is the span attribute
	// framewire.session.id, never a metric label.
	ID string
	// Transport names the session's transport ("webrtc", "websocket"),
	// the span attribute framewire.session.transport; "" leaves it out.
	Transport string
	// Attributes are added to the session span.
	Attributes []attribute.KeyValue
}

// Session follows one conversation: it is the observer that turns the
// frames of one task into the session's span tree and metrics. Get one
// from [Telemetry.StartSession] and [Session.Attach] it to the task. A nil
// *Session (telemetry off) does nothing, so code need not check.
//
// Methods are safe for concurrent use; the runtime calls Observe from the
// observer's own goroutine, never on the frame path.
type Session struct {
	tel     *Telemetry
	tracer  trace.Tracer
	metrics *Metrics
	ctx     context.Context // carries the session span
	span    trace.Span
	grace   time.Duration
	system  string

	mu       sync.Mutex
	base     time.Time // wall time of task-clock zero
	baseSet  bool
	ended    bool
	turnN    int
	turn     *turn
	calls    map[string]*service // open tool calls by tool call id
	stash    map[observers.Node]*stashed
	snapshot int // bytes of the latest ui-snapshot message
}

// turn is one conversation turn.
type turn struct {
	n           int
	kind        string // voice, text or bot
	ctx         context.Context
	span        trace.Span
	start       time.Duration
	userDone    time.Duration // when the user stopped speaking or sent text
	userDoneSet bool
	vadStop     bool
	latency     time.Duration
	latencyDone bool
	interrupted bool
	responded   bool
	lastDone    time.Duration
	speechStart time.Duration
	botSpeaking bool
	tools       int
	stt         *service
	sttEnd      time.Duration
	llms        []*service // open inferences
	lastLLM     *service
	tts         []*service // open syntheses
	timer       *time.Timer
	gen         int // bumped by activity, so a stale idle timer does nothing

	snapshot int
	commands []string
	skipped  []string
}

// service is one service or tool span.
type service struct {
	kind    string // stt, llm, tts or tool
	node    observers.Node
	name    string
	ctx     context.Context
	span    trace.Span
	start   time.Duration
	first   bool // the first text or audio arrived
	ttfbSet bool
	model   string
	chars   int
	calls   int
	tool    string
	outcome string
	skipTTS bool
}

// stashed keeps what a node's metrics said before its span existed (the
// segmented STT reports its metrics before the transcription).
type stashed struct {
	ttfb    time.Duration
	model   string
	seconds float64
}

// maxList bounds the UI commands and skipped refs recorded per turn, and
// maxCalls the tool calls open at once.
const (
	maxList  = 32
	maxCalls = 256
)

// StartSession starts the session span (a trace root) and counts the
// session as active. It returns nil when telemetry is off. End it with
// [Session.End], or let [Session.Attach] end it when the task finishes.
func (t *Telemetry) StartSession(ctx context.Context, o SessionOptions) *Session {
	if !t.Enabled() {
		return nil
	}
	s := &Session{
		tel:     t,
		tracer:  t.tracer,
		metrics: t.metrics,
		grace:   t.opts.TurnGrace,
		system:  t.opts.LLMSystem,
		calls:   map[string]*service{},
		stash:   map[observers.Node]*stashed{},
	}
	if s.tracer == nil {
		s.tracer = noop.NewTracerProvider().Tracer(ScopeName)
	}
	if s.grace == 0 {
		s.grace = 1500 * time.Millisecond
	}
	if s.system == "" {
		s.system = "_OTHER"
	}
	attrs := make([]attribute.KeyValue, 0, 2+len(o.Attributes))
	if o.ID != "" {
		attrs = append(attrs, KeySessionID.String(o.ID))
	}
	if o.Transport != "" {
		attrs = append(attrs, KeySessionTransport.String(o.Transport))
	}
	attrs = append(attrs, o.Attributes...)
	s.ctx, s.span = s.tracer.Start(context.WithoutCancel(ctx), "session",
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	t.mu.Lock()
	closed := t.closed
	if !closed {
		t.sessions[s] = struct{}{}
	}
	t.mu.Unlock()
	if closed {
		s.span.End()
		return nil
	}
	if s.metrics != nil {
		s.metrics.sessionStarted(ctx)
	}
	return s
}

// ContextWith returns ctx carrying the session span, for spans of your
// own (signalling, say) that belong to the session; for a nil session it
// returns ctx.
func (s *Session) ContextWith(ctx context.Context) context.Context {
	if s == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, s.span)
}

// Observer returns the session as an observer, or nil for a nil session:
// add it to TaskOptions.Observers only when it is not nil (Attach does
// that for you).
func (s *Session) Observer() observers.Observer {
	if s == nil {
		return nil
	}
	return s
}

// Attach adds the session's observer to task and ends the session with the
// task's finish reason when the task finishes (after the observers have
// drained), reporting the task's observer drops. It does nothing for a nil
// session, so with telemetry off the task has no observer at all.
func (s *Session) Attach(task *pipeline.Task) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.base, s.baseSet = time.Now().Add(-task.Clock().Now()), true
	s.mu.Unlock()
	task.AddObserver(s)
	task.OnFinished(func(reason string) {
		s.metrics.ObserverDrops(s.ctx, task.ObserverDrops())
		s.metrics.QueueHighWater(s.ctx, QueuePipeline, task.QueueHighWater())
		s.End(reason)
	})
}

// End ends the session: the open turn, open spans and the session span,
// with reason (a task finish reason such as "ended" or "cancelled: ...";
// metrics see only its class). Later calls do nothing.
func (s *Session) End(reason string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	now := s.now()
	if t := s.turn; t != nil {
		s.endTurn(t, now, false)
	}
	for id, c := range s.calls {
		s.endService(c, now, OutcomeCancelled)
		delete(s.calls, id)
	}
	class := reasonClass(reason)
	s.span.SetAttributes(KeySessionReason.String(class))
	s.span.End()
	s.mu.Unlock()
	if s.metrics != nil {
		s.metrics.sessionEnded(s.ctx, class)
	}
	s.tel.mu.Lock()
	delete(s.tel.sessions, s)
	s.tel.mu.Unlock()
}

// reasonClass maps a finish reason onto the few values a metric label
// may take.
func reasonClass(r string) string {
	switch {
	case r == "ended", r == "shutdown", r == "error":
		return r
	case strings.HasPrefix(r, "cancelled"):
		return "cancelled"
	case r == "context done":
		return "context_done"
	case r == "setup failed":
		return "setup_failed"
	case r == "start timeout":
		return "start_timeout"
	}
	return "other"
}

// now is the task clock now. The caller holds mu.
func (s *Session) now() time.Duration {
	if !s.baseSet {
		return 0
	}
	return time.Since(s.base)
}

// wall turns a task-clock reading into a span timestamp option.
func (s *Session) wall(at time.Duration) trace.SpanStartEventOption {
	return trace.WithTimestamp(s.base.Add(at))
}

// Wants implements observers.Filter: it runs on the pipeline side for
// every event, so it only switches on the frame's type.
func (s *Session) Wants(kind observers.EventKind, f frames.Frame) bool {
	if kind != observers.Pushed {
		return false
	}
	return wanted(f)
}

func wanted(f frames.Frame) bool {
	switch f.(type) {
	case *frames.InputAudioRaw, *frames.OutputAudioRaw, *frames.UserSpeaking, *frames.BotSpeaking:
		return false
	case *frames.UserStartedSpeaking, *frames.UserStoppedSpeaking, *frames.VADUserStoppedSpeaking,
		*frames.Transcription, *frames.InterimTranscription, *frames.InputTextRaw, *frames.LLMMessagesAppend,
		*frames.LLMFullResponseStart, *frames.LLMText, *frames.LLMFullResponseEnd,
		*frames.FunctionCallsStarted, *frames.FunctionCallResult, *frames.FunctionCallCancel,
		*frames.TTSStarted, *frames.TTSAudioRaw, *frames.TTSStopped,
		*frames.BotStartedSpeaking, *frames.BotStoppedSpeaking, *frames.Interruption,
		*frames.Metrics, *frames.Error, frames.UISnapshotter, frames.UICommander:
		return true
	}
	return false
}

// Observe implements observers.Observer.
func (s *Session) Observe(e observers.Event) {
	if e.Kind != observers.Pushed || !e.FirstSeen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if !s.baseSet {
		s.base, s.baseSet = time.Now().Add(-e.At), true
	}
	at := e.At
	if err, ok := e.Frame.(*frames.Error); ok {
		if e.Direction == frames.Upstream {
			s.serviceError(e.Source, err)
		}
		return
	}
	if e.Direction != frames.Downstream {
		return
	}
	switch f := e.Frame.(type) {
	case *frames.UserStartedSpeaking:
		s.userStarted(at, f.Emulated)
	case *frames.VADUserStoppedSpeaking:
		if t := s.turn; t != nil && t.kind == "voice" {
			t.userDone, t.userDoneSet, t.vadStop = at-time.Duration(f.StopSecs*float64(time.Second)), true, true
		}
	case *frames.UserStoppedSpeaking:
		if t := s.turn; t != nil && !t.vadStop {
			t.userDone, t.userDoneSet = at, true
		}
	case *frames.Transcription:
		s.transcription(e.Source, at, len(f.Text), false)
	case *frames.InterimTranscription:
		s.transcription(e.Source, at, 0, true)
	case *frames.InputTextRaw:
		s.userText(at)
	case *frames.LLMMessagesAppend:
		if f.RunLLM && hasUserMessage(f.Messages) {
			s.userText(at)
		}
	case *frames.LLMFullResponseStart:
		s.llmStarted(e.Source, at, f.SkipTTS)
	case *frames.LLMText:
		s.llmText(e.Source, at, f)
	case *frames.LLMFullResponseEnd:
		s.llmEnded(e.Source, at)
	case *frames.FunctionCallsStarted:
		s.callsStarted(e.Source, at, f)
	case *frames.FunctionCallResult:
		if !f.Properties.Intermediate {
			outcome, skipped := resultInfo(f.Result)
			s.callEnded(f.ToolCallID, at, outcome, skipped)
		}
	case *frames.FunctionCallCancel:
		s.callEnded(f.ToolCallID, at, OutcomeCancelled, nil)
	case *frames.TTSStarted:
		s.ttsStarted(e.Source, at)
	case *frames.TTSAudioRaw:
		if sv := find(s.turnTTS(), e.Source); sv != nil && !sv.first {
			sv.first = true
			if !sv.ttfbSet {
				s.ttfb(sv, at-sv.start)
			}
		}
	case *frames.TTSStopped:
		s.ttsStopped(e.Source, at)
	case *frames.BotStartedSpeaking:
		t := s.ensureTurn(at)
		t.botSpeaking = true
		s.activity(t)
		s.turnLatency(t, at)
	case *frames.BotStoppedSpeaking:
		if t := s.turn; t != nil {
			t.botSpeaking = false
			t.lastDone = at
			s.maybeIdle(t)
		}
	case *frames.Interruption:
		if t := s.turn; t != nil && t.busy() {
			s.interrupt(t, at)
		}
	case *frames.Metrics:
		s.metricsFrame(e.Source, f)
	case frames.UISnapshotter:
		s.snapshot = f.UISnapshotBytes()
		if t := s.turn; t != nil {
			t.snapshot = s.snapshot
		}
	case frames.UICommander:
		if t := s.turn; t != nil && len(t.commands) < maxList {
			t.commands = append(t.commands, f.UICommandName())
		}
	}
}

func hasUserMessage(ms []frames.LLMMessage) bool {
	for _, m := range ms {
		if m.Role == "user" {
			return true
		}
	}
	return false
}

// busy reports whether the bot is doing something the user can cut off.
func (t *turn) busy() bool { return len(t.llms) > 0 || len(t.tts) > 0 || t.botSpeaking }

// answered reports whether the bot has started on this turn.
func (t *turn) answered() bool { return t.responded || len(t.tts) > 0 || t.botSpeaking }

func (s *Session) userStarted(at time.Duration, emulated bool) {
	t := s.turn
	if t != nil && t.answered() {
		s.endTurn(t, at, t.busy())
		t = nil
	}
	if t == nil {
		kind := "voice"
		if emulated {
			kind = "text"
		}
		t = s.openTurn(at, kind)
	}
	if t.speechStart == 0 {
		t.speechStart = at
	}
	t.userDoneSet, t.vadStop = false, false
}

func (s *Session) userText(at time.Duration) {
	t := s.turn
	if t != nil && t.answered() {
		s.endTurn(t, at, t.busy())
		t = nil
	}
	if t == nil {
		t = s.openTurn(at, "text")
	}
	t.userDone, t.userDoneSet = at, true
}

func (s *Session) openTurn(at time.Duration, kind string) *turn {
	s.turnN++
	t := &turn{n: s.turnN, kind: kind, start: at, snapshot: s.snapshot}
	t.ctx, t.span = s.tracer.Start(s.ctx, "turn", s.wall(at),
		trace.WithAttributes(KeyTurnNumber.Int(t.n), KeyTurnKind.String(kind)))
	s.turn = t
	return t
}

// ensureTurn returns the open turn, or opens one the bot started.
func (s *Session) ensureTurn(at time.Duration) *turn {
	if s.turn != nil {
		return s.turn
	}
	return s.openTurn(at, "bot")
}

func (s *Session) endTurn(t *turn, at time.Duration, interrupted bool) {
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	s.closeSTT(t)
	if interrupted {
		s.interrupt(t, at)
	}
	for _, sv := range t.llms {
		s.endService(sv, at, OutcomeOK)
	}
	for _, sv := range t.tts {
		s.endService(sv, at, OutcomeOK)
	}
	t.llms, t.tts = nil, nil
	end := at
	if !t.interrupted && t.lastDone > t.start && t.lastDone < at {
		end = t.lastDone
	}
	attrs := []attribute.KeyValue{KeyTurnInterrupted.Bool(t.interrupted)}
	if t.latencyDone {
		attrs = append(attrs, KeyTurnLatencyMS.Float64(ms(t.latency)))
	}
	if t.snapshot > 0 || len(t.commands) > 0 || len(t.skipped) > 0 {
		attrs = append(attrs, KeyUISnapshotBytes.Int(t.snapshot), KeyUICommandCount.Int(len(t.commands)),
			KeyUICommands.StringSlice(t.commands), KeyUISkippedRefs.StringSlice(t.skipped))
	}
	t.span.SetAttributes(attrs...)
	t.span.End(trace.WithTimestamp(s.base.Add(end)))
	if s.metrics != nil {
		s.metrics.turnEnded(s.ctx, t.kind, t.interrupted)
	}
	if s.turn == t {
		s.turn = nil
	}
}

// activity cancels a pending idle end of t.
func (s *Session) activity(t *turn) {
	t.gen++
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

// maybeIdle ends t after the grace period once the bot has answered and
// nothing is running; activity in between cancels it.
func (s *Session) maybeIdle(t *turn) {
	if !t.answered() || t.busy() || t.tools > 0 {
		return
	}
	s.activity(t)
	if s.grace < 0 {
		s.endTurn(t, t.lastDone, false)
		return
	}
	gen := t.gen
	t.timer = time.AfterFunc(s.grace, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.ended && s.turn == t && t.gen == gen {
			s.endTurn(t, t.lastDone, false)
		}
	})
}

func (s *Session) interrupt(t *turn, at time.Duration) {
	t.interrupted = true
	for _, sv := range t.llms {
		s.endService(sv, at, OutcomeInterrupted)
	}
	for _, sv := range t.tts {
		s.endService(sv, at, OutcomeInterrupted)
	}
	t.llms, t.tts = nil, nil
	t.botSpeaking = false
	t.lastDone = at
	if s.metrics != nil {
		s.metrics.interruption(s.ctx)
	}
	s.maybeIdle(t)
}

func (s *Session) turnLatency(t *turn, at time.Duration) {
	if t.latencyDone || !t.userDoneSet {
		return
	}
	d := max(at-t.userDone, 0)
	t.latency, t.latencyDone = d, true
	if s.metrics != nil {
		s.metrics.latency(s.ctx, t.kind, d)
	}
}

func (s *Session) startService(parent context.Context, kind, name string, node observers.Node, at time.Duration, attrs ...attribute.KeyValue) *service {
	sv := &service{kind: kind, node: node, start: at, name: nodeName(node)}
	if m, ok := processorOf(node).(frames.Modeler); ok {
		sv.model = m.Model()
	}
	attrs = append(attrs, KeyServiceKind.String(kind), KeyService.String(sv.name))
	sv.ctx, sv.span = s.tracer.Start(parent, name, s.wall(at), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return sv
}

func (s *Session) endService(sv *service, at time.Duration, outcome string) {
	if sv.outcome == "" {
		sv.outcome = outcome
	}
	attrs := []attribute.KeyValue{KeyOutcome.String(sv.outcome)}
	switch sv.kind {
	case "llm":
		attrs = append(attrs, KeyLLMOutputChars.Int(sv.chars))
	case "stt":
		attrs = append(attrs, KeySTTTranscript.Int(sv.chars))
	}
	if sv.outcome == OutcomeInterrupted {
		attrs = append(attrs, KeyInterrupted.Bool(true))
	}
	s.setModel(sv, sv.model)
	sv.span.SetAttributes(attrs...)
	sv.span.End(trace.WithTimestamp(s.base.Add(at)))
}

func (s *Session) setModel(sv *service, model string) {
	if model == "" {
		return
	}
	sv.model = model
	if sv.kind == "llm" {
		sv.span.SetName("chat " + model)
		sv.span.SetAttributes(KeyGenAIRequestModel.String(model))
	} else if sv.kind != "tool" {
		sv.span.SetAttributes(KeyServiceModel.String(model))
	}
}

func (s *Session) ttfb(sv *service, d time.Duration) {
	sv.ttfbSet = true
	sv.span.SetAttributes(KeyTTFBMS.Float64(ms(d)))
	if s.metrics != nil {
		s.metrics.serviceTTFB(s.ctx, sv.kind, sv.name, sv.model, d)
	}
}

func (s *Session) transcription(node observers.Node, at time.Duration, chars int, interim bool) {
	t := s.turn
	if t == nil {
		t = s.openTurn(at, "voice")
		t.userDone, t.userDoneSet = at, true
	}
	if t.stt == nil && !t.responded {
		start := t.speechStart
		if start == 0 {
			start = at
		}
		t.stt = s.startService(t.ctx, "stt", "stt", node, start)
		if st := s.stash[node]; st != nil {
			delete(s.stash, node)
			s.setModel(t.stt, st.model)
			if st.ttfb > 0 {
				s.ttfb(t.stt, st.ttfb)
			}
			if st.seconds > 0 {
				t.stt.span.SetAttributes(KeySTTAudioSeconds.Float64(st.seconds))
			}
		}
	}
	if t.stt != nil && !interim {
		t.stt.chars += chars
		t.sttEnd = at
	}
}

func (s *Session) closeSTT(t *turn) {
	if t.stt == nil || t.stt.outcome != "" {
		return
	}
	end := t.sttEnd
	if end < t.stt.start {
		end = t.stt.start
	}
	s.endService(t.stt, end, OutcomeOK)
}

func (s *Session) llmStarted(node observers.Node, at time.Duration, skipTTS bool) {
	t := s.ensureTurn(at)
	s.closeSTT(t)
	s.activity(t)
	system := s.system
	if g, ok := processorOf(node).(GenAISystemer); ok && g.GenAISystem() != "" {
		system = g.GenAISystem()
	}
	sv := s.startService(t.ctx, "llm", "chat", node, at,
		KeyGenAIOperationName.String("chat"), KeyGenAISystem.String(system))
	if sv.model != "" {
		s.setModel(sv, sv.model)
	}
	sv.skipTTS = skipTTS
	t.llms = append(t.llms, sv)
	t.lastLLM = sv
	t.responded = true
}

func (s *Session) llmText(node observers.Node, at time.Duration, f *frames.LLMText) {
	t := s.turn
	if t == nil {
		return
	}
	sv := find(t.llms, node)
	if sv == nil {
		return
	}
	if !sv.first {
		sv.first = true
		if !sv.ttfbSet {
			s.ttfb(sv, at-sv.start)
		}
	}
	sv.chars += len(f.Text)
	if t.kind == "text" || f.SkipTTS || sv.skipTTS {
		s.turnLatency(t, at)
	}
}

func (s *Session) llmEnded(node observers.Node, at time.Duration) {
	t := s.turn
	if t == nil {
		return
	}
	if sv := remove(&t.llms, node); sv != nil {
		s.endService(sv, at, OutcomeOK)
		t.lastDone = at
		s.maybeIdle(t)
	}
}

func (s *Session) callsStarted(node observers.Node, at time.Duration, f *frames.FunctionCallsStarted) {
	t := s.ensureTurn(at)
	s.activity(t)
	parent := find(t.llms, node)
	if parent == nil {
		parent = t.lastLLM
	}
	ctx := t.ctx
	if parent != nil {
		ctx = parent.ctx
		parent.calls += len(f.Calls)
	}
	for _, c := range f.Calls {
		if len(s.calls) >= maxCalls {
			break
		}
		if old := s.calls[c.ToolCallID]; old != nil {
			s.endService(old, at, OutcomeCancelled)
		}
		sv := &service{kind: "tool", node: node, start: at, tool: c.Name, name: nodeName(node)}
		sv.ctx, sv.span = s.tracer.Start(ctx, "execute_tool "+c.Name, s.wall(at), trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(KeyGenAIOperationName.String("execute_tool"), KeyGenAIToolName.String(c.Name),
				KeyGenAIToolCallID.String(c.ToolCallID), KeyToolGroupID.String(f.GroupID)))
		s.calls[c.ToolCallID] = sv
		t.tools++
	}
}

func (s *Session) callEnded(id string, at time.Duration, outcome string, skipped []string) {
	sv := s.calls[id]
	if sv == nil {
		return
	}
	delete(s.calls, id)
	if outcome == OutcomeError {
		sv.span.SetStatus(codes.Error, "the tool returned an error")
	}
	s.endService(sv, at, outcome)
	if s.metrics != nil {
		s.metrics.toolCall(s.ctx, sv.tool, sv.outcome)
	}
	if t := s.turn; t != nil {
		for _, r := range skipped {
			if len(t.skipped) < maxList {
				t.skipped = append(t.skipped, r)
			}
		}
		if t.tools > 0 {
			t.tools--
		}
		t.lastDone = at
		s.maybeIdle(t)
	}
}

func (s *Session) turnTTS() []*service {
	if s.turn == nil {
		return nil
	}
	return s.turn.tts
}

func (s *Session) ttsStarted(node observers.Node, at time.Duration) {
	t := s.ensureTurn(at)
	s.activity(t)
	t.tts = append(t.tts, s.startService(t.ctx, "tts", "tts", node, at))
}

func (s *Session) ttsStopped(node observers.Node, at time.Duration) {
	t := s.turn
	if t == nil {
		return
	}
	if sv := remove(&t.tts, node); sv != nil {
		s.endService(sv, at, OutcomeOK)
		t.lastDone = at
		s.maybeIdle(t)
	}
}

// openOf returns the open span of node in the current turn.
func (s *Session) openOf(node observers.Node) *service {
	t := s.turn
	if t == nil {
		return nil
	}
	if sv := find(t.llms, node); sv != nil {
		return sv
	}
	if sv := find(t.tts, node); sv != nil {
		return sv
	}
	if t.stt != nil && t.stt.node == node && t.stt.outcome == "" {
		return t.stt
	}
	return nil
}

func (s *Session) metricsFrame(node observers.Node, f *frames.Metrics) {
	sv := s.openOf(node)
	for _, m := range f.Data {
		if sv == nil {
			if m.Kind == frames.MetricTTFB || m.Kind == frames.MetricSTTUsage {
				st := s.stash[node]
				if st == nil {
					if len(s.stash) >= maxList {
						continue
					}
					st = &stashed{}
					s.stash[node] = st
				}
				if m.Model != "" {
					st.model = m.Model
				}
				if m.Kind == frames.MetricTTFB {
					st.ttfb = m.Value
				} else {
					st.seconds = m.AudioSeconds
				}
			}
			continue
		}
		if m.Model != "" && m.Model != sv.model {
			s.setModel(sv, m.Model)
		}
		switch m.Kind {
		case frames.MetricTTFB:
			if !sv.ttfbSet {
				s.ttfb(sv, m.Value)
			}
		case frames.MetricLLMUsage:
			sv.span.SetAttributes(KeyGenAIInputTokens.Int(m.Usage.PromptTokens), KeyGenAIOutputTokens.Int(m.Usage.CompletionTokens))
			if s.metrics != nil {
				s.metrics.tokenUsage(s.ctx, sv.model, m.Usage.PromptTokens, m.Usage.CompletionTokens)
			}
		case frames.MetricTTSUsage:
			sv.span.SetAttributes(KeyTTSCharacters.Int(m.Characters))
		case frames.MetricSTTUsage:
			sv.span.SetAttributes(KeySTTAudioSeconds.Float64(m.AudioSeconds))
		}
	}
}

func (s *Session) serviceError(node observers.Node, err *frames.Error) {
	sv := s.openOf(node)
	if sv == nil {
		return
	}
	sv.outcome = OutcomeError
	msg := err.Error()
	if len(msg) > 256 {
		msg = msg[:256]
	}
	sv.span.SetStatus(codes.Error, msg)
	sv.span.SetAttributes(KeyErrorCat.String(err.Category.String()))
}

func find(list []*service, node observers.Node) *service {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].node == node {
			return list[i]
		}
	}
	return nil
}

func remove(list *[]*service, node observers.Node) *service {
	l := *list
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].node == node {
			sv := l[i]
			*list = append(l[:i], l[i+1:]...)
			return sv
		}
	}
	return nil
}

func nodeName(n observers.Node) string {
	if n == nil {
		return "task"
	}
	return n.Name()
}

func processorOf(n observers.Node) any {
	if n == nil {
		return nil
	}
	return n.Processor()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
