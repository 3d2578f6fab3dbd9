package openairealtime

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

const pageTree = `{"root":{"ref":"e1","role":"generic","children":[
 {"ref":"e2","role":"heading","name":"Application form","level":1},
 {"ref":"e3","role":"textbox","name":"First name"},
 {"ref":"e4","role":"textbox","name":"Email","value":"old@example.com"},
 {"ref":"e5","role":"checkbox","name":"I agree to the terms"},
 {"ref":"e6","role":"button","name":"Submit application","state":["offscreen"]}
]},"captured_at":1752494400000}`

// rtviSession runs procs behind an RTVI processor (which brings its
// observer) and records the RTVI messages that leave the pipeline.
type rtviSession struct {
	task *pipeline.Task
	done chan error

	mu   sync.Mutex
	msgs []map[string]any
	down []frames.Frame
}

func startRTVI(t *testing.T, procs ...pipeline.Processor) *rtviSession {
	t.Helper()
	return startRTVIWith(t, rtvi.NewProcessor(rtvi.Options{}), procs...)
}

// startRTVIWith is startRTVI with the RTVI processor given.
func startRTVIWith(t *testing.T, rt *rtvi.Processor, procs ...pipeline.Processor) *rtviSession {
	t.Helper()
	s := &rtviSession{done: make(chan error, 1)}
	s.task = pipeline.NewTask(pipeline.New(append([]pipeline.Processor{rt}, procs...)...), pipeline.TaskOptions{})
	pipeline.OnDownstream(s.task, func(f frames.Frame) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if m, ok := f.(*frames.OutputTransportMessageUrgent); ok {
			var v map[string]any
			if err := json.Unmarshal(m.Message, &v); err != nil {
				t.Errorf("invalid message %s: %v", m.Message, err)
			}
			s.msgs = append(s.msgs, v)
			return
		}
		s.down = append(s.down, f)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	go func() { s.done <- s.task.Run(ctx) }()
	t.Cleanup(func() {
		s.task.EndWhenDone()
		<-s.done
		cancel()
	})
	return s
}

func (s *rtviSession) send(t *testing.T, typ, id string, data any) {
	b, err := json.Marshal(map[string]any{"label": "rtvi-ai", "type": typ, "id": id, "data": data})
	if err != nil {
		t.Fatal(err)
	}
	s.task.QueueFrame(&frames.InputTransportMessage{Message: b})
}

func (s *rtviSession) ofType(typ string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, m := range s.msgs {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// The UI agent's reply tool through the Realtime API, in process: a typed
// form-fill turn and a spoken pointing turn. The page gets the same
// ui-command messages as with a cascaded LLM; the <ui_state> goes in as a
// system item before each turn's response, the old one deleted; the
// answers are spoken by the model verbatim, and no tool result runs the
// model again.
func TestUIAgentReplyThroughRealtime(t *testing.T) {
	fake := newFake(t, "uiagent.ws")
	agent := uiagent.New(uiagent.Options{})
	svc := New(Options{BaseURL: fake.baseURL(), APIKey: "k", Functions: nil, BeforeResponse: agent.BeforeInference})
	if err := svc.Register(agent.ReplyTool()); err != nil {
		t.Fatal(err)
	}
	s := startRTVI(t, agent, svc.Pipeline())

	s.send(t, "client-ready", "r1", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}})
	waitFor(t, "bot-ready", func() bool { return len(s.ofType("bot-ready")) == 1 })
	s.send(t, "ui-snapshot", "s1", map[string]any{"tree": json.RawMessage(pageTree)})
	s.send(t, "send-text", "t1", map[string]any{"content": "My name is Mark, mark at daily dot co. Agree to the terms.", "options": map[string]any{}})
	waitFor(t, "seven ui-commands", func() bool { return len(s.ofType("ui-command")) == 7 })
	waitFor(t, "both answers spoken", func() bool { return len(fake.sent("response.create")) == 4 })
	waitFor(t, "both outputs", func() bool {
		n := 0
		for _, e := range fake.sent("conversation.item.create") {
			if strings.Contains(string(e.Raw), "function_call_output") {
				n++
			}
		}
		return n == 2
	})

	cmd := func(data string) map[string]any {
		var v map[string]any
		if err := json.Unmarshal([]byte(`{"label":"rtvi-ai","type":"ui-command","data":`+data+`}`), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := []map[string]any{
		cmd(`{"command":"scroll_to","payload":{"ref":"e3","target_id":null,"behavior":null}}`),
		cmd(`{"command":"highlight","payload":{"ref":"e2","target_id":null,"duration_ms":null}}`),
		cmd(`{"command":"set_input_value","payload":{"value":"Mark","ref":"e3","target_id":null,"replace":true}}`),
		cmd(`{"command":"set_input_value","payload":{"value":"mark@daily.co","ref":"e4","target_id":null,"replace":true}}`),
		cmd(`{"command":"click","payload":{"ref":"e5","target_id":null}}`),
		cmd(`{"command":"scroll_to","payload":{"ref":"e6","target_id":null,"behavior":null}}`),
		cmd(`{"command":"highlight","payload":{"ref":"e6","target_id":null,"duration_ms":null}}`),
	}
	if d := cmp.Diff(want, s.ofType("ui-command")); d != "" {
		t.Errorf("ui-command messages (-want +got):\n%s", d)
	}

	snap, err := wire.DecodeSnapshot([]byte(pageTree))
	if err != nil {
		t.Fatal(err)
	}
	state := uiagent.RenderUIState(snap)
	var got []string
	for _, e := range fake.sent() {
		// Without an output transport, whether the first answer counts as
		// heard when the user speaks again depends on timing; truncation
		// has a test of its own.
		if e.Type != "conversation.item.truncate" {
			got = append(got, summarize(t, e.Raw, state))
		}
	}
	wantEvents := []string{
		"session.update",
		"item system <guide> id=fw_item_1",
		"item <ui_state> id=fw_item_2",
		"item user My name is Mark, mark at daily dot co. Agree to the terms.",
		"response.create",
		// the first answer: its output and the verbatim response, in
		// either order (sorted below)
		"delete fw_item_2",
		"item <ui_state> id=fw_item_3 after item_a2",
		"response.create",
	}
	// The two events after each user turn's response.create come from two
	// goroutines (the tool result and the spoken answer): sort them.
	got = sortPairAfter(got, 5)
	if len(got) != 12 {
		t.Fatalf("client events:\n%s", strings.Join(got, "\n"))
	}
	wantFirst := append(append([]string{}, wantEvents[:5]...),
		"function_call_output call_r1 COMPLETED",
		"response.create say: Done: I filled in your name and email and agreed to the terms.")
	wantFirst = append(wantFirst, wantEvents[5:]...)
	wantFirst = append(wantFirst,
		"function_call_output call_r2 COMPLETED",
		"response.create say: With this button.")
	got = sortPairAfter(got, 10)
	if d := cmp.Diff(wantFirst, got); d != "" {
		t.Errorf("client events (-want +got):\n%s", d)
	}
	waitFor(t, "user-transcription", func() bool { return len(s.ofType("user-transcription")) >= 1 })
	if n := len(s.ofType("user-transcription")); n != 1 {
		t.Errorf("%d user-transcription messages, want 1", n)
	}
	// What the user said reaches the client as user-llm-text, as with a
	// cascaded LLM: typed, then transcribed.
	waitFor(t, "user-llm-text", func() bool { return len(s.ofType("user-llm-text")) >= 2 })
	var said []any
	for _, m := range s.ofType("user-llm-text") {
		said = append(said, m["data"].(map[string]any)["text"])
	}
	if d := cmp.Diff([]any{"My name is Mark, mark at daily dot co. Agree to the terms.", "Where do I submit it?"}, said); d != "" {
		t.Errorf("user-llm-text (-want +got):\n%s", d)
	}
}

// sortPairAfter puts the two events at i and i+1 in a fixed order.
func sortPairAfter(evs []string, i int) []string {
	if len(evs) > i+1 && evs[i] > evs[i+1] {
		evs[i], evs[i+1] = evs[i+1], evs[i]
	}
	return evs
}

// summarize names a client event in a line.
func summarize(t *testing.T, raw json.RawMessage, state string) string {
	var e struct {
		Type     string `json:"type"`
		ItemID   string `json:"item_id"`
		Previous string `json:"previous_item_id"`
		Item     struct {
			ID      string `json:"id"`
			Type    string `json:"type"`
			Role    string `json:"role"`
			CallID  string `json:"call_id"`
			Output  string `json:"output"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
		Response *struct {
			Instructions string `json:"instructions"`
			ToolChoice   string `json:"tool_choice"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	switch e.Type {
	case "conversation.item.create":
		if e.Item.Type == "function_call_output" {
			return "function_call_output " + e.Item.CallID + " " + e.Item.Output
		}
		text := ""
		if len(e.Item.Content) > 0 {
			text = e.Item.Content[0].Text
		}
		s := "item " + e.Item.Role + " " + text
		switch text {
		case state:
			// The block's role is the UI agent's to choose (user: page
			// text is untrusted input).
			s = "item <ui_state>"
		case uiagent.DefaultPromptGuide:
			s = "item " + e.Item.Role + " <guide>"
		}
		if e.Item.ID != "" {
			s += " id=" + e.Item.ID
		}
		if e.Previous != "" {
			s += " after " + e.Previous
		}
		return s
	case "conversation.item.delete":
		return "delete " + e.ItemID
	case "response.create":
		if e.Response != nil {
			_, said, _ := strings.Cut(e.Response.Instructions, "\n\n")
			if e.Response.ToolChoice != "none" {
				t.Errorf("a verbatim response may call tools: %s", raw)
			}
			return "response.create say: " + said
		}
	}
	return e.Type
}
