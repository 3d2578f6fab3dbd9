package uiagent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
)

// A reply call points, fills, clicks and answers in one turn: commands in
// the fixed order, the answer spoken verbatim after them, one inference.
func TestReplyDispatchesThenSpeaks(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{replyCall("c1",
		`{"answer":"Filled in and submitted.","click":["e5","e6"],"fills":[{"ref":"e3","value":"Mark"},{"ref":"e4","value":"mark@daily.co"}],"highlight":["e2"],"scroll_to":"e6"}`)})}
	r := newRig(t, model, rigOptions{snapshot: snapshotOf(t, formTree)})
	r.say("fill in my name and email, agree and submit")
	turns := r.waitTurns(1)
	r.settle()
	want := []string{
		`scroll_to {"ref":"e6","target_id":null,"behavior":null}`,
		`highlight {"ref":"e2","target_id":null,"duration_ms":null}`,
		`set_input_value {"value":"Mark","ref":"e3","target_id":null,"replace":true}`,
		`set_input_value {"value":"mark@daily.co","ref":"e4","target_id":null,"replace":true}`,
		`click {"ref":"e5","target_id":null}`,
		`click {"ref":"e6","target_id":null}`,
	}
	if d := cmp.Diff(want, r.commands()); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Filled in and submitted."}, r.spoken()); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
	r.mu.Lock()
	lastCmd, speak := -1, -1
	for i, f := range r.down {
		switch f.(type) {
		case *frames.TTSSpeak:
			speak = i
		default:
			if len(commandsOf([]frames.Frame{f})) == 1 {
				lastCmd = i
			}
		}
	}
	r.mu.Unlock()
	if speak < lastCmd {
		t.Errorf("the answer (frame %d) went out before the last command (frame %d)", speak, lastCmd)
	}
	if d := cmp.Diff([]Answer{{Text: "Filled in and submitted.", Outcome: Replied}}, turns); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{llm.ToolCompleted}, r.waitResults(1)); d != "" {
		t.Errorf("tool results (-want +got):\n%s", d)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d inferences, want 1: reply ends the turn", n)
	}
}

// Unknown refs are skipped, the rest still runs, and the tool result says
// which refs were skipped.
func TestReplyReportsUnknownRefs(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{replyCall("c1",
		`{"answer":"Done.","highlight":["e2","e42"],"click":["e6.more","e5"],"fills":[{"ref":"e99","value":"x"}],"select_text":[1]}`)})}
	r := newRig(t, model, rigOptions{snapshot: snapshotOf(t, formTree)})
	r.say("go")
	turns := r.waitTurns(1)
	r.settle()
	want := []string{
		`highlight {"ref":"e2","target_id":null,"duration_ms":null}`,
		`click {"ref":"e5","target_id":null}`,
	}
	if d := cmp.Diff(want, r.commands()); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"e42", "e99", "e6.more"}, turns[0].SkippedRefs); d != "" {
		t.Errorf("skipped refs (-want +got):\n%s", d)
	}
	res := r.waitResults(1)
	if len(res) != 1 {
		t.Fatalf("tool results: %v", res)
	}
	wantRes := map[string]any{
		"skipped_refs": []any{"e42", "e99", "e6.more"},
		"ignored":      []any{"select_text: a list is not a ref"},
		"note":         noteSkipped,
	}
	if d := cmp.Diff(wantRes, jsonOf(t, res[0])); d != "" {
		t.Errorf("tool result (-want +got):\n%s", d)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d inferences, want 1", n)
	}
}

// Two reply calls in one turn: both dispatch their commands, only the
// first answer is spoken, and the second's result says why.
func TestDoubleReplyInOneTurn(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{
		replyCall("c1", `{"answer":"First.","highlight":["e2"]}`),
		replyCall("c2", `{"answer":"Second.","highlight":["e3"]}`),
	})}
	r := newRig(t, model, rigOptions{snapshot: snapshotOf(t, formTree), agent: Options{}})
	r.say("point")
	r.waitFor("both results", func() bool {
		return len(r.toolResults()) == 2 && !strings.Contains(strings.Join(r.toolResults(), ""), llm.ToolInProgress)
	})
	r.settle()
	spoken := r.spoken()
	if len(spoken) != 1 {
		t.Fatalf("spoken %v, want exactly one answer", spoken)
	}
	if n := len(r.commands()); n != 2 {
		t.Errorf("%d commands, want 2 (both calls dispatch)", n)
	}
	turns := r.waitTurns(1)
	if len(turns) != 1 || turns[0].Text != spoken[0] {
		t.Errorf("turns %v, spoken %v", turns, spoken)
	}
	results := strings.Join(r.toolResults(), "|")
	if !strings.Contains(results, noteAnswered) || !strings.Contains(results, llm.ToolCompleted) {
		t.Errorf("tool results %q: want one COMPLETED and one already-answered note", results)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d inferences, want 1", n)
	}
}

// A reply without an answer does nothing and asks again; the model's
// second call ends the turn.
func TestReplyWithoutAnswerAsksAgain(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{replyCall("c1", `{"click":["e5"]}`)},
		[]llm.Event{replyCall("c2", `{"answer":"Agreed.","click":["e5"]}`)},
	)}
	r := newRig(t, model, rigOptions{snapshot: snapshotOf(t, formTree)})
	r.say("agree to the terms")
	turns := r.waitTurns(1)
	r.settle()
	if d := cmp.Diff([]string{`click {"ref":"e5","target_id":null}`}, r.commands()); d != "" {
		t.Errorf("the refused call must not click (-want +got):\n%s", d)
	}
	if turns[0].Text != "Agreed." || len(model.Requests()) != 2 {
		t.Errorf("turns %v after %d inferences", turns, len(model.Requests()))
	}
	res := r.waitResults(2)
	if len(res) != 2 || !strings.Contains(res[0], `reply needs \"answer\"`) {
		t.Errorf("tool results: %v", res)
	}
	// The re-run after the refusal gets no second <ui_state>.
	reqs := model.Requests()
	if n := countUIStates(reqs[1].Messages); n != 1 {
		t.Errorf("the follow-up inference saw %d <ui_state> blocks, want 1", n)
	}
}

func countUIStates(msgs []frames.LLMMessage) int {
	n := 0
	for i := range msgs {
		if isUIState(&msgs[i]) {
			n++
		}
	}
	return n
}

// Plain text without a tool call is the answer: spoken once, through the
// same path as a reply, and never streamed as LLM text.
func TestStrayTextIsTheAnswer(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.TextEvent("The capital "), llm.TextEvent("is Paris. ")})}
	r := newRig(t, model, rigOptions{})
	r.say("what is the capital of France?")
	turns := r.waitTurns(1)
	r.settle()
	if d := cmp.Diff([]Answer{{Text: "The capital is Paris.", Outcome: StrayText}}, turns); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"The capital is Paris."}, r.spoken()); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
	if s := r.llmText(); s != "" {
		t.Errorf("stray text was also streamed: %q", s)
	}
}

// Text next to a tool call is dropped: the tool carries the answer.
func TestTextNextToReplyIsDropped(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.TextEvent("Let me check. "), replyCall("c1", `{"answer":"Here it is."}`)})}
	r := newRig(t, model, rigOptions{})
	r.say("show me")
	r.waitTurns(1)
	r.settle()
	if d := cmp.Diff([]string{"Here it is."}, r.spoken()); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
	if s := r.llmText(); s != "" {
		t.Errorf("text streamed: %q", s)
	}
}

// A response with nothing in it ends the turn with the fallback.
func TestEmptyResponseEndsTheTurn(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{})}
	r := newRig(t, model, rigOptions{agent: Options{FallbackAnswer: "Sorry, I missed that."}})
	r.say("hm")
	turns := r.waitTurns(1)
	r.settle()
	if d := cmp.Diff([]Answer{{Text: "Sorry, I missed that.", Outcome: NoAnswer}}, turns); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Sorry, I missed that."}, r.spoken()); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
}

// A failed request ends the turn too, with the default fallback answer,
// or with nothing when the application says so.
func TestFailedResponseEndsTheTurn(t *testing.T) {
	model := &llmtest.Provider{Err: errors.New("upstream 500")}
	r := newRig(t, model, rigOptions{})
	r.say("hm")
	if turns := r.waitTurns(1); turns[0].Outcome != NoAnswer || turns[0].Text != DefaultFallbackAnswer {
		t.Errorf("turns: %v, want the default fallback answer", turns)
	}
	quiet := newRig(t, &llmtest.Provider{Err: errors.New("upstream 500")}, rigOptions{agent: Options{NoFallbackAnswer: true}})
	quiet.say("hm")
	if turns := quiet.waitTurns(1); turns[0].Outcome != NoAnswer || turns[0].Text != "" {
		t.Errorf("turns with NoFallbackAnswer: %v, want no answer text", turns)
	}
}

// Issue 18 item 2: the watchdog is on by default, and a negative Watchdog
// turns it off.
func TestTheWatchdogIsOnByDefault(t *testing.T) {
	if a := New(Options{}); a.opts.Watchdog != DefaultWatchdog || a.opts.FallbackAnswer != DefaultFallbackAnswer {
		t.Errorf("default watchdog %v and fallback %q, want %v and %q", a.opts.Watchdog, a.opts.FallbackAnswer, DefaultWatchdog, DefaultFallbackAnswer)
	}
	if a := New(Options{Watchdog: -1}); a.opts.Watchdog != 0 {
		t.Errorf("Watchdog -1 gives %v, want off", a.opts.Watchdog)
	}
}

// The model never answers: the watchdog ends the turn, says the fallback
// and releases the agent for the next turn.
func TestWatchdogEndsAnUnansweredTurn(t *testing.T) {
	model := &llmtest.Provider{Hang: llmtest.Always}
	r := newRig(t, model, rigOptions{agent: Options{Watchdog: 20 * time.Millisecond, FallbackAnswer: "Something went wrong on my side."}})
	r.say("where is the submit button?")
	turns := r.waitTurns(1)
	if d := cmp.Diff([]Answer{{Text: "Something went wrong on my side.", Outcome: TimedOut}}, turns); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	r.waitFor("the fallback", func() bool {
		return cmp.Equal([]string{"Something went wrong on my side."}, r.spoken())
	})
	if r.agent.openTurn() != nil {
		t.Error("a turn is still open after the watchdog")
	}
}

// Without the watchdog, a silent model leaves the turn open (nothing is
// made up); an interruption then cancels it.
func TestInterruptionCancelsTheTurn(t *testing.T) {
	model := &llmtest.Provider{Hang: llmtest.Always}
	r := newRig(t, model, rigOptions{})
	r.say("hello?")
	r.waitFor("the request", func() bool { return len(model.Requests()) == 1 })
	if r.agent.openTurn() == nil {
		t.Fatal("no open turn while the model thinks")
	}
	r.task.QueueFrame(&frames.Interruption{})
	turns := r.waitTurns(1)
	if d := cmp.Diff([]Answer{{Outcome: Cancelled}}, turns); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	r.settle()
	if s := r.spoken(); len(s) != 0 {
		t.Errorf("a cancelled turn spoke: %v", s)
	}
}

// An interruption issued before a turn started never cancels it.
func TestOldInterruptionDoesNotCancelANewerTurn(t *testing.T) {
	a := New(Options{})
	old := &frames.Interruption{}
	framebook.Stamp(old.FrameBase())
	a.BeforeInference(llm.NewContext(llm.UserMessage("hi")))
	a.interrupted(old.ID())
	if a.openTurn() == nil {
		t.Fatal("an older interruption cancelled the turn")
	}
	newer := &frames.Interruption{}
	framebook.Stamp(newer.FrameBase())
	a.interrupted(newer.ID())
	if a.openTurn() != nil {
		t.Fatal("a newer interruption left the turn open")
	}
}

// A new user turn supersedes an unanswered one.
func TestNewUserTurnSupersedesTheOpenOne(t *testing.T) {
	var ends []Answer
	a := New(Options{OnTurnEnd: func(x Answer) { ends = append(ends, x) }})
	c := llm.NewContext(llm.UserMessage("one"))
	a.BeforeInference(c)
	first := a.openTurn()
	c.Add(llm.UserMessage("two"))
	a.BeforeInference(c)
	if a.openTurn() == first || a.openTurn() == nil {
		t.Fatal("the second user turn did not replace the first")
	}
	if d := cmp.Diff([]Answer{{Outcome: Cancelled}}, ends); d != "" {
		t.Errorf("ends (-want +got):\n%s", d)
	}
}

// In phrase mode the model gets the answer back and says it itself.
func TestPhraseModeHandsTheAnswerBack(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{replyCall("c1", `{"answer":"the form is on the left","highlight":["e3"]}`)},
		[]llm.Event{llm.TextEvent("It's the form on the left.")},
	)}
	r := newRig(t, model, rigOptions{agent: Options{Answer: AnswerPhrase}, snapshot: snapshotOf(t, formTree)})
	r.say("where do I type my name?")
	r.waitFor("the phrased text", func() bool { return r.llmText() == "It's the form on the left." })
	r.settle()
	if s := r.spoken(); len(s) != 0 {
		t.Errorf("phrase mode spoke verbatim: %v", s)
	}
	res := r.waitResults(1)
	if len(res) != 1 || cmp.Diff(map[string]any{"answer": "the form is on the left"}, jsonOf(t, res[0])) != "" {
		t.Errorf("tool results: %v", res)
	}
	if turns := r.waitTurns(1); turns[0].Outcome != Replied {
		t.Errorf("turns: %v", turns)
	}
}

// AnswerText sends the answer as an LLM response of its own.
func TestTextModeSendsAnLLMResponse(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{replyCall("c1", `{"answer":"Hi there."}`)})}
	r := newRig(t, model, rigOptions{agent: Options{Answer: AnswerText}})
	r.say("hi")
	r.waitFor("the text", func() bool { return r.llmText() == "Hi there." })
	r.waitFor("the answer in the context", func() bool {
		for _, m := range r.conv.Messages() {
			if m.Role == llm.RoleAssistant && m.Content == "Hi there." {
				return true
			}
		}
		return false
	})
	if res := r.waitResults(1); res[0] != llm.ToolCompleted {
		t.Errorf("tool result %q", res[0])
	}
	if s := r.spoken(); len(s) != 0 {
		t.Errorf("text mode also spoke: %v", s)
	}
}

// Without the BeforeInference hook nothing tracks turns, but reply still
// answers; a second reply in the same model response is still dropped.
func TestUntrackedReply(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{replyCall("c1", `{"answer":"One."}`), replyCall("c2", `{"answer":"Two."}`)},
	)}
	r := newRig(t, model, rigOptions{noHook: true})
	r.say("hi")
	r.waitResults(2)
	r.settle()
	if s := r.spoken(); len(s) != 1 {
		t.Errorf("spoken %v, want one answer", s)
	}
}

// Ask is single-flight: a second Ask waits until the first ends, and a
// caller giving up always releases the next.
func TestAskIsSingleFlightAndCancellationReleases(t *testing.T) {
	model := &llmtest.Provider{
		Hang: func(n int) bool { return n == 0 }, // the first request never answers:
		Respond: func(n int, req *frames.LLMContext) []llm.Event {
			if n == 0 {
				return nil // no events before it hangs
			}
			return []llm.Event{replyCall("c", `{"answer":"answer to `+lastUser(req)+`"}`)}
		},
	}
	r := newRig(t, model, rigOptions{})
	ctx1, cancel1 := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := r.agent.Ask(ctx1, "first")
		first <- err
	}()
	r.waitFor("the first request", func() bool { return len(model.Requests()) == 1 })
	second := make(chan Answer, 1)
	go func() {
		ans, err := r.agent.Ask(context.Background(), "second")
		if err != nil {
			t.Errorf("second Ask: %v", err)
		}
		second <- ans
	}()
	select {
	case <-second:
		t.Fatal("the second Ask ran while the first was in flight")
	case <-time.After(30 * time.Millisecond):
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("%d requests while the first Ask holds the agent", n)
	}
	cancel1()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("first Ask: %v", err)
	}
	select {
	case ans := <-second:
		if ans.Text != "answer to second" || ans.Outcome != Replied || !ans.Asked {
			t.Errorf("second answer: %+v", ans)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second Ask never ran: the lock was not released")
	}
	r.settle()
	if s := r.spoken(); len(s) != 0 {
		t.Errorf("an Ask's answer was spoken in the pipeline: %v", s)
	}
	turns := r.waitTurns(2)
	if turns[0].Outcome != Cancelled || turns[1].Outcome != Replied {
		t.Errorf("turns: %+v", turns)
	}
}

// Ask with the watchdog: a model that never calls the tool times out.
func TestAskWatchdog(t *testing.T) {
	model := &llmtest.Provider{Hang: llmtest.Always}
	r := newRig(t, model, rigOptions{agent: Options{Watchdog: 20 * time.Millisecond, FallbackAnswer: "Sorry."}})
	ans, err := r.agent.Ask(context.Background(), "anything")
	if !errors.Is(err, ErrTimedOut) || ans.Text != "Sorry." || ans.Outcome != TimedOut {
		t.Errorf("Ask = %+v, %v", ans, err)
	}
	if s := r.spoken(); len(s) != 0 {
		t.Errorf("the fallback of an Ask was spoken in the pipeline: %v", s)
	}
}

// Stray text answers an Ask.
func TestAskStrayText(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.TextEvent("Just text.")})}
	r := newRig(t, model, rigOptions{})
	ans, err := r.agent.Ask(context.Background(), "q")
	if err != nil || ans.Text != "Just text." || ans.Outcome != StrayText {
		t.Errorf("Ask = %+v, %v", ans, err)
	}
}

// An Ask before the task runs waits for it; its context bounds the wait.
func TestAskBeforeTheTaskRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := New(Options{}).Ask(ctx, "q"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

func lastUser(req *frames.LLMContext) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// With a TTS in the pipeline the spoken answer lands in the context, and
// a KeepHistory conversation reads: old screen (stub), words, tool call,
// answer, then the new screen and words.
func TestSpokenAnswerIsRecordedInHistory(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{replyCall("c1", `{"answer":"It is the Save button.","highlight":["e2"]}`)},
		[]llm.Event{replyCall("c2", `{"answer":"Clicked it.","click":["e2"]}`)},
	)}
	r := newRig(t, model, rigOptions{agent: Options{History: KeepHistory, NoPromptGuide: true}, system: "s",
		snapshot: snapshotOf(t, smallTree), afterLLM: []pipeline.Processor{fakeTTS{}}})
	r.say("which button saves?")
	r.waitTurns(1)
	r.waitFor("the answer in the context", func() bool {
		m := r.conv.Messages()
		return len(m) > 0 && m[len(m)-1].Content == "It is the Save button."
	})
	r.waitResults(1)
	r.say("click that")
	r.waitTurns(2)
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d inferences", len(reqs))
	}
	want := []frames.LLMMessage{
		sys("s"), page(StaleUIState), user("which button saves?"),
		{Role: llm.RoleAssistant, ToolCalls: []frames.LLMToolCall{{ID: "c1", Name: "reply", Arguments: `{"answer":"It is the Save button.","highlight":["e2"]}`}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: llm.ToolCompleted},
		asst("It is the Save button."),
		page(smallState), user("click that"),
	}
	if d := cmp.Diff(want, reqs[1].Messages); d != "" {
		t.Errorf("second inference (-want +got):\n%s", d)
	}
}
