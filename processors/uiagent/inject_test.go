package uiagent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

const smallTree = `{"root":{"ref":"e1","role":"generic","children":[{"ref":"e2","role":"button","name":"Save"}]},"captured_at":1}`

const smallState = "<ui_state>\n- generic [ref=e1]:\n  - button \"Save\" [ref=e2]\n</ui_state>"

func sys(s string) frames.LLMMessage { return llm.SystemMessage(s) }
func dev(s string) frames.LLMMessage { return llm.DeveloperMessage(s) }

// page is one of the agent's blocks in the context: a user message, as
// the page is untrusted input (issue 26 row 6).
func page(s string) frames.LLMMessage { return llm.UserMessage(s) }
func user(s string) frames.LLMMessage { return llm.UserMessage(s) }
func asst(s string) frames.LLMMessage { return llm.AssistantMessage(s) }

func toolPair(id string) []frames.LLMMessage {
	return []frames.LLMMessage{
		{Role: llm.RoleAssistant, ToolCalls: []frames.LLMToolCall{{ID: id, Name: "reply", Arguments: `{"answer":"x"}`}}},
		{Role: llm.RoleTool, ToolCallID: id, Content: llm.ToolCompleted},
	}
}

// A user turn in the default (stateless) mode sees the preamble (system
// prompt, guide, seeded developer notes), the events since the last
// inference, the user's words, then the current screen.
func TestStatelessUserTurnLayout(t *testing.T) {
	a := New(Options{})
	a.SetSnapshot(snapshotOf(t, smallTree))
	c := llm.NewContext(sys("You help."), dev("App note: prices in EUR."))
	c.Add(user("old question"), page(smallState), asst("old answer"))
	c.Add(toolPair("c0")...)
	a.handleEvent("picked", wire.RawJSON(`{"id":3}`))
	c.Add(user("what is this"), user("button?"))
	a.BeforeInference(c)
	want := []frames.LLMMessage{
		sys("You help."),
		sys(DefaultPromptGuide),
		dev("App note: prices in EUR."),
		page(`<ui_event name="picked">{"id":3}</ui_event>`),
		page(smallState),
		user("what is this"),
		user("button?"),
	}
	if d := cmp.Diff(want, c.Messages()); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
}

// After a tool result the follow-up inference gets no second screen and
// no events: written last, an event (a user message since issue 26 row 6)
// would read as the user's words, to the model and to the RTVI observer's
// user-llm-text. The events wait for the next user turn; the guide is not
// added twice.
func TestFollowUpInferenceGetsNoSecondUIState(t *testing.T) {
	a := New(Options{})
	a.SetSnapshot(snapshotOf(t, smallTree))
	c := llm.NewContext(sys("You help."), user("hi"))
	a.BeforeInference(c)
	c.Add(toolPair("c1")...)
	a.handleEvent("scrolled", nil)
	a.BeforeInference(c)
	got := c.Messages()
	if n := countUIStates(got); n != 1 {
		t.Errorf("%d <ui_state> blocks, want 1", n)
	}
	if last := got[len(got)-1]; last.Role != llm.RoleTool {
		t.Errorf("last message %+v, want the tool result", last)
	}
	guides := 0
	for _, m := range got {
		if m.Content == DefaultPromptGuide {
			guides++
		}
	}
	if guides != 1 {
		t.Errorf("%d guides, want 1", guides)
	}
	a.BeforeInference(c) // once more: still nothing new
	if len(c.Messages()) != len(got) {
		t.Errorf("an idle follow-up changed the context: %d → %d messages", len(got), len(c.Messages()))
	}
	c.Add(user("and now?"))
	a.BeforeInference(c)
	got = c.Messages()
	if n := len(got); n < 3 || got[n-3].Content != `<ui_event name="scrolled">null</ui_event>` || !isUIState(&got[n-2]) {
		t.Errorf("next user turn %+v, want the waiting event, the screen and the words", got)
	}
}

// KeepHistory keeps the conversation and collapses the old screens to a
// one-line stub; the latest screen is the only one readable.
func TestKeepHistoryCollapsesOldScreens(t *testing.T) {
	a := New(Options{History: KeepHistory, NoPromptGuide: true})
	c := llm.NewContext(sys("You help."))
	a.SetSnapshot(snapshotOf(t, smallTree))
	c.Add(user("first"))
	a.BeforeInference(c)
	c.Add(toolPair("c1")...)
	a.SetSnapshot(snapshotOf(t, `{"root":{"ref":"e1","role":"generic","children":[{"ref":"e3","role":"heading","name":"Saved","level":2}]},"captured_at":2}`))
	c.Add(user("second"))
	a.BeforeInference(c)
	want := []frames.LLMMessage{
		sys("You help."),
		page(StaleUIState),
		user("first"),
	}
	want = append(want, toolPair("c1")...)
	want = append(want, page("<ui_state>\n- generic [ref=e1]:\n  - heading \"Saved\" [level=2] [ref=e3]\n</ui_state>"), user("second"))
	if d := cmp.Diff(want, c.Messages()); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
	if strings.Contains(StaleUIState, "\n") {
		t.Error("the stub is not one line")
	}
}

// A second inference for the same words (the user added more before the
// model answered, or a retry) gets one fresh screen, in both modes.
func TestRepeatedUserTurnGetsOneFreshScreen(t *testing.T) {
	for _, h := range []History{Stateless, KeepHistory} {
		a := New(Options{History: h, NoPromptGuide: true})
		a.SetSnapshot(snapshotOf(t, `{"root":{"ref":"e1","role":"main"},"captured_at":1}`))
		c := llm.NewContext(sys("s"), user("one"))
		a.BeforeInference(c)
		a.SetSnapshot(snapshotOf(t, smallTree))
		c.Add(user("two"))
		a.BeforeInference(c)
		want := []frames.LLMMessage{sys("s"), page(smallState), user("one"), user("two")}
		if d := cmp.Diff(want, c.Messages()); d != "" {
			t.Errorf("history %d (-want +got):\n%s", h, d)
		}
	}
}

// ResetContext keeps the preamble only.
func TestResetContext(t *testing.T) {
	a := New(Options{})
	c := llm.NewContext(sys("You help."), dev("note"), user("q"), page(smallState), asst("a"))
	a.ResetContext(c)
	if d := cmp.Diff([]frames.LLMMessage{sys("You help."), dev("note")}, c.Messages()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestInjectionOptions(t *testing.T) {
	snap := snapshotOf(t, smallTree)
	for _, tc := range []struct {
		name string
		opts Options
		want []frames.LLMMessage
	}{
		{"no snapshot yet", Options{NoPromptGuide: true}, []frames.LLMMessage{user("q")}},
		{"no ui state", Options{NoUIState: true, NoPromptGuide: true}, []frames.LLMMessage{user("q")}},
		{"override renders", Options{NoPromptGuide: true, Render: func(s *wire.Snapshot) string { return "<ui_state>\nnotes\n</ui_state>" }},
			[]frames.LLMMessage{page("<ui_state>\nnotes\n</ui_state>"), user("q")}},
		{"override suppresses", Options{NoPromptGuide: true, Render: func(*wire.Snapshot) string { return "" }}, []frames.LLMMessage{user("q")}},
		{"custom guide", Options{PromptGuide: "Be visual."}, []frames.LLMMessage{sys("Be visual."), page(smallState), user("q")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(tc.opts)
			if tc.name != "no snapshot yet" {
				a.SetSnapshot(snap)
			}
			c := llm.NewContext(user("q"))
			a.BeforeInference(c)
			if d := cmp.Diff(tc.want, c.Messages()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestManualInjection(t *testing.T) {
	a := New(Options{})
	c := llm.NewContext()
	if a.InjectUIState(c) || c.Len() != 0 {
		t.Error("injected without a snapshot")
	}
	a.SetSnapshot(snapshotOf(t, smallTree))
	if !a.InjectUIState(c) || cmp.Diff([]frames.LLMMessage{page(smallState)}, c.Messages()) != "" {
		t.Errorf("manual injection: %+v", c.Messages())
	}
	first := a.UIState()
	if first != smallState || a.UIState() != first {
		t.Error("UIState (cached) disagrees with the rendering")
	}
	a.SetSnapshot(nil)
	if a.Snapshot() == nil {
		t.Error("a nil snapshot replaced the latest one")
	}
}

// Events: queued for the context (bounded, oldest dropped), rendered by
// the override when set, and handed to their handler.
func TestEvents(t *testing.T) {
	a := New(Options{MaxPendingEvents: 2, NoPromptGuide: true,
		RenderEvent: func(name string, p wire.RawJSON) string {
			if name == "secret" {
				return ""
			}
			return RenderEvent(name, p)
		}})
	a.handleEvent("one", nil)
	a.handleEvent("secret", nil)
	a.handleEvent("two", wire.RawJSON(`[1]`))
	a.handleEvent("three", nil)
	c := llm.NewContext(user("q"))
	a.BeforeInference(c)
	want := []frames.LLMMessage{page(`<ui_event name="two">[1]</ui_event>`), page(`<ui_event name="three">null</ui_event>`), user("q")}
	if d := cmp.Diff(want, c.Messages()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	quiet := New(Options{NoEvents: true, NoPromptGuide: true})
	quiet.handleEvent("one", nil)
	c = llm.NewContext(user("q"))
	quiet.BeforeInference(c)
	if c.Len() != 1 {
		t.Errorf("NoEvents still injected: %+v", c.Messages())
	}
}

type noteClick struct {
	Ref string `json:"ref"`
}

// Handlers run as the task's background work, each event on its own.
func TestEventHandlers(t *testing.T) {
	a := New(Options{})
	attach(t, a)
	var (
		mu   sync.Mutex
		got  []string
		done = make(chan struct{}, 4)
	)
	record := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		done <- struct{}{}
	}
	if err := HandleEvent(a, "note_click", func(_ context.Context, p noteClick) { record("click " + p.Ref) }); err != nil {
		t.Fatal(err)
	}
	if err := a.OnEvent("raw", func(_ context.Context, p wire.RawJSON) { record("raw " + string(p)) }); err != nil {
		t.Fatal(err)
	}
	if err := a.OnEvent("note_click", func(context.Context, wire.RawJSON) {}); err == nil {
		t.Error("a second handler for one name was accepted")
	}
	if err := a.OnEvent("nil", nil); err == nil {
		t.Error("a nil handler was accepted")
	}
	if err := HandleEvent(a, "panics", func(context.Context, struct{}) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	a.handleEvent("note_click", wire.RawJSON(`{"ref":"e7"}`))
	a.handleEvent("note_click", wire.RawJSON(`{"ref":7}`)) // does not fit: not handled
	a.handleEvent("note_click", nil)                       // zero value
	a.handleEvent("raw", wire.RawJSON(`{"x":1}`))
	a.handleEvent("panics", nil)
	a.handleEvent("unknown", nil)
	for range 3 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("handlers did not run")
		}
	}
	if err := a.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"click e7", "click ", `raw {"x":1}`}, got, cmpSorted); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
