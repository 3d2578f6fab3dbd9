package rtvi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// The whole path with the real LLM service: the model calls a client
// function, the client is told its name and arguments, answers twice, and
// the model's next request carries the first answer, once.
func TestClientFunctionCallThroughTheLLMService(t *testing.T) {
	model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		switch n {
		case 0:
			return []llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "call_1", Name: "get_location", Arguments: `{"precise":true}`})}
		case 1:
			return []llm.Event{llm.TextEvent("You are in Lyon.")}
		}
		return nil
	}}
	svc := llm.NewService(model, llm.ServiceOptions{})
	if err := svc.Register(llm.ClientFunction("get_location", "Where the user is.", nil)); err != nil {
		t.Fatal(err)
	}
	pair := llm.NewPair(nil, llm.PairOptions{})
	p := NewProcessor(Options{})
	res := pipelinetest.Start(t, pipeline.New(p, pair.User(), svc, pair.Assistant()), pipelinetest.Options{NoEnd: true})
	defer func() {
		res.Task.EndWhenDone()
		res.Wait()
	}()
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; sent %v", what, sent(t, res.Down()))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	res.Task.QueueFrame(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("where am I?")}, RunLLM: true})
	waitUntil("the in-progress message", func() bool { return len(ofType(sent(t, res.Down()), wire.TypeLLMFunctionCallInProgress)) == 1 })
	got := ofType(sent(t, res.Down()), wire.TypeLLMFunctionCallInProgress)[0]
	want := msgData(wire.TypeLLMFunctionCallInProgress, obj{"tool_call_id": "call_1", "function_name": "get_location", "arguments": obj{"precise": true}})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("in-progress (-want +got):\n%s", d)
	}

	res.Task.QueueFrame(inbound(resultMsg("r1", "call_1", `{"city":"Lyon"}`)))
	res.Task.QueueFrame(inbound(resultMsg("r2", "call_1", `{"city":"Paris"}`)))
	waitUntil("the answer", func() bool { return len(model.Requests()) == 2 && pair.Context().Len() == 4 })

	call := frames.LLMMessage{Role: "assistant", ToolCalls: []frames.LLMToolCall{{ID: "call_1", Name: "get_location", Arguments: `{"precise":true}`}}}
	wantMsgs := []frames.LLMMessage{llm.UserMessage("where am I?"), call, {Role: "tool", ToolCallID: "call_1", Content: `{"city":"Lyon"}`}}
	if d := cmp.Diff(wantMsgs, model.Requests()[1].Messages); d != "" {
		t.Errorf("the model's next request (-want +got):\n%s", d)
	}
	stopped := ofType(sent(t, res.Down()), wire.TypeLLMFunctionCallStopped)
	if len(stopped) != 1 {
		t.Errorf("%d stopped messages, want 1: %v", len(stopped), stopped)
	}
	var n int
	for _, f := range res.Down() {
		if r, ok := f.(*frames.FunctionCallResult); ok && r.ToolCallID == "call_1" {
			n++
			if b, _ := json.Marshal(r.Result); string(b) != `{"city":"Lyon"}` {
				t.Errorf("result %s", b)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d results left the pipeline, want 1", n)
	}
}
