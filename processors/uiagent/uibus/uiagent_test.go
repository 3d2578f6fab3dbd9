package uibus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/processors/uiagent"
)

// uiAgent runs a uiagent.Agent in a pipeline of its own (agent → user
// aggregator → LLM service → assistant aggregator) on a scripted model,
// until the test ends.
func uiAgent(t *testing.T, model *llmtest.Provider) *uiagent.Agent {
	t.Helper()
	agent := uiagent.New(uiagent.Options{})
	conv := llm.NewContext(llm.SystemMessage("You help with the page."))
	tools := []llm.Function{agent.ReplyTool()}
	conv.SetTools(llm.Tools(tools...))
	pair := llm.NewPair(conv, llm.PairOptions{BeforeInference: agent.BeforeInference})
	svc := llm.NewService(agent.Provider(model), llm.ServiceOptions{})
	if err := svc.Register(tools...); err != nil {
		t.Fatal(err)
	}
	task := pipeline.NewTask(pipeline.New(agent, pair.User(), svc, pair.Assistant()), pipeline.TaskOptions{})
	runTask(t, task, "the agent's task")
	return agent
}

// lastUser is the last user message of a request.
func lastUser(req *frames.LLMContext) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// A voice agent in one process asks a real UI agent served in another:
// the answer comes back; an interruption cancels the remote turn and
// frees the UI agent's single-flight Ask for the next question.
func TestAskARemoteUIAgent(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		model := &llmtest.Provider{
			Hang: func(n int) bool { return n == 0 }, // the first question is never answered
			Respond: func(n int, req *frames.LLMContext) []llm.Event {
				if n == 0 {
					return nil
				}
				return []llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "c", Name: uiagent.ReplyToolName,
					Arguments: `{"answer":"answer to ` + lastUser(req) + `"}`})}
			},
		}
		ui := uiAgent(t, model)
		serveAgent(t, p.Callee, "agents.ui", ui.Ask)
		voice := Agent{Bus: p.Caller, Subject: "agents.ui"}

		ctx, interrupt := context.WithCancel(t.Context())
		first := make(chan error, 1)
		go func() { _, err := voice.Ask(ctx, "first"); first <- err }()
		deadline := time.Now().Add(bustest.Wait)
		for len(model.Requests()) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		interrupt() // the user barges in
		if err := bustest.Within(t, first, bustest.Wait, "the first Ask returned"); !errors.Is(err, context.Canceled) {
			t.Errorf("first Ask: error %v, want context.Canceled", err)
		}

		ans, err := voice.Ask(t.Context(), "second")
		if err != nil {
			t.Fatalf("second Ask: %v", err)
		}
		if ans.Text != "answer to second" || ans.Outcome != uiagent.Replied || !ans.Asked {
			t.Errorf("second Ask = %+v", ans)
		}
	})
}
