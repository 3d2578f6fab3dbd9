package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
)

// clientAnswer is what the RTVI processor pushes for a client's
// llm-function-call-result.
func clientAnswer(name, id, result string) *frames.FunctionCallResult {
	return &frames.FunctionCallResult{
		FunctionCall: frames.FunctionCall{Name: name, ToolCallID: id, Arguments: json.RawMessage(`{}`)},
		Result:       json.RawMessage(result),
	}
}

func locationFunction() llm.Function {
	return llm.ClientFunction("get_location", "Where the user is.", nil)
}

// resultsFor returns the results for id that left the bottom of the
// pipeline.
func resultsFor(fs []frames.Frame, id string) []*frames.FunctionCallResult {
	var out []*frames.FunctionCallResult
	for _, r := range pipelinetest.OfType[*frames.FunctionCallResult](fs) {
		if r.ToolCallID == id {
			out = append(out, r)
		}
	}
	return out
}

func clientService(t *testing.T, model llm.Provider, o llm.ServiceOptions, fns ...llm.Function) (*llm.Service, *harness) {
	t.Helper()
	svc := llm.NewService(model, o)
	if err := svc.Register(fns...); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("where am I?"))
	h.waitFor("in progress", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallInProgress](down) == 1 })
	return svc, h
}

// The client's result settles the call: the service pushes the call's
// own result (its group, the model's arguments) and takes the client's
// frame in; a second answer for the same call is dropped.
func TestClientFunctionSettlesOnceWithTheClientsResult(t *testing.T) {
	_, h := clientService(t, oneCall("c1", "get_location", `{"precise":true}`), llm.ServiceOptions{}, locationFunction())
	h.send(clientAnswer("get_location", "c1", `{"city":"Lyon"}`))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return len(resultsFor(down, "c1")) > 0 })
	h.send(clientAnswer("get_location", "c1", `{"city":"Paris"}`))
	h.sync()

	got := resultsFor(h.Down(), "c1")
	if len(got) != 1 {
		t.Fatalf("%d results for c1 left the service, want 1: %v", len(got), names(h.Down()))
	}
	r := got[0]
	started := pipelinetest.OfType[*frames.FunctionCallsStarted](h.Down())[0]
	if r.GroupID != started.GroupID || string(r.Arguments) != `{"precise":true}` {
		t.Errorf("result = %+v, want the call's group %q and the model's arguments", r, started.GroupID)
	}
	if b, _ := json.Marshal(r.Result); string(b) != `{"city":"Lyon"}` {
		t.Errorf("result value = %s, want the first answer", b)
	}
	if n := len(resultsFor(h.Up(), "c1")); n != 1 {
		t.Errorf("%d results upstream, want the broadcast copy", n)
	}
}

// A client that does not answer in time: the model is told, and the late
// answer is dropped.
func TestClientFunctionTimeoutSettlesAndDropsTheLateResult(t *testing.T) {
	fn := locationFunction()
	fn.Timeout = 20 * time.Millisecond
	_, h := clientService(t, oneCall("c1", "get_location", `{}`), llm.ServiceOptions{}, fn)
	h.waitFor("timeout", func(down, _ []frames.Frame) bool { return len(resultsFor(down, "c1")) > 0 })
	h.send(clientAnswer("get_location", "c1", `{"city":"Lyon"}`))

	got := resultsFor(h.Down(), "c1")
	if len(got) != 1 {
		t.Fatalf("%d results for c1, want 1: %v", len(got), names(h.Down()))
	}
	if e := errorText(got[0].Result); !strings.Contains(e, "did not answer within 20ms") {
		t.Errorf("result = %v, want the timeout's error", got[0].Result)
	}
}

// An interruption cancels the call; the client's answer after it is
// dropped. KeepOnInterruption keeps waiting.
func TestInterruptionCancelsAClientCallAndDropsTheLateResult(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		_, h := clientService(t, oneCall("c1", "get_location", `{}`), llm.ServiceOptions{}, locationFunction())
		h.send(&frames.Interruption{})
		h.waitFor("cancel", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallCancel](down) == 1 })
		h.send(clientAnswer("get_location", "c1", `{"city":"Lyon"}`))
		if got := resultsFor(h.Down(), "c1"); len(got) != 0 {
			t.Errorf("%d results after the cancel: %v", len(got), names(h.Down()))
		}
	})
	t.Run("kept", func(t *testing.T) {
		fn := locationFunction()
		fn.KeepOnInterruption = true
		_, h := clientService(t, oneCall("c1", "get_location", `{}`), llm.ServiceOptions{}, fn)
		h.send(&frames.Interruption{})
		h.send(clientAnswer("get_location", "c1", `{"city":"Lyon"}`))
		h.waitFor("result", func(down, _ []frames.Frame) bool { return len(resultsFor(down, "c1")) == 1 })
		if n := count[*frames.FunctionCallCancel](h.Down()); n != 0 {
			t.Errorf("%d cancels for a call kept on interruption", n)
		}
	})
}

// Results the service has no part in pass on; one from outside for a call
// that a Go handler runs is dropped (the handler settles it).
func TestResultsForOtherCallsPassAndServerCallsAreNotAnsweredFromOutside(t *testing.T) {
	release := make(chan struct{})
	model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		if n == 0 {
			return []llm.Event{toolCall("s1", "server_side", `{}`)}
		}
		return nil
	}}
	_, h := clientService(t, model, llm.ServiceOptions{}, llm.Function{Name: "server_side", Handler: func(ctx context.Context, call llm.FunctionCallParams) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return call.Result("from the server")
	}})
	h.send(clientAnswer("server_side", "s1", `"from the client"`))
	h.send(clientAnswer("elsewhere", "x9", `"not ours"`))
	close(release)
	h.waitFor("result", func(down, _ []frames.Frame) bool { return len(resultsFor(down, "s1")) == 1 })
	h.sync()
	if r := resultsFor(h.Down(), "s1"); len(r) != 1 || r[0].Result != "from the server" {
		t.Errorf("results for s1 = %+v, want the handler's only", r)
	}
	if r := resultsFor(h.Down(), "x9"); len(r) != 1 {
		t.Errorf("a result for a call the service never made was not passed on: %v", names(h.Down()))
	}
}

func TestClientResultIsBounded(t *testing.T) {
	_, h := clientService(t, oneCall("c1", "get_location", `{}`), llm.ServiceOptions{MaxClientResultBytes: 16}, locationFunction())
	h.send(clientAnswer("get_location", "c1", `"`+strings.Repeat("x", 100)+`"`))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return len(resultsFor(down, "c1")) == 1 })
	if e := errorText(resultsFor(h.Down(), "c1")[0].Result); !strings.Contains(e, "too large (102 bytes, at most 16)") {
		t.Errorf("result = %q", e)
	}
}

func TestClientFunctionDeclaration(t *testing.T) {
	svc := llm.NewService(&llmtest.Provider{}, llm.ServiceOptions{})
	fn := llm.ClientFunction("get_location", "Where the user is.", llm.Schema[cityArgs]())
	if !fn.Client || fn.Handler != nil || fn.Tool().Name != "get_location" {
		t.Errorf("ClientFunction = %+v", fn)
	}
	if err := svc.Register(fn); err != nil {
		t.Fatal(err)
	}
	if !svc.IsClientFunction("get_location") || svc.IsClientFunction("other") {
		t.Error("IsClientFunction does not say which function the client runs")
	}
	withHandler := fn
	withHandler.Handler = func(context.Context, llm.FunctionCallParams) error { return nil }
	if err := svc.Register(withHandler); err == nil || !strings.Contains(err.Error(), "cannot have a handler") {
		t.Errorf("Register(client function with a handler) = %v", err)
	}
	if err := svc.RegisterFallback(fn); err == nil {
		t.Error("a client fallback was accepted")
	}
}

// Two calls in one response, one run by the client and one by a Go
// handler: each settles once, and the model's next request carries both
// results, once each; a duplicate client answer after that changes
// nothing and asks for no other inference.
func TestParallelClientAndServerCallsReachTheModelOnce(t *testing.T) {
	model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		switch n {
		case 0:
			return []llm.Event{toolCall("c1", "get_location", `{}`), toolCall("s1", "get_time", `{}`)}
		case 1:
			return textEvents("It is noon in Lyon.")
		}
		return nil
	}}
	svc := llm.NewService(model, llm.ServiceOptions{})
	if err := svc.Register(locationFunction(), llm.Function{Name: "get_time", Handler: func(_ context.Context, call llm.FunctionCallParams) error {
		return call.Result("12:00")
	}}); err != nil {
		t.Fatal(err)
	}
	pair := llm.NewPair(nil, llm.PairOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, pair.User(), svc, pair.Assistant())
	h.send(&frames.Transcription{Text: "where and when?"})
	h.waitFor("server result", func(down, _ []frames.Frame) bool { return len(resultsFor(down, "s1")) == 1 })
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("%d inferences before the client answered, want 1", n)
	}
	h.send(clientAnswer("get_location", "c1", `{"city":"Lyon"}`))
	h.waitFor("answer", func(down, _ []frames.Frame) bool { return collectText(down) == "It is noon in Lyon." })
	h.send(clientAnswer("get_location", "c1", `{"city":"Paris"}`))

	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d inferences, want 2", len(reqs))
	}
	call := func(id, name string) frames.LLMMessage {
		return frames.LLMMessage{Role: "assistant", ToolCalls: []frames.LLMToolCall{{ID: id, Name: name, Arguments: "{}"}}}
	}
	want := []frames.LLMMessage{
		llm.UserMessage("where and when?"),
		call("c1", "get_location"),
		{Role: "tool", ToolCallID: "c1", Content: `{"city":"Lyon"}`},
		call("s1", "get_time"),
		{Role: "tool", ToolCallID: "s1", Content: "12:00"},
	}
	if d := cmp.Diff(want, reqs[1].Messages); d != "" {
		t.Errorf("the model's next request (-want +got):\n%s", d)
	}
	if d := cmp.Diff(append(want, llm.AssistantMessage("It is noon in Lyon.")), pair.Context().Messages()); d != "" {
		t.Errorf("context after the duplicate answer (-want +got):\n%s", d)
	}
	if n := len(resultsFor(h.Down(), "c1")); n != 1 {
		t.Errorf("%d results for the client call, want 1", n)
	}
}
