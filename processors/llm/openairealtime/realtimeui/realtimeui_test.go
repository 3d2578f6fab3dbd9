package realtimeui

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/wsfake"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/openairealtime"
	"github.com/framewire/framewire/processors/llm/openairealtime/internal/transporttest"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/uiagent"
)

// fake replays testdata/session.ws: "< has TEXT" waits for a client event
// whose JSON holds TEXT, "< TYPE" for one of that type.
type fake struct {
	mu   sync.Mutex
	seen []string
}

func (f *fake) expect(c *wsfake.Conn, want string) bool {
	sub, has := strings.CutPrefix(want, "has ")
	for {
		f.mu.Lock()
		for _, e := range f.seen {
			if has && strings.Contains(e, sub) {
				f.mu.Unlock()
				return true
			}
		}
		f.mu.Unlock()
		_, b, err := c.Read()
		if err != nil {
			return false
		}
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(b, &head)
		if head.Type == "input_audio_buffer.append" {
			continue
		}
		f.mu.Lock()
		f.seen = append(f.seen, string(b))
		f.mu.Unlock()
		if !has && head.Type == want {
			return true
		}
	}
}

// source stands in for the input transport.
type source struct{}

func (source) ProcessFrame(context.Context, *pipeline.Handle, frames.Frame, frames.Direction) error {
	return nil
}

// One call builds the whole Realtime UI agent: the greeting at
// client-ready and the answer to a typed question reach the client as
// bot-output, and the reply's commands as ui-command.
func TestVoiceAgentInOneCall(t *testing.T) {
	f := &fake{}
	srv := wsfake.New(t, wsfake.Options{Path: "/v1/realtime", Expect: f.expect, ReadLimit: 1 << 20,
		Scripts: []wsfake.Script{wsfake.Load(t, "testdata/session.ws")}})
	base := "http" + strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "ws"), "/realtime")
	va, err := NewVoiceAgent(Options{Realtime: openairealtime.Options{BaseURL: base, APIKey: "k"}, SystemPrompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	greetings := 0
	va.OnClientReady(func(context.Context, *rtvi.ClientReadyFrame) {
		greetings++
		va.Say("Hello from the page.")
	})

	var mu sync.Mutex
	var msgs []map[string]any
	task := pipeline.NewTask(va.Pipeline(source{}, &transporttest.Speaker{}), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(fr frames.Frame) {
		if m, ok := fr.(*frames.OutputTransportMessageUrgent); ok {
			var v map[string]any
			if err := json.Unmarshal(m.Message, &v); err != nil {
				t.Errorf("invalid message %s: %v", m.Message, err)
			}
			mu.Lock()
			msgs = append(msgs, v)
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- task.Run(ctx) }()
	send := func(typ string, data any) {
		b, _ := json.Marshal(map[string]any{"label": "rtvi-ai", "type": typ, "id": typ, "data": data})
		task.QueueFrame(&frames.InputTransportMessage{Message: b})
	}
	outputs := func(typ string) []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, m := range msgs {
			if m["type"] == typ {
				d, _ := m["data"].(map[string]any)
				s, _ := d["text"].(string)
				if c, ok := d["command"].(string); ok {
					s = c
				}
				out = append(out, s)
			}
		}
		return out
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; messages: %v", what, msgs)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	tree := `{"root":{"ref":"e1","role":"generic","children":[{"ref":"e2","role":"heading","name":"Application form","level":1}]},"captured_at":1752494400000}`
	send("client-ready", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}})
	send("ui-snapshot", map[string]any{"tree": json.RawMessage(tree)})
	wait("the greeting", func() bool { return len(outputs("bot-output")) == 1 })
	send("client-ready", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}})
	send("send-text", map[string]any{"content": "Where is the form?", "options": map[string]any{}})
	wait("the answer", func() bool { return len(outputs("bot-output")) == 2 })
	task.EndWhenDone()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"Hello from the page.", "Below the essay."}, outputs("bot-output")); d != "" {
		t.Errorf("bot-output (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"highlight"}, outputs("ui-command")); d != "" {
		t.Errorf("ui-command (-want +got):\n%s", d)
	}
	if greetings != 1 {
		t.Errorf("greeted %d times for two client-ready, want once", greetings)
	}
}

// Two tools with one name are refused.
func TestVoiceAgentRefusesDuplicateTools(t *testing.T) {
	_, err := NewVoiceAgent(Options{Realtime: openairealtime.Options{APIKey: "k"},
		Tools: func(a *uiagent.Agent) []llm.Function { return []llm.Function{a.ReplyTool()} }})
	if err == nil || !strings.Contains(err.Error(), `two of the voice agent's tools are named "reply"`) {
		t.Errorf("err = %v, want the duplicate named", err)
	}
}
