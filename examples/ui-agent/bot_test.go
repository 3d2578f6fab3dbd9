package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
)

// wire stands in for the WebRTC transport: the test queues the client's
// messages as frames.InputTransportMessage, and the sink collects what the
// server sends (RTVI messages leave as OutputTransportMessageUrgent).
type sink struct {
	mu   sync.Mutex
	msgs []map[string]any
	news chan struct{}
}

func (s *sink) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	var raw []byte
	switch m := f.(type) {
	case *frames.OutputTransportMessageUrgent:
		raw = m.Message
	case *frames.OutputTransportMessage:
		raw = m.Message
	default:
		return nil
	}
	h.Consume()
	var msg map[string]any
	if err := json.Unmarshal(raw, &msg); err != nil {
		return fmt.Errorf("server sent invalid JSON %q: %w", raw, err)
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, msg)
	s.mu.Unlock()
	select {
	case s.news <- struct{}{}:
	default:
	}
	return nil
}

// waitFor returns the first message from index *from on that matches, and
// moves *from past it. It fails the test after a generous bound.
func (s *sink) waitFor(t *testing.T, from *int, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		s.mu.Lock()
		for i := *from; i < len(s.msgs); i++ {
			if match(s.msgs[i]) {
				*from = i + 1
				m := s.msgs[i]
				s.mu.Unlock()
				return m
			}
		}
		s.mu.Unlock()
		select {
		case <-s.news:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			var types []string
			for _, m := range s.msgs[*from:] {
				b, _ := json.Marshal(m)
				types = append(types, string(b))
			}
			t.Fatalf("no %s; the server sent:\n%s", what, strings.Join(types, "\n"))
			return nil
		}
	}
}

type passThrough struct{}

func (passThrough) ProcessFrame(context.Context, *pipeline.Handle, frames.Frame, frames.Direction) error {
	return nil
}

func typed(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

func command(name string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		d, _ := m["data"].(map[string]any)
		return m["type"] == "ui-command" && d["command"] == name
	}
}

func jobGroup(kind string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		d, _ := m["data"].(map[string]any)
		return m["type"] == "ui-job-group" && d["kind"] == kind
	}
}

func clientMessage(t *testing.T, typ string, data any) *frames.InputTransportMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{"label": "rtvi-ai", "type": typ, "id": fmt.Sprintf("m-%s-%d", typ, time.Now().UnixNano()), "data": data})
	if err != nil {
		t.Fatal(err)
	}
	return &frames.InputTransportMessage{Message: b}
}

// session runs one demo session in text mode with the demo brain.
func session(t *testing.T) (*pipeline.Task, *sink, func()) {
	t.Helper()
	b := &bot{brain: chooseBrain(func(k string) string {
		if k == "FRAMEWIRE_BRAIN" {
			return "demo"
		}
		return ""
	}), voice: chooseVoice(context.Background(), func(k string) string {
		if k == "UI_AGENT_VOICE" {
			return "off" // these are text-chat sessions, whatever speech this build has
		}
		return ""
	}), log: zap.NewNop(), researchStep: time.Second}
	out := &sink{news: make(chan struct{}, 1)}
	task := mustBuild(t, b, out)
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	return task, out, func() {
		task.EndWhenDone()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("task ended with %v", err)
			}
		case <-time.After(20 * time.Second):
			task.Cancel("test over")
			<-done
			t.Error("the session did not end after End")
		}
	}
}

func snapshot(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("demobrain/testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dataOf(m map[string]any) map[string]any {
	d, _ := m["data"].(map[string]any)
	return d
}

// The whole demo turn over RTVI: handshake and greeting, a snapshot, then
// "where is the iPhone 17?" typed, answered with the reply tool's commands
// (scroll, then highlight, on the card's ref) and the answer as bot text.
func TestPointingTurnOverRTVI(t *testing.T) {
	task, out, stop := session(t)
	defer stop()
	from := 0
	task.QueueFrame(clientMessage(t, "client-ready", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}}))
	ready := out.waitFor(t, &from, "bot-ready", typed("bot-ready"))
	if about := dataOf(ready)["about"].(map[string]any); about["brain"] != "offline demo brain" {
		t.Errorf("bot-ready about = %v, want the brain named", about)
	}
	greet := out.waitFor(t, &from, "greeting", typed("bot-llm-text"))
	if !strings.HasPrefix(dataOf(greet)["text"].(string), "Hi!") {
		t.Errorf("greeting = %v", greet)
	}

	task.QueueFrame(clientMessage(t, "ui-snapshot", map[string]any{"tree": snapshot(t, "top")}))
	task.QueueFrame(clientMessage(t, "send-text", map[string]any{"content": "where is the iPhone 17?", "options": map[string]any{}}))

	scroll := out.waitFor(t, &from, "scroll_to", command("scroll_to"))
	if p := dataOf(scroll)["payload"].(map[string]any); p["ref"] != "e62" {
		t.Errorf("scroll_to payload = %v, want the iPhone 17 card (e62)", p)
	}
	hl := out.waitFor(t, &from, "highlight after scroll_to", command("highlight"))
	if p := dataOf(hl)["payload"].(map[string]any); p["ref"] != "e62" {
		t.Errorf("highlight payload = %v, want e62", p)
	}
	var answer strings.Builder
	for !strings.Contains(answer.String(), "scrolled down to it") {
		m := out.waitFor(t, &from, "the answer as bot-llm-text", typed("bot-llm-text"))
		answer.WriteString(dataOf(m)["text"].(string))
	}
	if !strings.Contains(answer.String(), "The iPhone 17 is in row 5, column 2") {
		t.Errorf("answer = %q", answer.String())
	}
}

// Filling the form: one reply fills three fields, in form order.
func TestFormFillTurn(t *testing.T) {
	task, out, stop := session(t)
	defer stop()
	from := 0
	task.QueueFrame(clientMessage(t, "client-ready", map[string]any{"version": "2.1.0"}))
	out.waitFor(t, &from, "bot-ready", typed("bot-ready"))
	task.QueueFrame(clientMessage(t, "ui-snapshot", map[string]any{"tree": snapshot(t, "top")}))
	task.QueueFrame(clientMessage(t, "send-text", map[string]any{"content": "My name is Ada Lovelace and my email is ada@example.com"}))
	var got []string
	for range 3 {
		m := out.waitFor(t, &from, "set_input_value", command("set_input_value"))
		p := dataOf(m)["payload"].(map[string]any)
		got = append(got, fmt.Sprintf("%v=%v replace=%v", p["ref"], p["value"], p["replace"]))
	}
	want := []string{"e91=Ada replace=true", "e92=Lovelace replace=true", "e93=ada@example.com replace=true"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("fills = %v, want %v", got, want)
	}
}

// Research starts a task group the client can cancel: the card gets a
// cancelled completion for every worker, then group_completed.
func TestResearchGroupCancelledFromThePage(t *testing.T) {
	task, out, stop := session(t)
	defer stop()
	from := 0
	task.QueueFrame(clientMessage(t, "client-ready", map[string]any{"version": "2.1.0"}))
	out.waitFor(t, &from, "bot-ready", typed("bot-ready"))
	task.QueueFrame(clientMessage(t, "ui-snapshot", map[string]any{"tree": snapshot(t, "top")}))
	task.QueueFrame(clientMessage(t, "send-text", map[string]any{"content": "compare prices for the iPhone 17"}))
	started := dataOf(out.waitFor(t, &from, "group_started", jobGroup("group_started")))
	if started["label"] != "Research (simulated): prices for the iPhone 17" || fmt.Sprint(started["workers"]) != "[catalog reviews deals]" || started["cancellable"] != true {
		t.Errorf("group_started = %v", started)
	}
	id := started["job_id"]
	task.QueueFrame(clientMessage(t, "ui-cancel-job-group", map[string]any{"job_id": id, "reason": "test"}))
	cancelled := map[any]bool{}
	for len(cancelled) < 3 {
		d := dataOf(out.waitFor(t, &from, "job_completed", jobGroup("job_completed")))
		if d["status"] != "cancelled" || d["job_id"] != id {
			t.Fatalf("job_completed = %v, want cancelled for %v", d, id)
		}
		cancelled[d["worker_name"]] = true
	}
	out.waitFor(t, &from, "group_completed", jobGroup("group_completed"))
}

// The context the model sees: the system prompt and the UI guide, then
// the current page and the user's words (the agent decides their order).
func TestTheModelSeesThePageAndTheQuery(t *testing.T) {
	b := &bot{brain: brain{Kind: "demo", Label: "recorder", provider: nil}, log: zap.NewNop(), researchStep: time.Second}
	seen := make(chan []frames.LLMMessage, 1)
	b.brain.provider = llm.ProviderFunc(func(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
		select {
		case seen <- req.Messages:
		default:
		}
		return func(func(llm.Event, error) bool) {}
	})
	out := &sink{news: make(chan struct{}, 1)}
	task := mustBuild(t, b, out)
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	defer func() { task.EndWhenDone(); <-done }()
	task.QueueFrame(clientMessage(t, "client-ready", map[string]any{"version": "2.1.0"}))
	// As a client does, send the page and the query once the bot is ready
	// and has greeted: before bot-ready the greeting could land after them.
	from := 0
	out.waitFor(t, &from, "bot-ready", typed("bot-ready"))
	out.waitFor(t, &from, "the end of the greeting", typed("bot-llm-stopped"))
	task.QueueFrame(clientMessage(t, "ui-snapshot", map[string]any{"tree": snapshot(t, "top")}))
	task.QueueFrame(clientMessage(t, "send-text", map[string]any{"content": "hello"}))
	select {
	case msgs := <-seen:
		var roles []string
		guide, pages, queries := false, 0, 0
		for _, m := range msgs {
			roles = append(roles, m.Role)
			guide = guide || (m.Role == llm.RoleSystem && strings.Contains(m.Content, "## UI context"))
			if m.Role == llm.RoleUser && strings.HasPrefix(m.Content, "<ui_state>") {
				pages++
			}
			if m.Role == llm.RoleUser && m.Content == "hello" {
				queries++
			}
		}
		if msgs[0].Content != systemPrompt || !guide || pages != 1 || queries != 1 {
			t.Fatalf("messages %v: want the system prompt first, the UI guide, one <ui_state> and the query", roles)
		}
		if last := msgs[len(msgs)-1].Role; last != llm.RoleUser && last != llm.RoleDeveloper {
			t.Errorf("the turn ends with a %s message, want the query or the page", last)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the model was never asked")
	}
}

// A research that runs to the end is announced with its findings.
func TestResearchFindingsAreAnnounced(t *testing.T) {
	b := &bot{brain: chooseBrain(func(string) string { return "" }), log: zap.NewNop(), researchStep: 20 * time.Millisecond}
	out := &sink{news: make(chan struct{}, 1)}
	task := mustBuild(t, b, out)
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	defer func() { task.EndWhenDone(); <-done }()
	from := 0
	task.QueueFrame(clientMessage(t, "client-ready", map[string]any{"version": "2.1.0"}))
	out.waitFor(t, &from, "bot-ready", typed("bot-ready"))
	task.QueueFrame(clientMessage(t, "ui-snapshot", map[string]any{"tree": snapshot(t, "top")}))
	task.QueueFrame(clientMessage(t, "send-text", map[string]any{"content": "research the Mariana Trench"}))
	out.waitFor(t, &from, "group_completed", jobGroup("group_completed"))
	m := out.waitFor(t, &from, "the findings", func(m map[string]any) bool {
		text, _ := dataOf(m)["text"].(string)
		return m["type"] == "bot-llm-text" && strings.HasPrefix(text, "The simulated research on the Mariana Trench is done; its figures are made up.")
	})
	for _, w := range []string{"catalog: ", "reviews: ", "deals: "} {
		if !strings.Contains(dataOf(m)["text"].(string), w) {
			t.Errorf("findings %q lack %q", dataOf(m)["text"], w)
		}
	}
}

// mustBuild builds a session's pipeline between a stand-in input and out.
func mustBuild(t testing.TB, b *bot, out pipeline.Processor) *pipeline.Task {
	t.Helper()
	task, err := b.build(passThrough{}, out, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return task
}
