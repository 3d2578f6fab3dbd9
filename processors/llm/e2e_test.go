package llm_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
)

type cityArgs struct {
	City string `json:"city" jsonschema_description:"City name"`
}

type tzArgs struct {
	TZ string `json:"tz" jsonschema_description:"IANA time zone"`
}

// The whole loop: the user speaks, the model calls two tools in parallel,
// the handlers run at the same time, inference runs once more with both
// results, and the answer goes out; the context holds the conversation
// message by message.
func TestEndToEndParallelToolsThenAnswer(t *testing.T) {
	const question = "What's the weather in Paris and the time in Tokyo?"
	const answer = "It's 21°C and sunny in Paris, and 9 PM in Tokyo."

	model := &llmtest.Provider{Respond: func(n int, req *frames.LLMContext) []llm.Event {
		switch n {
		case 0:
			if last := req.Messages[len(req.Messages)-1]; last.Role != "user" || last.Content != question {
				t.Errorf("first inference saw last message %+v", last)
			}
			return []llm.Event{
				toolCall("call_w", "get_weather", `{"city":"Paris"}`),
				toolCall("call_t", "get_time", `{"tz":"Asia/Tokyo"}`),
			}
		case 1:
			return textEvents("It's 21°C and sunny in Paris,", " and 9 PM in Tokyo.")
		}
		t.Errorf("unexpected inference #%d", n+1)
		return nil
	}}

	var barrier sync.WaitGroup // both handlers must be running at once
	barrier.Add(2)
	meet := func(ctx context.Context) error {
		barrier.Done()
		done := make(chan struct{})
		go func() { barrier.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	weather := llm.NewFunction("get_weather", "Current weather in a city.", func(ctx context.Context, call llm.FunctionCallParams, a cityArgs) error {
		if err := meet(ctx); err != nil {
			return err
		}
		return call.Result(map[string]any{"temp_c": 21, "sky": "sunny"})
	})
	clock := llm.NewFunction("get_time", "Current time in a time zone.", func(ctx context.Context, call llm.FunctionCallParams, a tzArgs) error {
		if err := meet(ctx); err != nil {
			return err
		}
		return call.Result("21:00")
	})

	svc := llm.NewService(model, llm.ServiceOptions{})
	if err := svc.Register(weather, clock); err != nil {
		t.Fatal(err)
	}
	conv := llm.NewContext(llm.SystemMessage("You are a helpful assistant."))
	conv.SetTools(llm.Tools(weather, clock))
	pair := llm.NewPair(conv, llm.PairOptions{})

	h := newHarness(t, pipeline.TaskOptions{}, pair.User(), svc, pair.Assistant())
	h.send(&frames.UserStartedSpeaking{})
	h.send(&frames.Transcription{Text: question})
	h.send(&frames.UserStoppedSpeaking{})

	deadline := time.Now().Add(10 * time.Second)
	for conv.Len() < 7 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	h.sync()

	toolCallMsg := func(id, name, args string) frames.LLMMessage {
		return frames.LLMMessage{Role: "assistant", ToolCalls: []frames.LLMToolCall{{ID: id, Name: name, Arguments: args}}}
	}
	want := []frames.LLMMessage{
		llm.SystemMessage("You are a helpful assistant."),
		llm.UserMessage(question),
		toolCallMsg("call_w", "get_weather", `{"city":"Paris"}`),
		{Role: "tool", ToolCallID: "call_w", Content: `{"sky":"sunny","temp_c":21}`},
		toolCallMsg("call_t", "get_time", `{"tz":"Asia/Tokyo"}`),
		{Role: "tool", ToolCallID: "call_t", Content: "21:00"},
		llm.AssistantMessage(answer),
	}
	got := conv.Messages()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("context (-want +got):\n%s", d)
	}

	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d inferences, want 2 (one re-run)", len(reqs))
	}
	if d := cmp.Diff(want[:6], reqs[1].Messages); d != "" {
		t.Errorf("the re-run saw (-want +got):\n%s", d)
	}
	if len(reqs[0].Tools) != 2 || !json.Valid(reqs[0].Tools[0].Parameters) {
		t.Errorf("tools offered: %+v", reqs[0].Tools)
	}
	if got := collectText(h.Down()); got != answer {
		t.Errorf("text out = %q", got)
	}
	if n := pair.Assistant().FunctionCallsInProgress(); n != 0 {
		t.Errorf("%d calls still in progress", n)
	}
}
