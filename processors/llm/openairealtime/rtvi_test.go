package openairealtime

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/processors/llm/openairealtime/internal/transporttest"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/uiagent"
)

// An RTVI 2.x client of a Realtime pipeline gets the bot's words as it
// does from a cascaded one: the greeting's text, and the answers to a
// typed and a spoken question, as bot-output (spoken, a sentence at a
// time) and bot-tts-text after the output transport, and as bot-llm-text
// as they stream. Fails before: the transcript went out as word TTSText,
// whose bot-output 2.x clients never get, so the page showed no answer.
func TestRTVIClientGetsTheBotsWords(t *testing.T) {
	fake := newFake(t, "rtvi.ws")
	agent := uiagent.New(uiagent.Options{})
	svc := New(Options{BaseURL: fake.baseURL(), APIKey: "k", BeforeResponse: agent.BeforeInference})
	if err := svc.Register(agent.ReplyTool()); err != nil {
		t.Fatal(err)
	}
	rp := rtvi.NewProcessor(rtvi.Options{})
	rp.OnClientReady(func(context.Context, *rtvi.ClientReadyFrame) { agent.Say("Hi! I can see this page.") })
	s := startRTVIWith(t, rp, agent, svc.Pipeline(), &transporttest.Speaker{}, svc.PlayedTap())
	fake.until = map[string]func() bool{"the typed answer was heard": func() bool { return s.saw("bot-output", "It is a job application.") }}

	s.send(t, "client-ready", "r1", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}})
	s.send(t, "ui-snapshot", "s1", map[string]any{"tree": json.RawMessage(pageTree)})
	waitFor(t, "the greeting", func() bool { return len(s.ofType("bot-output")) >= 2 })
	s.send(t, "send-text", "t1", map[string]any{"content": "What is this form for?", "options": map[string]any{}})
	waitFor(t, "the last answer", func() bool { return s.saw("bot-output", "With the button at the bottom.") })

	texts := func(typ string, spoken bool) []string {
		var out []string
		for _, m := range s.ofType(typ) {
			d := m["data"].(map[string]any)
			if spoken && d["spoken"] != true {
				t.Errorf("%s not spoken: %v", typ, d)
			}
			out = append(out, d["text"].(string))
		}
		return out
	}
	want := []string{"Hi!", "I can see this page.", "It is a job application.", "With the button at the bottom."}
	if d := cmp.Diff(want, texts("bot-output", true)); d != "" {
		t.Errorf("bot-output (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, texts("bot-tts-text", false)); d != "" {
		t.Errorf("bot-tts-text (-want +got):\n%s", d)
	}
	llm := ""
	for _, x := range texts("bot-llm-text", false) {
		llm += x
	}
	if want := "Hi! I can see this page.It is a job application.With the button at the bottom."; llm != want {
		t.Errorf("bot-llm-text = %q, want %q", llm, want)
	}
}

// saw reports whether a message of type typ with text came out.
func (s *rtviSession) saw(typ, text string) bool {
	for _, m := range s.ofType(typ) {
		if d, ok := m["data"].(map[string]any); ok && d["text"] == text {
			return true
		}
	}
	return false
}
