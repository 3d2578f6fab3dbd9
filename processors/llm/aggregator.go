package llm

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// PairOptions configure a [Pair]. The zero value is ready to use.
type PairOptions struct {
	// BeforeInference runs right before either aggregator takes the
	// snapshot it sends to the LLM, on that aggregator's goroutine. It may
	// change the context, for example append a developer message with the
	// current screen state; it must be quick.
	BeforeInference func(c *Context)
	// User configures the user aggregator.
	User UserOptions
	// Assistant configures the assistant aggregator.
	Assistant AssistantOptions
}

// UserOptions configure the user aggregator.
type UserOptions struct {
	// NoInterruptions keeps a user turn start from interrupting the bot.
	NoInterruptions bool
}

// TextSource says which text frames the assistant aggregator records as
// what the bot said.
type TextSource uint8

const (
	// TextAuto records [frames.TTSText] when the turn has any (a TTS service
	// is present, so that is what was spoken), [frames.LLMText] otherwise.
	TextAuto TextSource = iota
	// TextLLM records [frames.LLMText] (and [frames.Text]) only.
	TextLLM
	// TextTTS records [frames.TTSText] only.
	TextTTS
)

// AssistantOptions configure the assistant aggregator.
type AssistantOptions struct {
	// Text chooses the text frames that make up the bot's turn.
	Text TextSource
	// InterruptedSuffix, when set, is appended to the text of a turn the
	// user interrupted (for example " [interrupted]"), so the model can
	// tell. By default the partial text is recorded as is: only what was
	// actually spoken, which is the mark.
	InterruptedSuffix string
	// OnTurn is called when the assistant aggregator commits a turn, on its
	// goroutine; it must be quick.
	OnTurn func(AssistantTurn)
}

// AssistantTurn is one bot turn as recorded in the context.
type AssistantTurn struct {
	// Text is the recorded text (suffix included).
	Text string
	// Interrupted is true when the user cut the turn short.
	Interrupted bool
}

// Pair is the two context aggregators over one shared [Context]: put
// [Pair.User] before the LLM service and [Pair.Assistant] after the output
// transport.
//
// The pair also shares the turn state that decides when inference runs
// again after function calls: while the user speaks, the re-run is handed
// to the end of the user's turn instead of talking over them.
type Pair struct {
	ctx  *Context
	opts PairOptions
	user *UserAggregator
	asst *AssistantAggregator

	mu           sync.Mutex
	userSpeaking bool
	pendingRerun bool

	// turn makes the user aggregator's "change the context, run the
	// before-inference hook, snapshot" one step against the assistant
	// aggregator's changes. Without it, a reply that ends while a user
	// message is being turned into a request (the greeting, say) could be
	// recorded between the message and the hook, which would then see the
	// assistant's message last and not lay the request out as a user turn.
	turn sync.Mutex
}

// NewPair returns the aggregator pair over c (a new context if c is nil).
func NewPair(c *Context, o PairOptions) *Pair {
	if c == nil {
		c = &Context{}
	}
	p := &Pair{ctx: c, opts: o}
	p.user = &UserAggregator{p: p}
	p.asst = &AssistantAggregator{p: p, inProgress: map[string]struct{}{}, tombstones: map[string]bool{}}
	return p
}

// Context returns the shared context.
func (p *Pair) Context() *Context { return p.ctx }

// User returns the user aggregator.
func (p *Pair) User() *UserAggregator { return p.user }

// Assistant returns the assistant aggregator.
func (p *Pair) Assistant() *AssistantAggregator { return p.asst }

// change runs fn on the context as one step of the turn order.
func (p *Pair) change(fn func(c *Context)) {
	p.turn.Lock()
	defer p.turn.Unlock()
	fn(p.ctx)
}

// prepare runs fn on the context (when not nil), then the before-inference
// hook, and returns the snapshot to send to the LLM, all as one step.
func (p *Pair) prepare(fn func(c *Context)) *frames.LLMContext {
	p.turn.Lock()
	defer p.turn.Unlock()
	if fn != nil {
		fn(p.ctx)
	}
	if p.opts.BeforeInference != nil {
		p.opts.BeforeInference(p.ctx)
	}
	return p.ctx.Snapshot()
}

func (p *Pair) setUserSpeaking(v bool) (pending bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.userSpeaking = v
	if !v {
		pending, p.pendingRerun = p.pendingRerun, false
	}
	return pending
}

// handOver gives a wanted re-run to the end of the user's turn if the user
// is speaking, and reports whether it did.
func (p *Pair) handOver() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.userSpeaking {
		p.pendingRerun = true
	}
	return p.userSpeaking
}

func (p *Pair) clearPending() {
	p.mu.Lock()
	p.pendingRerun = false
	p.mu.Unlock()
}

// UserAggregator collects what the user said and asks for inference at the
// end of the user's turn. It consumes [frames.Transcription] (aggregated)
// and [frames.InterimTranscription] (dropped); applies
// [frames.LLMMessagesAppend], [frames.LLMMessagesUpdate], [frames.LLMRun],
// [frames.LLMSetTools] (forwarded for realtime services) and
// [frames.LLMSetToolChoice] to the context; interrupts the bot when a user
// turn starts (an [frames.Interruption] pushed both ways; its own queue of
// user input is kept); and pushes a [frames.LLMContext] snapshot downstream when
// the turn ends with something said, or when a transcription arrives
// outside a turn (typed or late text).
type UserAggregator struct {
	p        *Pair
	text     strings.Builder // the user's turn so far, within the context's message limit
	cut      int             // bytes of the turn left out of text
	speaking bool
}

// append adds t to the user's turn. The turn is bounded by the context's
// Limits.MaxMessageBytes: a user who speaks (or an STT that transcribes)
// without end fills it once, and the rest is only counted, for the
// marker the message ends with.
func (u *UserAggregator) append(t string) {
	if u.text.Len() > 0 {
		t = " " + t
	}
	if room := u.maxText() - u.text.Len(); len(t) > room || u.cut > 0 {
		keep := max(room, 0)
		for keep > 0 && keep < len(t) && !utf8.RuneStart(t[keep]) {
			keep--
		}
		keep = min(keep, len(t))
		u.cut += len(t) - keep
		t = t[:keep]
	}
	u.text.WriteString(t)
}

// maxText is the most text a user message may hold within the context's
// message limit (which counts the role too).
func (u *UserAggregator) maxText() int { return u.p.ctx.Limits().MaxMessageBytes - len(RoleUser) }

// take returns the user's turn as a user message and starts a new one.
// A turn that passed the limit ends with the marker of [CutText], within
// the limit, so the context does not cut it again.
func (u *UserAggregator) take() frames.LLMMessage {
	text := u.text.String()
	if u.cut > 0 {
		total := len(text) + u.cut
		keep := max(min(len(text), u.maxText()-markerLen(total)), 0)
		for keep > 0 && !utf8.RuneStart(text[keep]) {
			keep--
		}
		text = text[:keep] + cutMarker(total-keep)
	}
	u.text.Reset()
	u.cut = 0
	return UserMessage(text)
}

// ProcessFrame implements [pipeline.Processor].
func (u *UserAggregator) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if dir != frames.Downstream {
		return nil
	}
	c := u.p.ctx
	switch f := f.(type) {
	case *frames.Transcription:
		h.Consume()
		t := strings.TrimSpace(f.Text)
		if t == "" {
			return nil
		}
		u.append(t)
		if !u.speaking {
			u.commit(h)
		}
	case *frames.InterimTranscription:
		h.Consume()
	case *frames.UserStartedSpeaking:
		h.Forward()
		u.speaking = true
		u.p.setUserSpeaking(true)
		if !u.p.opts.User.NoInterruptions {
			// Interrupt everything above and below. h.Interrupt leaves this
			// node's own queue alone: what waits here is what the user said
			// (a final transcription overtaken by the system-lane turn
			// start), which must not be lost.
			h.Interrupt()
		}
	case *frames.UserStoppedSpeaking:
		h.Forward()
		u.speaking = false
		pending := u.p.setUserSpeaking(false)
		switch {
		case u.text.Len() > 0:
			u.commit(h)
		case pending:
			u.push(h, nil)
		}
	case *frames.LLMMessagesAppend:
		h.Consume()
		add := func(c *Context) { c.Add(f.Messages...) }
		if f.RunLLM {
			u.push(h, add)
		} else {
			u.p.change(add)
		}
	case *frames.LLMMessagesUpdate:
		h.Consume()
		set := func(c *Context) { c.SetMessages(f.Messages) }
		if f.RunLLM {
			u.push(h, set)
		} else {
			u.p.change(set)
		}
	case *frames.LLMRun:
		h.Consume()
		u.push(h, nil)
	case *frames.LLMSetTools:
		c.SetTools(f.Tools)
	case *frames.LLMSetToolChoice:
		h.Consume()
		c.SetToolChoice(f.ToolChoice)
	case *frames.End, *frames.Cancel:
		if u.text.Len() > 0 || u.cut > 0 {
			msg := u.take()
			u.p.change(func(c *Context) { c.Add(msg) })
		}
	}
	return nil
}

// commit appends the aggregated text as a user message and asks for
// inference.
func (u *UserAggregator) commit(h *pipeline.Handle) {
	msg := u.take()
	u.push(h, func(c *Context) { c.Add(msg) })
}

// push applies fn (when not nil) and asks for inference on the result.
func (u *UserAggregator) push(h *pipeline.Handle, fn func(c *Context)) {
	u.p.clearPending()
	h.Push(u.p.prepare(fn), frames.Downstream)
}

// maxTombstones bounds the settled tool_call_ids remembered.
const maxTombstones = 256

// AssistantAggregator records the bot's side of the conversation. It sits
// after the output transport, which releases text in step with the audio,
// so the context holds what was actually spoken: an interrupted reply is
// committed up to the interruption. It also keeps the function-call
// messages (an assistant tool_calls message and a tool message per call:
// "IN_PROGRESS", then the result, "COMPLETED" or "CANCELLED"), and asks
// the LLM (upstream) for another inference once every call in flight has
// settled and at least one result asked for it. That re-run waits for the
// bot to stop speaking and is handed to the end of the user's turn while
// the user speaks.
type AssistantAggregator struct {
	p *Pair

	llmText     strings.Builder
	ttsText     strings.Builder
	sawTTS      bool
	inResponse  bool
	ttsTurn     bool
	botSpeaking bool

	inProgress  map[string]struct{}
	pending     atomic.Int32 // len(inProgress), readable from any goroutine
	wantRun     bool
	deferredBot bool
	// tombstones remembers settled tool_call_ids, cancelled or with their
	// final result (bounded), and whether the call's messages are in the
	// context already: a call settles once, so nothing that arrives for
	// it afterwards (a duplicate or late result, a late in-progress) is
	// recorded.
	tombstones map[string]bool
	tombOrder  []string
}

// FunctionCallsInProgress returns how many function calls the aggregator
// is waiting for. It is safe to call from any goroutine.
func (a *AssistantAggregator) FunctionCallsInProgress() int { return int(a.pending.Load()) }

// ProcessFrame implements [pipeline.Processor].
func (a *AssistantAggregator) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if dir != frames.Downstream {
		return nil
	}
	c := a.p.ctx
	switch f := f.(type) {
	case *frames.LLMFullResponseStart:
		a.commit(false)
		a.inResponse = true
	case *frames.LLMFullResponseEnd:
		a.commit(false)
		a.inResponse = false
	case *frames.LLMText:
		a.llmText.WriteString(f.Text)
	case *frames.Text:
		if !f.NoContext {
			a.llmText.WriteString(f.Text)
		}
	case *frames.TTSText:
		a.sawTTS = true
		if !f.NoContext {
			appendWord(&a.ttsText, f.Text)
		}
	case *frames.TTSStarted:
		if !a.inResponse {
			a.ttsTurn = true
		}
	case *frames.TTSStopped:
		if a.ttsTurn && !a.inResponse {
			a.commit(false)
			a.ttsTurn = false
		}
	case *frames.Interruption:
		a.commit(true)
		a.inResponse, a.ttsTurn = false, false
	case *frames.End, *frames.Cancel:
		a.commit(false)
	case *frames.BotStartedSpeaking:
		a.botSpeaking = true
	case *frames.BotStoppedSpeaking:
		a.botSpeaking = false
		if a.deferredBot {
			a.deferredBot = false
			a.maybeRun(h)
		}
	case *frames.FunctionCallInProgress:
		a.inProgressCall(f)
	case *frames.FunctionCallResult:
		a.result(h, f)
	case *frames.FunctionCallCancel:
		a.cancelled(h, f)
	case *frames.LLMMessagesAppend:
		h.Consume()
		a.p.change(func(c *Context) { c.Add(f.Messages...) })
		if f.RunLLM {
			a.run(h)
		}
	case *frames.LLMMessagesUpdate:
		h.Consume()
		a.p.change(func(c *Context) { c.SetMessages(f.Messages) })
		if f.RunLLM {
			a.run(h)
		}
	case *frames.LLMRun:
		h.Consume()
		a.run(h)
	case *frames.LLMSetTools:
		c.SetTools(f.Tools)
	case *frames.LLMSetToolChoice:
		c.SetToolChoice(f.ToolChoice)
	}
	return nil
}

// appendWord appends a spoken piece of text, with a space between words
// unless the piece brings its own spacing or is punctuation.
func appendWord(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	if b.Len() > 0 {
		last := b.String()[b.Len()-1]
		first := s[0]
		if last != ' ' && last != '\n' && !strings.ContainsRune(" \n.,!?;:)]}'\"…", rune(first)) {
			b.WriteByte(' ')
		}
	}
	b.WriteString(s)
}

// commit records the collected text as an assistant message.
func (a *AssistantAggregator) commit(interrupted bool) {
	o := a.p.opts.Assistant
	var text string
	switch {
	case o.Text == TextLLM:
		text = a.llmText.String()
	case o.Text == TextTTS || a.sawTTS:
		text = a.ttsText.String()
	default:
		text = a.llmText.String()
	}
	a.llmText.Reset()
	a.ttsText.Reset()
	a.sawTTS = false
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if interrupted {
		text += o.InterruptedSuffix
	}
	a.p.change(func(c *Context) { c.Add(AssistantMessage(text)) })
	if o.OnTurn != nil {
		o.OnTurn(AssistantTurn{Text: text, Interrupted: interrupted})
	}
}

func (a *AssistantAggregator) tombstoned(id string) bool {
	_, ok := a.tombstones[id]
	return ok
}

func (a *AssistantAggregator) tombstone(id string, recorded bool) {
	if a.tombstoned(id) {
		a.tombstones[id] = a.tombstones[id] || recorded
		return
	}
	if len(a.tombOrder) >= maxTombstones {
		delete(a.tombstones, a.tombOrder[0])
		a.tombOrder = append(a.tombOrder[:0], a.tombOrder[1:]...)
	}
	a.tombstones[id] = recorded
	a.tombOrder = append(a.tombOrder, id)
}

func toolCallMessages(fc frames.FunctionCall, content string) []frames.LLMMessage {
	args := string(fc.Arguments)
	if args == "" {
		args = "{}"
	}
	return []frames.LLMMessage{
		{Role: RoleAssistant, ToolCalls: []frames.LLMToolCall{{ID: fc.ToolCallID, Name: fc.Name, Arguments: args}}},
		{Role: RoleTool, ToolCallID: fc.ToolCallID, Content: content},
	}
}

func (a *AssistantAggregator) inProgressCall(f *frames.FunctionCallInProgress) {
	id := f.ToolCallID
	if recorded, ok := a.tombstones[id]; ok {
		// The cancel overtook this frame: record the call as cancelled,
		// never as running (once).
		if !recorded {
			a.p.change(func(c *Context) { c.Add(toolCallMessages(f.FunctionCall, ToolCancelled)...) })
			a.tombstones[id] = true
		}
		return
	}
	if _, dup := a.inProgress[id]; dup {
		return
	}
	added := false
	a.p.change(func(c *Context) {
		// Past the tombstones' memory, the context itself says whether
		// the call is recorded.
		if !c.hasToolMessage(id) {
			c.Add(toolCallMessages(f.FunctionCall, ToolInProgress)...)
			added = true
		}
	})
	if !added {
		return
	}
	a.inProgress[id] = struct{}{}
	a.pending.Store(int32(len(a.inProgress)))
}

func (a *AssistantAggregator) result(h *pipeline.Handle, f *frames.FunctionCallResult) {
	id := f.ToolCallID
	if a.tombstoned(id) {
		return // settled: a late or duplicate result is not recorded
	}
	content, empty := resultContent(f.Result)
	_, running := a.inProgress[id]
	recorded := true
	a.p.change(func(c *Context) {
		switch {
		case running:
			c.setToolResult(id, content)
		case c.hasToolMessage(id):
			recorded = false // settled before the tombstones' memory
		default:
			c.Add(toolCallMessages(f.FunctionCall, content)...)
		}
	})
	if !recorded {
		return
	}
	if f.Properties.Intermediate {
		if !running { // more results follow: the call is running
			a.inProgress[id] = struct{}{}
			a.pending.Store(int32(len(a.inProgress)))
		}
		return
	}
	a.tombstone(id, true)
	delete(a.inProgress, id)
	a.pending.Store(int32(len(a.inProgress)))
	if f.Properties.RunLLM != nil {
		a.wantRun = a.wantRun || *f.Properties.RunLLM
	} else if !empty {
		a.wantRun = true
	}
	a.maybeRun(h)
}

func (a *AssistantAggregator) cancelled(h *pipeline.Handle, f *frames.FunctionCallCancel) {
	id := f.ToolCallID
	_, recorded := a.inProgress[id]
	if recorded {
		a.p.change(func(c *Context) { c.setToolResult(id, ToolCancelled) })
		delete(a.inProgress, id)
		a.pending.Store(int32(len(a.inProgress)))
	}
	a.tombstone(id, recorded)
	a.maybeRun(h)
}

// maybeRun asks for inference once nothing is in flight and a result
// wanted it: now, after the bot stops speaking, or at the end of the
// user's turn.
func (a *AssistantAggregator) maybeRun(h *pipeline.Handle) {
	if len(a.inProgress) > 0 || !a.wantRun {
		return
	}
	if a.p.handOver() {
		a.wantRun, a.deferredBot = false, false
		return
	}
	if a.botSpeaking {
		a.deferredBot = true
		return
	}
	a.wantRun = false
	a.run(h)
}

func (a *AssistantAggregator) run(h *pipeline.Handle) {
	a.p.clearPending()
	h.Push(a.p.prepare(nil), frames.Upstream)
}

// resultContent renders a result for the tool message, and reports whether
// it was empty (nil, "", JSON null).
func resultContent(v any) (string, bool) {
	switch r := v.(type) {
	case nil:
		return ToolCompleted, true
	case string:
		if r == "" {
			return ToolCompleted, true
		}
		return r, false
	case json.RawMessage:
		if s := strings.TrimSpace(string(r)); s != "" && s != "null" {
			return s, false
		}
		return ToolCompleted, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(ErrorResult{Error: "The function's result could not be encoded."})
		return string(b), false
	}
	if string(b) == "null" {
		return ToolCompleted, true
	}
	return string(b), false
}
