package uiagent_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/uiagent"
	"github.com/framewire/framewire/transports/webrtc"
)

// The processors the guide's listings take as given.
var vad, stt, turns, tts pipeline.Processor = pipeline.PassThrough{}, pipeline.PassThrough{}, pipeline.PassThrough{}, pipeline.PassThrough{}

// The listings of docs/ui-agent.md §2, compiled. TestTheGuidesListingsCompile
// checks that the guide shows exactly these lines.

func newPipeline(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
	ua, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{
		Provider:     openai.New(openai.Options{}),
		SystemPrompt: "You are the shopping assistant of this page.",
		STT:          []pipeline.Processor{vad, stt, turns}, // nil: a text chat
		TTS:          tts,                                   // nil: answers as bot text
	})
	if err != nil {
		return nil, err
	}
	ua.OnClientReady(func(context.Context, *rtvi.ClientReadyFrame) {
		ua.Say("Hi! Ask me where anything is on this page.")
	})
	return pipeline.NewTask(ua.Pipeline(s.Input(), s.Output()), pipeline.TaskOptions{}), nil
}

func byHand(s *webrtc.Session) (*pipeline.Pipeline, error) {
	agent := uiagent.New(uiagent.Options{})
	conv := llm.NewContext(llm.SystemMessage("You are the shopping assistant of this page."))
	conv.SetTools(llm.Tools(agent.ReplyTool()))
	pair := llm.NewPair(conv, llm.PairOptions{BeforeInference: agent.BeforeInference})
	svc := llm.NewService(agent.Provider(openai.New(openai.Options{})), llm.ServiceOptions{})
	if err := svc.Register(agent.ReplyTool()); err != nil {
		return nil, err
	}
	rt := rtvi.NewProcessor(rtvi.Options{})
	p := pipeline.New(s.Input(), rt, agent, pair.User(), svc, tts, s.Output(), pair.Assistant())
	return p, nil
}

var _, _ = newPipeline, byHand

// Every Go listing of docs/ui-agent.md is code this file compiles: the
// first is newPipeline whole, the second the body of byHand.
func TestTheGuidesListingsCompile(t *testing.T) {
	guide, err := os.ReadFile("../../docs/ui-agent.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("docs_test.go")
	if err != nil {
		t.Fatal(err)
	}
	compiled := string(self)
	listings := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(guide), -1)
	if len(listings) != 2 {
		t.Fatalf("docs/ui-agent.md has %d Go listings; this test knows 2", len(listings))
	}
	for i, l := range listings {
		want := l[1]
		if i == 1 { // a body: compiled one tab deeper
			want = "\t" + strings.ReplaceAll(strings.TrimSuffix(want, "\n"), "\n", "\n\t") + "\n"
			want = strings.ReplaceAll(want, "\n\t\n", "\n\n")
		}
		if !strings.Contains(compiled, want) {
			t.Errorf("listing %d of docs/ui-agent.md is not compiled here; update docs_test.go with it:\n%s", i+1, l[1])
		}
	}
}
