package uiagent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// runningAgent returns an agent whose pushes are recorded, as if set up
// by a task.
func runningAgent(t testing.TB, o Options) (*Agent, *recorder) {
	a := New(o)
	return a, attach(t, a)
}

// The action methods send the reference's payloads, nulls included.
func TestActionPayloads(t *testing.T) {
	a, rec := runningAgent(t, Options{})
	type params struct {
		Artist string `json:"artist"`
	}
	calls := []func() error{
		func() error { a.ScrollTo("e1"); return nil },
		func() error { a.Highlight("e2"); return nil },
		func() error { a.SelectText("e3"); return nil },
		func() error { a.SelectRange("e3", 0, 4); return nil },
		func() error { a.Click("e4"); return nil },
		func() error { a.SetInputValue("e5", "Mark"); return nil },
		func() error { a.AppendInputValue("e5", " Backman"); return nil },
		func() error { a.Focus("e6"); return nil },
		func() error { a.Toast(wire.Toast{Title: "Saved"}); return nil },
		func() error { return a.Navigate("artist", params{"Nina Simone"}) },
		func() error { return a.Navigate("home", nil) },
		func() error { a.Send(wire.ScrollTo{TargetID: "top", Behavior: "instant"}); return nil },
		func() error { return a.SendCommand("add_note", map[string]string{"ref": "e7", "text": "Too long"}) },
		func() error { return a.SendCommand("clear_list", nil) },
		func() error { return a.SendCommand("raw", json.RawMessage(`{"n":1}`)) },
		func() error { return a.SendCommand("payload", wire.RawJSON(`[1,null]`)) },
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("action %d: %v", i, err)
		}
	}
	want := []string{
		`scroll_to {"ref":"e1","target_id":null,"behavior":null}`,
		`highlight {"ref":"e2","target_id":null,"duration_ms":null}`,
		`select_text {"ref":"e3","target_id":null,"start_offset":null,"end_offset":null}`,
		`select_text {"ref":"e3","target_id":null,"start_offset":0,"end_offset":4}`,
		`click {"ref":"e4","target_id":null}`,
		`set_input_value {"value":"Mark","ref":"e5","target_id":null,"replace":true}`,
		`set_input_value {"value":" Backman","ref":"e5","target_id":null,"replace":false}`,
		`focus {"ref":"e6","target_id":null}`,
		`toast {"title":"Saved","subtitle":null,"description":null,"image_url":null,"duration_ms":null}`,
		`navigate {"view":"artist","params":{"artist":"Nina Simone"}}`,
		`navigate {"view":"home","params":null}`,
		`scroll_to {"ref":null,"target_id":"top","behavior":"instant"}`,
		`add_note {"ref":"e7","text":"Too long"}`,
		`clear_list {}`,
		`raw {"n":1}`,
		`payload [1,null]`,
	}
	if d := cmp.Diff(want, commandsOf(rec.all())); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, f := range rec.all() {
		if _, ok := f.(*rtvi.UICommandFrame); !ok || f.Lane() != frames.LaneSystem {
			t.Errorf("%s is not a system UI command frame", frames.TypeName(f))
		}
	}
}

func TestActionErrors(t *testing.T) {
	a, rec := runningAgent(t, Options{})
	for i, err := range []error{
		a.SendCommand("", nil),
		a.SendCommand("x", json.RawMessage(`{`)),
		a.SendCommand("x", wire.RawJSON(`nope`)),
		a.SendCommand("x", make(chan int)),
		a.Navigate("v", func() {}),
	} {
		if err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d frames pushed for bad commands", n)
	}
}

// Commands sent before the task runs wait, and go out in order when the
// task sets the agent up.
func TestActionsBeforeTheTaskRuns(t *testing.T) {
	a := New(Options{})
	a.ScrollTo("e1")
	a.Click("e2")
	rec := attach(t, a)
	want := []string{
		`scroll_to {"ref":"e1","target_id":null,"behavior":null}`,
		`click {"ref":"e2","target_id":null}`,
	}
	if d := cmp.Diff(want, commandsOf(rec.all())); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
}

// A per-domain tool (ui-agent.md §5) is the whole turn: it acts with the
// action methods and completes the turn with Respond.
func TestPerDomainTool(t *testing.T) {
	type playArgs struct {
		Song string `json:"song"`
	}
	var agent *Agent
	play := llm.NewFunction("play", "Play a song and say so.", func(_ context.Context, call llm.FunctionCallParams, a playArgs) error {
		if err := agent.SendCommand("play", map[string]string{"song": a.Song}); err != nil {
			return err
		}
		agent.Highlight("e2")
		return agent.Respond(call, "Playing "+a.Song+".")
	})
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "p1", Name: "play", Arguments: `{"song":"Feeling Good"}`})})}
	r := newRig(t, model, rigOptions{tools: []llm.Function{play}})
	agent = r.agent
	r.say("play feeling good")
	turns := r.waitTurns(1)
	r.waitResults(1)
	r.settle()
	if d := cmp.Diff([]Answer{{Text: "Playing Feeling Good.", Outcome: Replied}}, turns); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{`play {"song":"Feeling Good"}`, `highlight {"ref":"e2","target_id":null,"duration_ms":null}`}, r.commands()); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Playing Feeling Good."}, r.spoken()); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d inferences, want 1", n)
	}
}

// A hand-rolled reply uses Act for the guarded actions and Respond for the
// answer; an app field rides along.
func TestHandRolledReply(t *testing.T) {
	var agent *Agent
	type args struct {
		Answer        string `json:"answer"`
		ResearchQuery string `json:"research_query,omitempty"`
	}
	var started []string
	reply := llm.NewFunction("reply", "Reply, and optionally start research.", func(_ context.Context, call llm.FunctionCallParams, a args) error {
		r, _, err := ParseReply(call.Arguments)
		if err != nil {
			return call.Result(llm.ErrorResult{Error: err.Error()})
		}
		agent.Act(r)
		if a.ResearchQuery != "" {
			started = append(started, a.ResearchQuery)
		}
		return agent.Respond(call, a.Answer)
	})
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "r1", Name: "reply",
		Arguments: `{"answer":"Researching the Mariana Trench now.","research_query":"Mariana Trench","highlight":"e2"}`})})}
	r := newRig(t, model, rigOptions{noWrap: true, snapshot: snapshotOf(t, formTree)})
	agent = r.agent
	if err := r.svc.Register(reply); err != nil { // replaces the bundled reply
		t.Fatal(err)
	}
	r.say("research the mariana trench")
	r.waitTurns(1)
	r.waitResults(1)
	r.settle()
	if d := cmp.Diff([]string{"Mariana Trench"}, started); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Researching the Mariana Trench now."}, r.spoken()); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{`highlight {"ref":"e2","target_id":null,"duration_ms":null}`}, r.commands()); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
}

// The zero Agent and the zero TaskGroups work, with default options.
func TestZeroValues(t *testing.T) {
	var a Agent
	if !strings.HasPrefix(a.Name(), "UIAgent#") || a.Tasks() == nil {
		t.Errorf("zero agent: %q %v", a.Name(), a.Tasks())
	}
	c := llm.NewContext(llm.UserMessage("hi"))
	a.BeforeInference(c)
	if m := c.Messages(); len(m) != 2 || m[0].Content != DefaultPromptGuide {
		t.Errorf("zero agent context: %+v", m)
	}
	a.ScrollTo("e1") // waits for a task that never comes
	if err := a.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	var tg TaskGroups
	if _, err := tg.Start(GroupOptions{}, Worker{Name: "a", Work: func(context.Context, func(any)) (any, error) { return nil, nil }}); err != nil {
		t.Errorf("zero task groups: %v", err)
	}
	// The group waits for a task; cleaning up ends it.
	if tg.Running() != 1 || !strings.HasPrefix(tg.Name(), "TaskGroups#") || tg.Cleanup(context.Background()) != nil || tg.Running() != 0 {
		t.Error("zero task groups misbehave")
	}
}
