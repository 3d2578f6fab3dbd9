package uiagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/uiagent"
)

// speaker stands in for a TTS service: it takes what would be spoken.
type speaker struct {
	mu     sync.Mutex
	spoken []string
}

func (s *speaker) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if sp, ok := f.(*frames.TTSSpeak); ok {
		h.Consume()
		s.mu.Lock()
		s.spoken = append(s.spoken, sp.Text)
		s.mu.Unlock()
	}
	return nil
}

func (s *speaker) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := append([]string(nil), s.spoken...)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("spoken %q, want %d answers", got, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// fillModel answers every turn with one reply call that fills the form,
// and records the requests it got.
type fillModel struct {
	mu   sync.Mutex
	reqs []*frames.LLMContext
}

func (m *fillModel) Stream(_ context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		yield(llm.ToolCallEvent(frames.LLMToolCall{ID: "call_1", Name: "reply", Arguments: `{
			"answer": "Done.", "scroll_to": "e3", "highlight": ["e2"],
			"fills": [{"ref": "e3", "value": "Mark"}], "click": ["e5"]}`}), nil)
	}
}

// formTurn plays one form-fill turn against a session and returns the
// RTVI messages that left it and what was spoken.
func formTurn(t *testing.T, s *session, tts *speaker) ([]map[string]any, []string) {
	t.Helper()
	s.send("client-ready", "r1", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "test"}})
	s.waitMsgs("bot-ready", count("bot-ready", 1))
	s.send("ui-snapshot", "s1", map[string]any{"tree": json.RawMessage(pageTree)})
	s.send("send-text", "t1", map[string]any{"content": "My name is Mark. Agree to the terms.", "options": map[string]any{}})
	spoken := tts.wait(t, 1)
	msgs := s.waitMsgs("four ui-commands and the call's end", func(m []map[string]any) bool {
		return count("ui-command", 4)(m) && count("llm-function-call-stopped", 1)(m)
	})
	return settledLast(msgs), spoken
}

// settledLast moves llm-function-call-stopped to the end: the agent
// settles the reply's result and sends its commands from two goroutines,
// so where that message falls among the others differs from run to run.
func settledLast(msgs []map[string]any) []map[string]any {
	var out, stopped []map[string]any
	for _, m := range msgs {
		if m["type"] == "llm-function-call-stopped" {
			stopped = append(stopped, m)
		} else {
			out = append(out, m)
		}
	}
	return append(out, stopped...)
}

// The one-call wiring is the hand wiring of docs/ui-agent.md: the same turn
// gives the same RTVI messages, the same spoken answer and the same
// request to the model (the reply tool once, the prompt guide, the screen
// right before the user's words).
func TestVoiceAgentWiresWhatTheHandWiringDoes(t *testing.T) {
	const prompt = "You fill in forms for the user."

	handModel, handTTS := &fillModel{}, &speaker{}
	agent := uiagent.New(uiagent.Options{})
	conv := llm.NewContext(llm.SystemMessage(prompt))
	conv.SetTools(llm.Tools(agent.ReplyTool()))
	pair := llm.NewPair(conv, llm.PairOptions{BeforeInference: agent.BeforeInference})
	svc := llm.NewService(agent.Provider(handModel), llm.ServiceOptions{})
	if err := svc.Register(agent.ReplyTool()); err != nil {
		t.Fatal(err)
	}
	hand := startSession(t, rtvi.NewProcessor(rtvi.Options{}), agent, pair.User(), svc, handTTS, pair.Assistant())
	wantMsgs, wantSpoken := formTurn(t, hand, handTTS)

	oneModel, oneTTS := &fillModel{}, &speaker{}
	v, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{Provider: oneModel, SystemPrompt: prompt, TTS: oneTTS})
	if err != nil {
		t.Fatal(err)
	}
	procs := v.Processors(pipeline.PassThrough{}, pipeline.PassThrough{})
	if procs[1] != pipeline.Processor(v.RTVI()) {
		t.Fatalf("the RTVI processor is not right after the input: %v", procs)
	}
	one := startSession(t, v.RTVI(), procs[2:]...)
	gotMsgs, gotSpoken := formTurn(t, one, oneTTS)

	if d := cmp.Diff(wantMsgs, gotMsgs); d != "" {
		t.Errorf("RTVI messages, hand wiring (-) and NewVoiceAgent (+):\n%s", d)
	}
	if d := cmp.Diff(wantSpoken, gotSpoken); d != "" {
		t.Errorf("spoken (-hand +one call):\n%s", d)
	}
	handModel.mu.Lock()
	oneModel.mu.Lock()
	defer handModel.mu.Unlock()
	defer oneModel.mu.Unlock()
	if len(handModel.reqs) != 1 || len(oneModel.reqs) != 1 {
		t.Fatalf("inferences: %d by hand, %d in one call; want 1 each", len(handModel.reqs), len(oneModel.reqs))
	}
	want, got := handModel.reqs[0], oneModel.reqs[0]
	if d := cmp.Diff(want.Messages, got.Messages); d != "" {
		t.Errorf("the model's messages (-hand +one call):\n%s", d)
	}
	if d := cmp.Diff(want.Tools, got.Tools); d != "" {
		t.Errorf("the model's tools (-hand +one call):\n%s", d)
	}
	if n := len(got.Tools); n != 1 || got.Tools[0].Name != "reply" {
		t.Errorf("tools %v, want the reply tool once", got.Tools)
	}
}

// Say works before the task runs: the greeting waits and is the first
// thing spoken, after bot-ready.
func TestVoiceAgentSaysBeforeTheTaskRuns(t *testing.T) {
	tts := &speaker{}
	v, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{Provider: &fillModel{}, TTS: tts})
	if err != nil {
		t.Fatal(err)
	}
	v.Say("Hi! Ask me anything about this page.")
	procs := v.Processors(pipeline.PassThrough{}, pipeline.PassThrough{})
	s := startSession(t, v.RTVI(), procs[2:]...)
	_, spoken := formTurn(t, s, tts)
	if len(spoken) < 1 || spoken[0] != "Hi! Ask me anything about this page." {
		t.Errorf("spoken %q, want the greeting first", spoken)
	}
}

// Without a TTS the answer goes out as bot text (bot-llm-text and
// bot-transcription), and nothing asks for speech.
func TestVoiceAgentWithoutTTSAnswersAsText(t *testing.T) {
	v, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{Provider: &fillModel{}})
	if err != nil {
		t.Fatal(err)
	}
	procs := v.Processors(pipeline.PassThrough{}, pipeline.PassThrough{})
	s := startSession(t, v.RTVI(), procs[2:]...)
	s.send("client-ready", "r1", map[string]any{"version": "2.1.0"})
	s.send("ui-snapshot", "s1", map[string]any{"tree": json.RawMessage(pageTree)})
	s.send("send-text", "t1", map[string]any{"content": "Fill it in.", "options": map[string]any{}})
	msgs := s.waitMsgs("the answer as bot text", count("bot-transcription", 1))
	for _, typ := range []string{"bot-llm-text", "bot-transcription"} {
		if m := ofType(msgs, typ); len(m) != 1 || m[0]["data"].(map[string]any)["text"] != "Done." {
			t.Errorf("%s: %v, want the answer once", typ, m)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.down {
		if _, ok := f.(*frames.TTSSpeak); ok {
			t.Error("a TTSSpeak left a pipeline without TTS")
		}
	}
}

func TestNewVoiceAgentRefusesWhatCannotWork(t *testing.T) {
	if _, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{}); err == nil || !strings.Contains(err.Error(), "Provider") {
		t.Errorf("no provider: %v, want an error naming the Provider", err)
	}
	twice := func(*uiagent.Agent) []llm.Function {
		f := llm.Function{Name: "reply", Handler: func(context.Context, llm.FunctionCallParams) error { return errors.New("never") }}
		return []llm.Function{f}
	}
	if _, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{Provider: &fillModel{}, Tools: twice}); err == nil {
		t.Error("a second tool named reply was accepted")
	}
	v, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{Provider: &fillModel{}})
	if err != nil {
		t.Fatal(err)
	}
	v.Processors(pipeline.PassThrough{}, pipeline.PassThrough{})
	defer func() {
		if recover() == nil {
			t.Error("placing the processors twice did not panic")
		}
	}()
	v.Processors(pipeline.PassThrough{}, pipeline.PassThrough{})
}

// Issue 26 row 10: a client that sends client-ready again and again (200
// at 20 a second in the report) gets bot-ready each time, as Pipecat
// answers it, but the greeting, which costs a TTS request, is said once.
func TestRepeatedClientReadyGreetsOnce(t *testing.T) {
	tts := &speaker{}
	v, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{Provider: &fillModel{}, TTS: tts})
	if err != nil {
		t.Fatal(err)
	}
	var ready atomic.Int32
	v.OnClientReady(func(context.Context, *rtvi.ClientReadyFrame) {
		ready.Add(1)
		v.Say("Hello!")
	})
	procs := v.Processors(pipeline.PassThrough{}, pipeline.PassThrough{})
	s := startSession(t, v.RTVI(), procs[2:]...)
	const n = 50
	for i := range n {
		s.send("client-ready", fmt.Sprintf("r%d", i), map[string]any{"version": "2.1.0"})
	}
	s.waitMsgs("a bot-ready for each client-ready", count("bot-ready", n))
	// The RTVI processor handles messages in order: once the answer to
	// this one is spoken, every client-ready's handlers have run.
	s.send("ui-snapshot", "s1", map[string]any{"tree": json.RawMessage(pageTree)})
	s.send("send-text", "t1", map[string]any{"content": "Fill it in.", "options": map[string]any{}})
	spoken := tts.wait(t, 2)
	if d := cmp.Diff([]string{"Hello!", "Done."}, spoken); d != "" {
		t.Errorf("spoken (-want +got):\n%s", d)
	}
	if got := ready.Load(); got != 1 {
		t.Errorf("the client-ready handler ran %d times, want once", got)
	}
}
