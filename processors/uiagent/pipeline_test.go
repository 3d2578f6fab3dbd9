package uiagent_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// session runs a pipeline behind an RTVI processor and observer and
// records the RTVI messages that leave it and the frames that reach the
// end.
type session struct {
	t    *testing.T
	task *pipeline.Task
	done chan error

	mu   sync.Mutex
	msgs []map[string]any
	down []frames.Frame
}

func startSession(t *testing.T, rt *rtvi.Processor, procs ...pipeline.Processor) *session {
	t.Helper()
	s := &session{t: t, done: make(chan error, 1)}
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
	started := make(chan struct{})
	s.task.OnStarted(func() { close(started) })
	go func() { s.done <- s.task.Run(context.Background()) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("task did not start")
	}
	t.Cleanup(func() {
		s.task.EndWhenDone()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.task.Cancel("test over")
			<-s.done
		}
	})
	return s
}

// send queues a client message.
func (s *session) send(typ, id string, data any) {
	b, err := json.Marshal(map[string]any{"label": "rtvi-ai", "type": typ, "id": id, "data": data})
	if err != nil {
		s.t.Fatal(err)
	}
	s.task.QueueFrame(&frames.InputTransportMessage{Message: b})
}

// waitMsgs waits (generously) until match holds for the messages so far.
func (s *session) waitMsgs(what string, match func([]map[string]any) bool) []map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		msgs := append([]map[string]any(nil), s.msgs...)
		s.mu.Unlock()
		if match(msgs) {
			return msgs
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; got %v", what, msgs)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func ofType(msgs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

func count(typ string, n int) func([]map[string]any) bool {
	return func(msgs []map[string]any) bool { return len(ofType(msgs, typ)) >= n }
}

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

const pageTree = `{"root":{"ref":"e1","role":"generic","children":[
 {"ref":"e2","role":"heading","name":"Application form","level":1},
 {"ref":"","role":"text","name":"First name"},
 {"ref":"e3","role":"textbox","name":"First name"},
 {"ref":"e4","role":"textbox","name":"Email","value":"old@example.com"},
 {"ref":"e5","role":"checkbox","name":"I agree to the terms"},
 {"ref":"e6","role":"button","name":"Submit application","state":["offscreen"]}
]},"captured_at":1752494400000}`

// The whole loop in process: the client streams a snapshot and types a
// turn; the model answers with one reply call that scrolls, highlights,
// fills two inputs and clicks; the ui-command messages leave as transport
// messages in that order, and the answer is spoken.
func TestPipelineReplyDrivesThePage(t *testing.T) {
	var (
		mu   sync.Mutex
		reqs []*frames.LLMContext
	)
	model := llm.ProviderFunc(func(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			mu.Lock()
			reqs = append(reqs, req)
			mu.Unlock()
			yield(llm.ToolCallEvent(frames.LLMToolCall{ID: "call_1", Name: "reply", Arguments: `{
				"answer": "Done: I filled in your name and email and agreed to the terms.",
				"scroll_to": "e3",
				"highlight": ["e2"],
				"fills": [{"ref": "e3", "value": "Mark"}, {"ref": "e4", "value": "mark@daily.co"}],
				"click": ["e5"]}`}), nil)
		}
	})
	agent := uiagent.New(uiagent.Options{})
	conv := llm.NewContext(llm.SystemMessage("You fill in forms for the user."))
	conv.SetTools(llm.Tools(agent.ReplyTool()))
	pair := llm.NewPair(conv, llm.PairOptions{BeforeInference: agent.BeforeInference})
	svc := llm.NewService(agent.Provider(model), llm.ServiceOptions{})
	if err := svc.Register(agent.ReplyTool()); err != nil {
		t.Fatal(err)
	}
	rt := rtvi.NewProcessor(rtvi.Options{})
	s := startSession(t, rt, agent, pair.User(), svc, pair.Assistant())

	s.send("client-ready", "r1", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}})
	s.waitMsgs("bot-ready", count("bot-ready", 1))
	s.send("ui-snapshot", "s1", map[string]any{"tree": json.RawMessage(pageTree)})
	s.send("send-text", "t1", map[string]any{"content": "My name is Mark, mark at daily dot co. Agree to the terms.", "options": map[string]any{}})

	msgs := s.waitMsgs("five ui-commands", count("ui-command", 5))
	got := ofType(msgs, "ui-command")
	cmd := func(data string) map[string]any {
		return decode(t, `{"label":"rtvi-ai","type":"ui-command","data":`+data+`}`)
	}
	want := []map[string]any{
		cmd(`{"command":"scroll_to","payload":{"ref":"e3","target_id":null,"behavior":null}}`),
		cmd(`{"command":"highlight","payload":{"ref":"e2","target_id":null,"duration_ms":null}}`),
		cmd(`{"command":"set_input_value","payload":{"value":"Mark","ref":"e3","target_id":null,"replace":true}}`),
		cmd(`{"command":"set_input_value","payload":{"value":"mark@daily.co","ref":"e4","target_id":null,"replace":true}}`),
		cmd(`{"command":"click","payload":{"ref":"e5","target_id":null}}`),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ui-command messages (-want +got):\n%s", d)
	}

	// The model saw the screen right before the user's words, which stay
	// last, so the client still gets them as user-llm-text.
	mu.Lock()
	first := reqs[0]
	mu.Unlock()
	screen := first.Messages[len(first.Messages)-2]
	wantState := uiagent.RenderUIState(mustSnapshot(t, pageTree))
	if screen.Role != "user" || screen.Content != wantState {
		t.Errorf("the message before the user's words: %+v", screen)
	}
	if !strings.Contains(screen.Content, `- textbox "Email" = "old@example.com" [ref=e4]`) {
		t.Errorf("the screen lacks the input's value:\n%s", screen.Content)
	}
	if last := first.Messages[len(first.Messages)-1]; last.Role != "user" {
		t.Errorf("the user's words are not last: %+v", last)
	}
	ult := ofType(msgs, "user-llm-text")
	if len(ult) != 1 || ult[0]["data"].(map[string]any)["text"] != "My name is Mark, mark at daily dot co. Agree to the terms." {
		t.Errorf("user-llm-text: %v", ult)
	}

	// The answer is spoken verbatim, after the commands.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		var spoken []string
		for _, f := range s.down {
			if sp, ok := f.(*frames.TTSSpeak); ok {
				spoken = append(spoken, sp.Text)
			}
		}
		s.mu.Unlock()
		if len(spoken) > 0 {
			if d := cmp.Diff([]string{"Done: I filled in your name and email and agreed to the terms."}, spoken); d != "" {
				t.Errorf("spoken (-want +got):\n%s", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the answer was never spoken")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if n := len(reqs); n != 1 {
		t.Errorf("%d inferences, want 1", n)
	}
}

func mustSnapshot(t testing.TB, tree string) *wire.Snapshot {
	t.Helper()
	s, err := wire.DecodeSnapshot([]byte(tree))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
