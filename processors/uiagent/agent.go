package uiagent

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// blockMessage returns the context message of one of the agent's blocks
// (<ui_state>, <ui_event>): a user message, as what the page says is
// untrusted input. A developer or system message would give it the
// authority of the application's own instructions (OpenAI's instruction
// hierarchy ranks developer above user; OpenAI Realtime has system items
// only), so text on the page could outrank the system prompt.
func blockMessage(text string) frames.LLMMessage { return llm.UserMessage(text) }

// History says what the LLM context keeps from one user turn to the next.
type History uint8

const (
	// Stateless (the default) starts every user turn from the context's
	// preamble (its leading system and developer messages, the prompt
	// guide among them): the model sees only the preamble, the UI events
	// since the last inference, the user's words and the current
	// <ui_state>. Old screens can never confuse it.
	Stateless History = iota
	// KeepHistory keeps the whole conversation (queries, tool calls,
	// answers), for deixis across turns ("a note for that"). Older
	// <ui_state> blocks are collapsed to [StaleUIState], so only the
	// latest screen is readable.
	KeepHistory
)

// AnswerMode says how the answer of a turn reaches the user.
type AnswerMode uint8

const (
	// AnswerSpeak (the default) speaks the answer verbatim: a
	// frames.TTSSpeak pushed downstream from the agent, which the TTS
	// speaks and the assistant aggregator records in the context.
	AnswerSpeak AnswerMode = iota
	// AnswerText sends the answer as an LLM response of its own
	// (LLMFullResponseStart, LLMText, LLMFullResponseEnd) for pipelines
	// whose bot text comes from the LLM: a TTS speaks it, the RTVI
	// observer sends it as bot-llm-text, the aggregator records it. The
	// response also carries the whole answer as an unspoken AggregatedText,
	// which the RTVI observer sends as bot-output in text-only pipelines;
	// with a TTS in the pipeline prefer AnswerSpeak, or the client sees the
	// answer twice in bot-output.
	AnswerText
	// AnswerPhrase hands the answer back to the model in the tool result
	// ({"answer": ...}) and runs inference once more, so the model
	// phrases the reply itself (Pipecat's tts_speak=False).
	AnswerPhrase
	// AnswerManual delivers nothing: Options.OnTurnEnd gets the answer.
	AnswerManual
)

// Options configure an [Agent]. The zero value is ready to use: stateless
// turns, <ui_state> and <ui_event> injection on (page text escaped, the
// <ui_state> block within the default [RenderLimits]), the default prompt
// guide, answers spoken verbatim, refs checked, no watchdog, task groups
// within the defaults of [TaskGroupsOptions].
type Options struct {
	// History chooses what the context keeps between user turns.
	History History
	// NoUIState turns off the <ui_state> injection before user turns.
	NoUIState bool
	// NoEvents keeps UI events out of the context; handlers still run.
	NoEvents bool
	// PromptGuide replaces [DefaultPromptGuide]; NoPromptGuide leaves the
	// system instruction alone (for apps that write their own).
	PromptGuide   string
	NoPromptGuide bool
	// Render replaces [RenderUIState], for example to prepend app notes.
	// An empty result skips the injection for that turn. It should pass
	// page text through [EscapeText] (or call RenderLimits.Render), so
	// that the page cannot open or close the agent's tags.
	Render func(s *wire.Snapshot) string
	// RenderLimits bound the <ui_state> block written before each user
	// turn (not a custom Render's): by default at most
	// [DefaultMaxNodes] nodes and [DefaultMaxBytes] bytes, with a marker
	// line saying how many nodes were left out.
	RenderLimits RenderLimits
	// RenderEvent replaces [RenderEvent]; an empty result keeps the event
	// out of the context. Like Render, it should escape what the page
	// sent.
	RenderEvent func(name string, payload wire.RawJSON) string
	// Answer chooses how answers reach the user.
	Answer AnswerMode
	// NoRefCheck sends reply actions for any ref, without checking the
	// current snapshot.
	NoRefCheck bool
	// Watchdog ends a turn that has no answer after this long (the
	// turn's Outcome is TimedOut), says the FallbackAnswer and releases
	// the turn, so a model that hangs never leaves the user without an
	// answer. Default: DefaultWatchdog; negative turns it off.
	Watchdog time.Duration
	// FallbackAnswer is said when a turn ends without an answer (the
	// watchdog fired, the model said nothing, or its request failed).
	// Default: DefaultFallbackAnswer; NoFallbackAnswer says nothing.
	FallbackAnswer string
	// NoFallbackAnswer says nothing when a turn ends without an answer.
	NoFallbackAnswer bool
	// OnTurnEnd is called once per turn with its answer and outcome, on
	// the goroutine that ended it; it must be quick.
	OnTurnEnd func(Answer)
	// MaxPendingEvents bounds the <ui_event> blocks waiting for the next
	// inference; the oldest is dropped beyond it. Default: 32.
	MaxPendingEvents int
	// MaxEventHandlers bounds the event handlers running at once; events
	// beyond it are not handed to handlers (logged). Default: 64.
	MaxEventHandlers int
	// MaxTaskGroups and MaxTaskWorkers bound the agent's task groups
	// ([TaskGroupsOptions.MaxGroups] and [TaskGroupsOptions.MaxWorkers]):
	// by default 16 groups running at once and 64 workers across them.
	MaxTaskGroups, MaxTaskWorkers int
	// Name is the processor's display name. Default: "UIAgent#<id>".
	Name string
	// Logger receives the agent's logs. Default: the task's logger.
	Logger *zap.Logger
}

// Agent is the UI agent: a pipeline processor that keeps the latest
// accessibility snapshot, writes <ui_state> and <ui_event> blocks into the
// LLM context, sends UI commands, runs the reply tool and its turns, and
// owns the task groups the page shows as cards.
//
// [NewVoiceAgent] wires one in a call. By hand (one LLM that sees the
// page):
//
//	agent := uiagent.New(uiagent.Options{})
//	conv := llm.NewContext(llm.SystemMessage("You help the user with this page."))
//	conv.SetTools(llm.Tools(agent.ReplyTool()))
//	pair := llm.NewPair(conv, llm.PairOptions{BeforeInference: agent.BeforeInference})
//	svc := llm.NewService(agent.Provider(provider), llm.ServiceOptions{})
//	svc.Register(agent.ReplyTool())
//	rt := rtvi.NewProcessor(rtvi.Options{})
//	p := pipeline.New(in, rt, stt, agent, pair.User(), svc, tts, out, pair.Assistant())
//	task := pipeline.NewTask(p, pipeline.TaskOptions{}) // rt brings its observer
//
// The agent must sit downstream of the rtvi.Processor (it takes the UI
// frames) and upstream of the user aggregator (answers and [Agent.Ask]
// queries flow down from it). BeforeInference is what injects <ui_state>
// and tracks turns; Provider is optional and adds stray-text handling.
//
// A turn starts with each user-turn inference (the last context message
// is the user's) or with [Agent.Ask], and ends once: with a reply, with
// the model's plain text, with nothing, by the watchdog, or cancelled (an
// interruption, a newer user turn, or the Ask caller giving up). Asks are
// single-flight: one at a time, in arrival order; cancellation always
// releases the next.
type Agent struct {
	once  sync.Once
	opts  Options
	name  string
	log   atomic.Pointer[zap.Logger]
	clog  atomic.Pointer[zap.Logger] // log, sampled: lines a client can cause
	out   pipeline.Outlet            // the agent's frames and background work, its task groups' too
	snap  atomic.Pointer[wire.Snapshot]
	cache atomic.Pointer[rendered]
	tasks *TaskGroups

	busy    atomic.Int32  // event handlers running
	ended   chan struct{} // closed at Cleanup: Asks stop waiting
	endOnce sync.Once

	askSem chan struct{}

	// mu guards what follows. It is needed: the agent's state is shared
	// by the agent's own node (snapshots, events, interruptions), the user
	// aggregator's goroutine (BeforeInference), the LLM service's stream
	// and tool handlers (Provider, Respond), the watchdog's timer and the
	// callers of Ask, which are different goroutines.
	mu         sync.Mutex
	events     []frames.LLMMessage // rendered events waiting for the next inference
	handlers   map[string]func(context.Context, wire.RawJSON)
	cur        *turn // the latest turn (possibly ended)
	pendingAsk *turn // an Ask whose query has not reached inference yet
	tracked    bool  // turns are tracked (BeforeInference or Ask has run)
	lastGroup  string
	afterFlush map[uint64]func() // run when the agent's flush probe comes back
}

type rendered struct {
	snap *wire.Snapshot
	text string
}

// DefaultWatchdog is how long a turn may go without an answer by default
// (Options.Watchdog): longer than a model's own time-to-first-byte bound,
// so the watchdog only fires when everything else failed to.
const DefaultWatchdog = 45 * time.Second

// DefaultFallbackAnswer is what the agent says by default when a turn
// ends without an answer (Options.FallbackAnswer).
const DefaultFallbackAnswer = "Sorry, I could not come up with an answer just now. Could you say that again?"

// New returns an agent with o. The zero Agent works too, with the
// defaults of the zero Options.
func New(o Options) *Agent {
	a := &Agent{opts: o}
	a.ensure()
	return a
}

// ensure sets the agent up on first use.
func (a *Agent) ensure() { a.once.Do(a.init) }

func (a *Agent) init() {
	o := &a.opts
	switch {
	case o.Watchdog == 0:
		o.Watchdog = DefaultWatchdog
	case o.Watchdog < 0:
		o.Watchdog = 0 // off
	}
	switch {
	case o.NoFallbackAnswer:
		o.FallbackAnswer = ""
	case o.FallbackAnswer == "":
		o.FallbackAnswer = DefaultFallbackAnswer
	}
	if o.MaxPendingEvents <= 0 {
		o.MaxPendingEvents = 32
	}
	if o.MaxEventHandlers <= 0 {
		o.MaxEventHandlers = 64
	}
	if o.PromptGuide == "" {
		o.PromptGuide = DefaultPromptGuide
	}
	a.name = o.Name
	if a.name == "" {
		a.name = fmt.Sprintf("UIAgent#%d", frames.NextID())
	}
	a.askSem = make(chan struct{}, 1)
	a.handlers = map[string]func(context.Context, wire.RawJSON){}
	a.afterFlush = map[uint64]func(){}
	a.ended = make(chan struct{})
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	a.setLogger(log)
	a.tasks = newTaskGroups(TaskGroupsOptions{Name: a.name + "/tasks", Logger: o.Logger,
		MaxGroups: o.MaxTaskGroups, MaxWorkers: o.MaxTaskWorkers}, &a.out)
}

// Name implements pipeline.Namer.
func (a *Agent) Name() string { a.ensure(); return a.name }

func (a *Agent) logger() *zap.Logger { a.ensure(); return a.log.Load() }

// clientLog is the logger of lines a client can cause at will (an event
// flood, a repeated client-ready): sampled, see [sampled].
func (a *Agent) clientLog() *zap.Logger { a.ensure(); return a.clog.Load() }

func (a *Agent) setLogger(l *zap.Logger) {
	a.log.Store(l)
	a.clog.Store(sampled(l))
}

// sampled returns l writing, of each message at each level, the first 5
// lines a second and then one in 100, as the RTVI processor does for
// lines about single client messages: a client that causes one line per
// message it sends cannot flood the log.
func sampled(l *zap.Logger) *zap.Logger {
	return logsample.Logger(l)
}

// Setup implements pipeline.Setupper: it attaches the agent's outlet,
// through which commands, answers and task-group envelopes go out from
// any goroutine (what was sent before the task ran goes in now) and on
// which event handlers and task-group workers run as the task's
// background work.
func (a *Agent) Setup(_ context.Context, s pipeline.Setup) error {
	a.ensure()
	s.Attach(&a.out)
	if a.opts.Logger == nil && s.Logger != nil {
		a.setLogger(s.Logger)
		a.tasks.setLogger(s.Logger)
	}
	return nil
}

// Cleanup implements pipeline.Cleaner: it cancels open turns and task
// groups and releases waiting Asks. Event handlers and task-group workers
// are the task's background work: their context has ended by now and the
// task waits for them.
func (a *Agent) Cleanup(ctx context.Context) error {
	a.ensure()
	a.endOnce.Do(func() { close(a.ended) })
	a.mu.Lock()
	clear(a.afterFlush)
	var ended []*turn
	for _, t := range []*turn{a.cur, a.pendingAsk} {
		if t != nil && a.finishLocked(t, Answer{Outcome: Cancelled}) {
			ended = append(ended, t)
		}
	}
	a.mu.Unlock()
	for _, t := range ended {
		a.after(t, false)
	}
	return a.tasks.Cleanup(ctx)
}

// ProcessFrame implements pipeline.Processor. It takes snapshots, events
// and cancel requests from the RTVI processor (and forwards them), ends
// open turns on interruptions, and ends running task groups (with their
// envelopes) when End passes. Everything else passes through untouched.
func (a *Agent) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	a.ensure()
	switch f := f.(type) {
	case *frames.Flush:
		if dir == frames.Upstream {
			a.mu.Lock()
			fn := a.afterFlush[f.Token]
			delete(a.afterFlush, f.Token)
			a.mu.Unlock()
			if fn != nil {
				h.Consume()
				fn()
			}
		}
	case *rtvi.UISnapshotFrame:
		a.SetSnapshot(f.Tree)
	case *rtvi.UIEventFrame:
		a.handleEvent(f.Event, f.Payload)
	case *rtvi.UICancelTaskFrame:
		a.tasks.HandleCancel(f)
	case *frames.Interruption:
		a.interrupted(f.ID())
	case *frames.End:
		a.tasks.cancelAll("the session ended")
	}
	return nil
}

// SetSnapshot replaces the latest snapshot (nil is ignored). The agent
// does this for every rtvi.UISnapshotFrame it sees; call it to feed
// snapshots from elsewhere (for example rtvi.Processor.OnUIMessage).
func (a *Agent) SetSnapshot(s *wire.Snapshot) {
	if s != nil {
		a.snap.Store(s)
	}
}

// Snapshot returns the latest snapshot, or nil before the first one. It
// must not be changed.
func (a *Agent) Snapshot() *wire.Snapshot { return a.snap.Load() }

// UIState returns the <ui_state> block of the latest snapshot (through
// Options.Render when set), or "" when there is none.
func (a *Agent) UIState() string {
	s := a.snap.Load()
	if s == nil {
		return ""
	}
	if a.opts.Render != nil {
		return a.opts.Render(s)
	}
	if c := a.cache.Load(); c != nil && c.snap == s {
		return c.text
	}
	text := a.opts.RenderLimits.Render(s)
	a.cache.Store(&rendered{snap: s, text: text})
	return text
}

// InjectUIState appends the current <ui_state> block to c as a user
// message now (page content is untrusted input, see [Agent.BeforeInference]),
// for apps that turned the automatic injection off. It reports whether
// there was anything to inject.
func (a *Agent) InjectUIState(c *llm.Context) bool {
	text := a.UIState()
	if text == "" {
		return false
	}
	c.Add(blockMessage(text))
	return true
}

// ResetContext clears the conversation of c down to its preamble (the
// leading system and developer messages, prompt guide included), for apps
// that keep history and want a fresh start.
func (a *Agent) ResetContext(c *llm.Context) {
	c.Transform(func(msgs []frames.LLMMessage) []frames.LLMMessage {
		return msgs[:preambleLen(msgs)]
	})
}

// Tasks returns the agent's task groups: their envelopes go out from the
// agent, and the client's cancel requests reach them through it.
func (a *Agent) Tasks() *TaskGroups { a.ensure(); return a.tasks }

// OnEvent registers fn for the UI event name. fn runs on its own goroutine
// after the event has been queued for the context, with a context that
// ends when the pipeline does; it does not run the LLM (send commands from
// it, or call [Agent.Ask]). Registering a second handler for a name is an
// error.
func (a *Agent) OnEvent(name string, fn func(ctx context.Context, payload wire.RawJSON)) error {
	a.ensure()
	if fn == nil {
		return fmt.Errorf("uiagent: nil handler for event %q", name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.handlers[name]; dup {
		return fmt.Errorf("uiagent: event %q already has a handler", name)
	}
	a.handlers[name] = fn
	return nil
}

// HandleEvent registers a typed handler for the UI event name: the payload
// is decoded into a T (an absent or null payload gives the zero T). A
// payload that does not decode is logged and the handler is not called.
func HandleEvent[T any](a *Agent, name string, fn func(ctx context.Context, payload T)) error {
	if fn == nil {
		return fmt.Errorf("uiagent: nil handler for event %q", name)
	}
	return a.OnEvent(name, func(ctx context.Context, raw wire.RawJSON) {
		var v T
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &v); err != nil {
				a.clientLog().Warn("UI event payload does not fit its handler",
					zap.String("event", name), zap.String("type", reflect.TypeFor[T]().String()), zap.Error(err))
				return
			}
		}
		fn(ctx, v)
	})
}

// handleEvent queues the rendered event for the context and starts its
// handler.
func (a *Agent) handleEvent(name string, payload wire.RawJSON) {
	a.ensure()
	if !a.opts.NoEvents {
		render := RenderEvent
		if a.opts.RenderEvent != nil {
			render = a.opts.RenderEvent
		}
		if text := render(name, payload); text != "" {
			a.mu.Lock()
			if len(a.events) >= a.opts.MaxPendingEvents {
				a.clientLog().Warn("too many UI events waiting for the next inference; dropping the oldest", zap.Int("max", a.opts.MaxPendingEvents))
				a.events = append(a.events[:0], a.events[1:]...)
			}
			a.events = append(a.events, blockMessage(text))
			a.mu.Unlock()
		}
	}
	a.mu.Lock()
	fn := a.handlers[name]
	a.mu.Unlock()
	if fn == nil {
		return
	}
	if int(a.busy.Add(1)) > a.opts.MaxEventHandlers {
		a.busy.Add(-1)
		a.clientLog().Warn("too many UI event handlers running; not handling this event", zap.String("event", name))
		return
	}
	err := a.out.Go("UI event handler "+name, func(ctx context.Context) error {
		defer a.busy.Add(-1)
		defer func() {
			if r := recover(); r != nil {
				a.clientLog().Error("UI event handler panicked", zap.String("event", name), zap.Any("panic", r))
			}
		}()
		fn(ctx, payload)
		return nil
	})
	if err != nil {
		a.busy.Add(-1) // the task has ended: nobody handles events any more
	}
}

// BeforeInference prepares the context for an inference; give it to the
// aggregator pair (llm.PairOptions.BeforeInference). Before every
// inference it adds the prompt guide to the system instruction (once).
// Before a user-turn inference (the last message is the user's words) it
// also starts a turn, resets the context in Stateless mode or collapses
// old screens in KeepHistory mode, and writes the UI events that arrived
// since and the current <ui_state>, right before the user's words, which
// stay last. Follow-up inferences after tool results get no second
// <ui_state>, and their events wait for the next user turn (written
// last, they would read as the user's words); a repeated inference for
// the same words gets a fresh screen in place of the old.
//
// The blocks are user messages: the page is untrusted input, and a
// developer or system message would rank it with the application's
// instructions. The prompt guide, a system message, tells the model that
// they describe the page and are not the user's words.
func (a *Agent) BeforeInference(c *llm.Context) {
	a.ensure()
	a.mu.Lock()
	events := a.events
	a.events = nil
	a.mu.Unlock()
	state := ""
	if !a.opts.NoUIState {
		state = a.UIState()
	}
	var userTurn bool
	c.Transform(func(msgs []frames.LLMMessage) []frames.LLMMessage {
		userTurn = len(msgs) > 0 && isUserWords(&msgs[len(msgs)-1])
		if userTurn {
			msgs = a.prepareUserTurn(msgs, events, state)
		}
		return a.withGuide(msgs)
	})
	if userTurn {
		a.startTurn()
	} else if len(events) > 0 {
		a.requeueEvents(events)
	}
}

// requeueEvents puts events back ahead of those that arrived since, for
// the next user turn, within Options.MaxPendingEvents (the oldest go).
func (a *Agent) requeueEvents(events []frames.LLMMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	all := append(events, a.events...)
	if n := len(all) - a.opts.MaxPendingEvents; n > 0 {
		all = all[n:]
	}
	a.events = all
}

// isUserWords reports whether m is what the user said: a user message
// that is not one of the agent's blocks.
func isUserWords(m *frames.LLMMessage) bool {
	return m.Role == llm.RoleUser && len(m.ToolCalls) == 0 && !isUIState(m) && !isUIEvent(m)
}

// prepareUserTurn lays out the context of a user turn: history (reset or
// collapsed), then the pending events, <ui_state>, and the user's words,
// which stay last (the RTVI observer reports them as user-llm-text).
func (a *Agent) prepareUserTurn(msgs, events []frames.LLMMessage, state string) []frames.LLMMessage {
	tail := len(msgs)
	for tail > 0 && isUserWords(&msgs[tail-1]) {
		tail--
	}
	user := append([]frames.LLMMessage(nil), msgs[tail:]...)
	var head []frames.LLMMessage
	if a.opts.History == KeepHistory {
		head = msgs[:tail]
		if n := len(head); n > 0 && isUIState(&head[n-1]) {
			head = head[:n-1] // the screen of an earlier inference for these same words
		}
		for i := range head {
			if isUIState(&head[i]) {
				head[i].Content = StaleUIState
			}
		}
	} else {
		head = msgs[:min(preambleLen(msgs), tail)]
	}
	out := append(head, events...)
	if state != "" {
		out = append(out, blockMessage(state))
	}
	return append(out, user...)
}

// preambleLen is the length of the leading run of system and developer
// messages that the agent did not write.
func preambleLen(msgs []frames.LLMMessage) int {
	n := 0
	for n < len(msgs) {
		m := &msgs[n]
		if (m.Role != llm.RoleSystem && m.Role != llm.RoleDeveloper) || isUIState(m) || isUIEvent(m) {
			break
		}
		n++
	}
	return n
}

// withGuide makes sure the prompt guide is in the system instruction: a
// system message right after the leading system messages.
func (a *Agent) withGuide(msgs []frames.LLMMessage) []frames.LLMMessage {
	if a.opts.NoPromptGuide {
		return msgs
	}
	for i := range msgs {
		if msgs[i].Role == llm.RoleSystem && msgs[i].Content == a.opts.PromptGuide {
			return msgs
		}
	}
	at := 0
	for at < len(msgs) && msgs[at].Role == llm.RoleSystem {
		at++
	}
	return append(msgs[:at], append([]frames.LLMMessage{llm.SystemMessage(a.opts.PromptGuide)}, msgs[at:]...)...)
}

func zapError(err error) zap.Field { return zap.Error(err) }
