package uiagent_test

import (
	"context"
	"encoding/json"
	"fmt"
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

func (s *session) sendRaw(raw string) {
	s.task.QueueFrame(&frames.InputTransportMessage{Message: []byte(raw)})
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
	if screen.Role != "developer" || screen.Content != wantState {
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

// lifecycle waits for a group's envelopes and returns them without the
// label and type, and with "at" checked and removed.
func lifecycle(t *testing.T, msgs []map[string]any, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range ofType(msgs, typ) {
		d := map[string]any{}
		for k, v := range m["data"].(map[string]any) {
			d[k] = v
		}
		if at, ok := d["at"].(float64); !ok || at <= 0 {
			t.Errorf("envelope without a valid at: %v", m)
		}
		delete(d, "at")
		out = append(out, d)
	}
	return out
}

// The conformance job group in both vocabularies: a 1.3.0 client sees
// ui-task with task names, a 2.1.0 client ui-job-group with job names,
// each worker's update before its completion, group_completed last.
func TestConformanceJobGroupVocabularies(t *testing.T) {
	for _, tc := range []struct {
		version, typ, id, workers, worker, update, completed string
	}{
		{"1.3.0", "ui-task", "task_id", "agents", "agent_name", "task_update", "task_completed"},
		{"2.1.0", "ui-job-group", "job_id", "workers", "worker_name", "job_update", "job_completed"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			rt := rtvi.NewProcessor(rtvi.Options{})
			groups := uiagent.NewTaskGroups(uiagent.TaskGroupsOptions{})
			uiagent.WireConformance(rt, groups)
			s := startSession(t, rt, groups)
			s.send("client-ready", "r1", map[string]any{"version": tc.version})
			s.waitMsgs("bot-ready", count("bot-ready", 1))
			s.send("client-message", "c1", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"alpha", "beta"}, "label": "Research"}})
			msgs := s.waitMsgs("the lifecycle", count(tc.typ, 6))
			got := lifecycle(t, msgs, tc.typ)
			id, _ := got[0][tc.id].(string)
			if id == "" {
				t.Fatalf("no id in %v", got[0])
			}
			want0 := map[string]any{"kind": "group_started", tc.id: id, tc.workers: []any{"alpha", "beta"}, "label": "Research", "cancellable": true}
			if d := cmp.Diff(want0, got[0]); d != "" {
				t.Errorf("group_started (-want +got):\n%s", d)
			}
			seen := map[string][]string{}
			for _, e := range got[1:5] {
				w, _ := e[tc.worker].(string)
				seen[w] = append(seen[w], e["kind"].(string))
				switch e["kind"] {
				case tc.update:
					if d := cmp.Diff(map[string]any{"kind": tc.update, tc.id: id, tc.worker: w, "data": map[string]any{"text": "working"}}, e); d != "" {
						t.Errorf("update (-want +got):\n%s", d)
					}
				case tc.completed:
					if d := cmp.Diff(map[string]any{"kind": tc.completed, tc.id: id, tc.worker: w, "status": "completed", "response": map[string]any{"worker": w}}, e); d != "" {
						t.Errorf("completion (-want +got):\n%s", d)
					}
				default:
					t.Errorf("unexpected envelope %v", e)
				}
			}
			for _, w := range []string{"alpha", "beta"} {
				if d := cmp.Diff([]string{tc.update, tc.completed}, seen[w]); d != "" {
					t.Errorf("%s (-want +got):\n%s", w, d)
				}
			}
			if d := cmp.Diff(map[string]any{"kind": "group_completed", tc.id: id}, got[5]); d != "" {
				t.Errorf("group_completed (-want +got):\n%s", d)
			}
			raw, _ := json.Marshal(ofType(msgs, tc.typ))
			other := map[string]string{"1.3.0": "job", "2.1.0": "task"}[tc.version]
			if strings.Contains(string(raw), other) || (tc.version == "2.1.0" && strings.Contains(string(raw), "agent")) ||
				(tc.version == "1.3.0" && strings.Contains(string(raw), "worker_name")) {
				t.Errorf("the %s envelopes mix vocabularies: %s", tc.version, raw)
			}
		})
	}
}

// The user cancels a held group with either cancel type, from either
// client: every unfinished worker gets a cancelled completion without a
// response, then group_completed; a non-cancellable group is not
// cancelled.
func TestConformanceCancel(t *testing.T) {
	for _, tc := range []struct {
		version, cancelType, idKey, typ string
	}{
		{"2.1.0", "ui-cancel-job-group", "job_id", "ui-job-group"},
		{"2.1.0", "ui-cancel-task", "task_id", "ui-job-group"},
		{"1.3.0", "ui-cancel-task", "task_id", "ui-task"},
		{"1.3.0", "ui-cancel-job-group", "job_id", "ui-task"},
	} {
		t.Run(tc.version+"/"+tc.cancelType, func(t *testing.T) {
			rt := rtvi.NewProcessor(rtvi.Options{})
			groups := uiagent.NewTaskGroups(uiagent.TaskGroupsOptions{})
			uiagent.WireConformance(rt, groups)
			s := startSession(t, rt, groups)
			s.send("client-ready", "r1", map[string]any{"version": tc.version})
			s.waitMsgs("bot-ready", count("bot-ready", 1))
			idKey := map[string]string{"ui-task": "task_id", "ui-job-group": "job_id"}[tc.typ]
			workerKey := map[string]string{"ui-task": "agent_name", "ui-job-group": "worker_name"}[tc.typ]

			s.send("client-message", "c0", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"w"}, "cancellable": false, "hold_ms": 600000}})
			msgs := s.waitMsgs("the locked group", count(tc.typ, 2))
			locked := lifecycle(t, msgs, tc.typ)[0][idKey]
			s.send(tc.cancelType, "x0", map[string]any{tc.idKey: locked, "reason": "no"})

			s.send("client-message", "c1", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"a", "b"}, "hold_ms": 600000}})
			msgs = s.waitMsgs("the held group", count(tc.typ, 5))
			id := lifecycle(t, msgs, tc.typ)[2][idKey]
			s.send(tc.cancelType, "x1", map[string]any{tc.idKey: id})
			msgs = s.waitMsgs("the cancellation", count(tc.typ, 8))
			got := lifecycle(t, msgs, tc.typ)
			completed := map[string]string{"ui-task": "task_completed", "ui-job-group": "job_completed"}[tc.typ]
			want := []map[string]any{
				{"kind": completed, idKey: id, workerKey: "a", "status": "cancelled"},
				{"kind": completed, idKey: id, workerKey: "b", "status": "cancelled"},
				{"kind": "group_completed", idKey: id},
			}
			if d := cmp.Diff(want, got[5:]); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			for _, e := range got {
				if e[idKey] == locked && e["kind"] != "group_started" && e["kind"] != map[string]string{"ui-task": "task_update", "ui-job-group": "job_update"}[tc.typ] {
					t.Errorf("the non-cancellable group was cancelled: %v", e)
				}
			}
		})
	}
}

// Rows 5, 6 and 10: a ui_state server-message for every snapshot (a large
// one too), a ui_event one for every event; a bad start-job-group gets an
// error-response.
func TestConformanceServerMessages(t *testing.T) {
	rt := rtvi.NewProcessor(rtvi.Options{})
	groups := uiagent.NewTaskGroups(uiagent.TaskGroupsOptions{})
	uiagent.WireConformance(rt, groups)
	s := startSession(t, rt, groups)
	s.send("client-ready", "r1", map[string]any{"version": "2.1.0"})
	s.send("ui-snapshot", "s1", map[string]any{"tree": json.RawMessage(pageTree)})
	s.send("ui-event", "e1", map[string]any{"event": "clicked", "payload": map[string]any{"x": 1, "s": "héllo"}})
	s.send("ui-event", "e2", map[string]any{"event": "bare"})
	big := bigTree(60_000)
	s.sendRaw(`{"label":"rtvi-ai","type":"ui-snapshot","id":"s2","data":{"tree":` + big + `}}`)
	s.send("client-message", "c1", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": "a"}})
	msgs := s.waitMsgs("the replies", func(m []map[string]any) bool {
		return len(ofType(m, "server-message")) >= 4 && len(ofType(m, "error-response")) >= 1
	})
	sm := ofType(msgs, "server-message")
	state := sm[0]["data"].(map[string]any)
	text, _ := state["text"].(string)
	if state["type"] != "ui_state" || text != uiagent.RenderUIState(mustSnapshot(t, pageTree)) {
		t.Errorf("ui_state message: %v", state)
	}
	if !strings.HasPrefix(text, "<ui_state>") || !strings.HasSuffix(text, "</ui_state>") || !strings.Contains(text, "- heading") || !strings.Contains(text, "[ref=e") {
		t.Errorf("ui_state text fails the conformance checks:\n%s", text)
	}
	if d := cmp.Diff(map[string]any{"type": "ui_event", "event": "clicked", "payload": map[string]any{"x": 1.0, "s": "héllo"}}, sm[1]["data"]); d != "" {
		t.Errorf("ui_event (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"type": "ui_event", "event": "bare", "payload": nil}, sm[2]["data"]); d != "" {
		t.Errorf("ui_event without payload (-want +got):\n%s", d)
	}
	bigText, _ := sm[3]["data"].(map[string]any)["text"].(string)
	if !strings.Contains(bigText, `- heading "A big page" [level=1] [ref=e2]`) {
		t.Errorf("the large snapshot's heading is missing (%d bytes)", len(bigText))
	}
	er := ofType(msgs, "error-response")[0]
	if er["id"] != "c1" || !strings.Contains(fmt.Sprint(er["data"]), "workers") {
		t.Errorf("error-response: %v", er)
	}
}

// bigTree returns a snapshot tree of about size bytes of JSON.
func bigTree(size int) string {
	var b strings.Builder
	b.WriteString(`{"root":{"ref":"e1","role":"generic","children":[{"ref":"e2","role":"heading","name":"A big page","level":1}`)
	for i := 3; b.Len() < size-100; i++ {
		fmt.Fprintf(&b, `,{"ref":"e%d","role":"paragraph","name":"Paragraph %d with enough words in it to look like real text on a page."}`, i, i)
	}
	b.WriteString(`]},"captured_at":1}`)
	return b.String()
}
