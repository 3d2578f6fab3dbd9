package uiagent

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// Outcome says how a turn ended.
type Outcome uint8

const (
	// Replied: the reply tool (or [Agent.Respond]) gave the answer.
	Replied Outcome = iota + 1
	// StrayText: the model answered in plain text without calling a tool;
	// its text is the answer.
	StrayText
	// NoAnswer: the model's response had neither text nor a tool call, or
	// its request failed. The answer is Options.FallbackAnswer.
	NoAnswer
	// TimedOut: the watchdog ended the turn. The answer is
	// Options.FallbackAnswer.
	TimedOut
	// Cancelled: an interruption, a newer user turn, the end of the
	// pipeline or the Ask caller ended the turn. Nothing is said.
	Cancelled
)

// String names the outcome for logs.
func (o Outcome) String() string {
	switch o {
	case Replied:
		return "replied"
	case StrayText:
		return "stray text"
	case NoAnswer:
		return "no answer"
	case TimedOut:
		return "timed out"
	case Cancelled:
		return "cancelled"
	}
	return "open"
}

// Answer is how a turn ended.
type Answer struct {
	// Text is what the user is told; "" for a silent turn.
	Text string
	// Outcome says how the turn ended.
	Outcome Outcome
	// SkippedRefs are refs of the reply that were not on the screen.
	SkippedRefs []string
	// Asked is true for turns started by [Agent.Ask].
	Asked bool
}

// Errors returned by [Agent.Ask] for turns that did not get an answer.
var (
	// ErrCancelled: the turn was cancelled (Outcome Cancelled).
	ErrCancelled = errors.New("uiagent: the turn was cancelled")
	// ErrTimedOut: the watchdog ended the turn (Outcome TimedOut).
	ErrTimedOut = errors.New("uiagent: the turn was not answered in time")
	// ErrNoAnswer: the model said nothing, or its request failed
	// (Outcome NoAnswer).
	ErrNoAnswer = errors.New("uiagent: the model gave no answer")
)

// turn is one user turn (or Ask). Its fields are guarded by Agent.mu,
// except done, which is closed when it ends.
type turn struct {
	id    uint64 // from frames.NextID: interruptions issued before it do not end it
	ask   bool
	ended bool
	ans   Answer
	done  chan struct{}
	timer *time.Timer
}

// newTurn returns a turn with its watchdog armed.
func (a *Agent) newTurn(ask bool) *turn {
	t := &turn{id: frames.NextID(), ask: ask, done: make(chan struct{})}
	if a.opts.Watchdog > 0 {
		t.timer = time.AfterFunc(a.opts.Watchdog, func() { a.expire(t) })
	}
	return t
}

// startTurn begins the turn of a user-turn inference: the pending Ask, or
// a new turn; an open older turn is superseded.
func (a *Agent) startTurn() {
	a.mu.Lock()
	a.tracked = true
	t := a.pendingAsk
	if t != nil {
		a.pendingAsk = nil
	}
	var superseded *turn
	if prev := a.cur; prev != nil && prev != t && a.finishLocked(prev, Answer{Outcome: Cancelled}) {
		superseded = prev
	}
	if t == nil {
		t = a.newTurn(false)
	}
	a.cur = t
	a.mu.Unlock()
	if superseded != nil {
		a.after(superseded, false)
	}
}

// interrupted cancels the open turns that started before the interruption
// with id was issued.
func (a *Agent) interrupted(id uint64) {
	a.mu.Lock()
	var ended []*turn
	for _, t := range []*turn{a.cur, a.pendingAsk} {
		if t != nil && t.id < id && a.finishLocked(t, Answer{Outcome: Cancelled}) {
			ended = append(ended, t)
		}
	}
	a.mu.Unlock()
	for _, t := range ended {
		a.after(t, false)
	}
}

// expire is the watchdog: it ends the turn, stops what the model is
// still doing (an interruption downstream) and, once that has gone
// through, says the fallback.
func (a *Agent) expire(t *turn) {
	a.mu.Lock()
	ok := a.finishLocked(t, Answer{Text: a.opts.FallbackAnswer, Outcome: TimedOut})
	a.mu.Unlock()
	if ok {
		a.logger().Warn("UI agent turn not answered in time", zap.Duration("watchdog", a.opts.Watchdog))
		a.interruptThen(func() { a.after(t, true) })
	}
}

// interruptThen interrupts everything downstream of the agent (the
// model's stream, its tool calls, queued output) and runs then once the
// interruption has gone through: a flush probe pushed behind it has come
// back to the agent.
func (a *Agent) interruptThen(then func()) {
	a.out.Push(&frames.Interruption{}, frames.Downstream)
	if then == nil {
		return
	}
	token := frames.NextID()
	a.mu.Lock()
	a.afterFlush[token] = then
	a.mu.Unlock()
	a.out.Push(&frames.Flush{Token: token}, frames.Downstream)
}

// end ends t with ans unless it has ended, delivering the answer.
func (a *Agent) end(t *turn, ans Answer) {
	a.mu.Lock()
	ok := a.finishLocked(t, ans)
	a.mu.Unlock()
	if ok {
		a.after(t, true)
	}
}

// finishLocked marks t ended with ans and reports whether it was open.
// a.mu must be held; call after(t) once unlocked.
func (a *Agent) finishLocked(t *turn, ans Answer) bool {
	if t.ended {
		return false
	}
	ans.Asked = t.ask
	t.ended, t.ans = true, ans
	if t.timer != nil {
		t.timer.Stop()
	}
	if a.pendingAsk == t {
		a.pendingAsk = nil
	}
	close(t.done)
	return true
}

// after runs what follows the end of a turn, outside the lock: delivery of
// an inline turn's answer (when deliver is set) and OnTurnEnd.
func (a *Agent) after(t *turn, deliver bool) {
	if deliver && !t.ask {
		a.deliver(t.ans)
	}
	if a.opts.OnTurnEnd != nil {
		a.opts.OnTurnEnd(t.ans)
	}
}

// deliver sends an inline turn's answer as Options.Answer says.
func (a *Agent) deliver(ans Answer) {
	if ans.Text == "" {
		return
	}
	switch a.opts.Answer {
	case AnswerManual:
		return
	case AnswerPhrase:
		if ans.Outcome == Replied || ans.Outcome == StrayText {
			return // the model phrases (or phrased) it
		}
	}
	a.say(ans.Text)
}

// Say tells the user text outside a turn (a greeting, the end of a
// background job) the way answers are told: as an LLM response of its
// own in AnswerText mode, spoken (frames.TTSSpeak) in every other mode. It
// works from any goroutine, before the task runs too: the frames wait in
// the agent's outlet and go in when the task sets the agent up. Blank
// text says nothing.
func (a *Agent) Say(text string) {
	a.ensure()
	if text = strings.TrimSpace(text); text != "" {
		a.say(text)
	}
}

func (a *Agent) say(text string) {
	if a.opts.Answer != AnswerText {
		a.push(&frames.TTSSpeak{Text: text})
		return
	}
	a.push(&frames.LLMFullResponseStart{})
	a.push(&frames.LLMText{Text: text})
	// The whole answer as unspoken text too, so RTVI clients get
	// bot-output in a pipeline without TTS.
	a.push(&frames.AggregatedText{Text: text, AggregatedBy: "sentence"})
	a.push(&frames.LLMFullResponseEnd{})
}

// Respond completes the current turn with answer from inside a tool
// handler and settles the call: the building block of hand-rolled reply
// tools and per-domain tools (ui-agent.md §5), which send their commands
// with the action methods first. The answer is delivered as
// Options.Answer says (an Ask caller gets it instead); "" ends the turn
// silently. Only the first answer of a turn counts: a later one is not
// delivered, and its tool result says so.
func (a *Agent) Respond(call llm.FunctionCallParams, answer string) error {
	return a.respond(call, answer, Report{})
}

func (a *Agent) respond(call llm.FunctionCallParams, answer string, rep Report) error {
	ans := Answer{Text: strings.TrimSpace(answer), Outcome: Replied, SkippedRefs: rep.SkippedRefs}
	a.mu.Lock()
	var t *turn
	switch {
	case !a.tracked:
		// No turn tracking is wired: each answer stands alone, except a
		// second answer in the same model response.
		if call.GroupID == "" || call.GroupID != a.lastGroup {
			a.lastGroup = call.GroupID
			t = &turn{done: make(chan struct{})}
		}
	case a.cur != nil && !a.cur.ended:
		t = a.cur
	}
	if t != nil {
		a.finishLocked(t, ans)
	}
	a.mu.Unlock()

	res := replyResult{SkippedRefs: rep.SkippedRefs, Ignored: rep.Ignored}
	if len(rep.SkippedRefs) > 0 {
		res.Note = noteSkipped
	}
	rerun := llm.RerunNever
	switch {
	case t == nil:
		a.logger().Info("a second answer in one turn was not delivered", zap.String("tool", call.Name))
		res.Note = noteAnswered
	case !t.ask && a.opts.Answer == AnswerPhrase && ans.Text != "":
		res.Answer = ans.Text
		rerun = llm.RerunAlways
		a.after(t, false)
	default:
		a.after(t, true)
	}
	var v any
	if !res.empty() {
		v = res
	}
	return call.ResultWith(v, llm.ResultOptions{Rerun: rerun})
}

// Ask runs one turn for query, as a delegated request (Pipecat's respond
// job): it pushes query downstream as a user message that runs the LLM,
// and waits for the turn's answer, which is returned instead of delivered.
// Asks are single-flight: a second Ask waits for the first (in arrival
// order). ctx bounds the wait; when it ends, the turn is cancelled and the
// next Ask may start. Turns without an answer return ErrCancelled,
// ErrTimedOut or ErrNoAnswer with the Answer (holding FallbackAnswer when
// set).
func (a *Agent) Ask(ctx context.Context, query string) (Answer, error) {
	a.ensure()
	select {
	case a.askSem <- struct{}{}:
	case <-ctx.Done():
		return Answer{Outcome: Cancelled, Asked: true}, ctx.Err()
	case <-a.ended:
		return Answer{Outcome: Cancelled, Asked: true}, ErrCancelled
	}
	defer func() { <-a.askSem }()
	t := a.newTurn(true)
	a.mu.Lock()
	a.tracked = true
	a.pendingAsk = t
	a.mu.Unlock()
	a.push(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage(query)}, RunLLM: true})
	select {
	case <-t.done:
	case <-ctx.Done():
		if a.cancelTurn(t) {
			a.interruptThen(nil) // stop the model's work for the abandoned turn
		}
		<-t.done
		if t.ans.Outcome == Cancelled {
			return t.ans, ctx.Err()
		}
	case <-a.ended:
		a.cancelTurn(t)
		<-t.done
	}
	a.mu.Lock()
	ans := t.ans
	a.mu.Unlock()
	switch ans.Outcome {
	case Replied, StrayText:
		return ans, nil
	case TimedOut:
		return ans, ErrTimedOut
	case NoAnswer:
		return ans, ErrNoAnswer
	}
	return ans, ErrCancelled
}

// cancelTurn ends t as cancelled and reports whether it was open.
func (a *Agent) cancelTurn(t *turn) bool {
	a.mu.Lock()
	ok := a.finishLocked(t, Answer{Outcome: Cancelled})
	a.mu.Unlock()
	if ok {
		a.after(t, false)
	}
	return ok
}

// openTurn returns the turn a response being started belongs to: the
// current turn if it is open.
func (a *Agent) openTurn() *turn {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur != nil && !a.cur.ended {
		return a.cur
	}
	return nil
}

// Provider wraps the model so the agent sees every response of a turn:
// plain text without a tool call becomes the turn's answer (delivered
// like a reply's, so it is not also streamed), an empty or failed
// response ends the turn (with Options.FallbackAnswer), and text next to a
// tool call is dropped, since the tool carries the answer. In AnswerPhrase
// mode the text of inline turns streams as usual. Responses outside a
// turn pass through untouched.
func (a *Agent) Provider(p llm.Provider) llm.Provider {
	return turnProvider{a: a, p: p}
}

type turnProvider struct {
	a *Agent
	p llm.Provider
}

// Model implements frames.Modeler when the wrapped provider does.
func (w turnProvider) Model() string {
	if m, ok := w.p.(frames.Modeler); ok {
		return m.Model()
	}
	return ""
}

// Stream implements llm.Provider.
func (w turnProvider) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		a := w.a
		t := a.openTurn()
		if t == nil {
			for ev, err := range w.p.Stream(ctx, req) {
				if !yield(ev, err) {
					return
				}
			}
			return
		}
		hold := t.ask || a.opts.Answer != AnswerPhrase
		var (
			text  strings.Builder
			calls bool
		)
		for ev, err := range w.p.Stream(ctx, req) {
			if err != nil {
				if ctx.Err() == nil {
					a.end(t, Answer{Text: a.opts.FallbackAnswer, Outcome: NoAnswer})
				}
				yield(ev, err)
				return
			}
			switch ev.Kind {
			case llm.EventText:
				text.WriteString(ev.Text)
				if hold {
					continue
				}
			case llm.EventToolCall:
				calls = true
			}
			if !yield(ev, nil) {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		said := strings.TrimSpace(text.String())
		switch {
		case calls:
			if hold && said != "" {
				a.logger().Debug("dropping model text next to a tool call", zap.Int("chars", len(said)))
			}
		case said != "":
			a.end(t, Answer{Text: said, Outcome: StrayText})
		default:
			a.end(t, Answer{Text: a.opts.FallbackAnswer, Outcome: NoAnswer})
		}
	}
}
