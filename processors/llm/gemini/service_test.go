package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/gemini"
	"github.com/framewire/framewire/processors/llm/openai"
)

// openAIStream writes the OpenAI Chat Completions stream that says the same
// as a Gemini fixture: these text pieces, these calls, this usage.
func openAIStream(pieces []string, calls []frames.LLMToolCall, u frames.LLMTokenUsage) []byte {
	var b strings.Builder
	chunk := func(v any) {
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	type m = map[string]any
	for _, p := range pieces {
		chunk(m{"choices": []m{{"index": 0, "delta": m{"content": p}, "finish_reason": nil}}})
	}
	for i, c := range calls {
		chunk(m{"choices": []m{{"index": 0, "delta": m{"tool_calls": []m{{"index": i, "id": c.ID, "type": "function", "function": m{"name": c.Name, "arguments": c.Arguments}}}}}}})
	}
	reason := "stop"
	if len(calls) > 0 {
		reason = "tool_calls"
	}
	chunk(m{"choices": []m{{"index": 0, "delta": m{}, "finish_reason": reason}}})
	chunk(m{"choices": []m{}, "usage": m{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}})
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// runService runs one inference of question through an llm.Service over p
// with two functions registered, and returns every frame it pushed
// downstream and upstream.
func runService(t *testing.T, p llm.Provider, wantResults int) (down, up []frames.Frame) {
	t.Helper()
	svc := llm.NewService(p, llm.ServiceOptions{Name: "llm", Sequential: true})
	err := svc.Register(
		llm.NewFunction("get_weather", "", func(_ context.Context, call llm.FunctionCallParams, a struct {
			City string `json:"city"`
		}) error {
			return call.Result("sunny in " + a.City)
		}),
		llm.NewFunction("get_time", "", func(_ context.Context, call llm.FunctionCallParams, _ struct{}) error {
			return call.Result("noon")
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	res := pipelinetest.Start(t, svc, pipelinetest.Options{
		Send:  []frames.Frame{question()},
		NoEnd: true,
		Task:  pipeline.TaskOptions{EnableUsageMetrics: true},
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := res.Down()
		if len(pipelinetest.OfType[*frames.LLMFullResponseEnd](d)) == 1 && len(pipelinetest.OfType[*frames.FunctionCallResult](d)) == wantResults {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out; down %v", d)
		}
		time.Sleep(2 * time.Millisecond)
	}
	res.Task.EndWhenDone()
	res.Wait()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	return res.Down(), res.Up()
}

// sameFrames compares frames by content, leaving out what differs between
// any two runs: the random group ids of function calls and the measured
// durations.
var sameFrames = cmp.Options{
	pipelinetest.CmpOptions(),
	cmpopts.IgnoreFields(frames.FunctionCallsStarted{}, "GroupID"),
	cmpopts.IgnoreFields(frames.FunctionCallInProgress{}, "GroupID"),
	cmpopts.IgnoreFields(frames.FunctionCallResult{}, "GroupID"),
	cmpopts.IgnoreFields(frames.Metric{}, "Value"),
}

// byType groups frames by type, each group in order. The relative order of
// frames of different lanes (a broadcast FunctionCallsStarted and the
// response's end) is the pipeline's, not the provider's, and varies.
func byType(fs []frames.Frame) map[string][]frames.Frame {
	out := map[string][]frames.Frame{}
	for _, f := range fs {
		k := fmt.Sprintf("%T", f)
		out[k] = append(out[k], f)
	}
	return out
}

// Through llm.Service, the Gemini client produces exactly the frames the
// OpenAI client produces for the same answer: the same text frames, the
// same function-call frames and results, the same usage metric.
func TestSameFramesAsTheOpenAIClient(t *testing.T) {
	cases := []struct {
		fixture string
		pieces  []string
		calls   []frames.LLMToolCall
		usage   frames.LLMTokenUsage
	}{
		{"text.sse", []string{"Hello", "! How can I help", " you today?"}, nil,
			frames.LLMTokenUsage{PromptTokens: 5, CompletionTokens: 9, TotalTokens: 14}},
		{"calls_with_ids.sse", nil, []frames.LLMToolCall{
			{ID: "ka5kd2yq", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "p0v3n8xw", Name: "get_time", Arguments: `{}`},
		}, frames.LLMTokenUsage{PromptTokens: 70, CompletionTokens: 20, TotalTokens: 90}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			body := openAIStream(tc.pieces, tc.calls, tc.usage)
			oa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(body)
			}))
			defer oa.Close()
			wantDown, wantUp := runService(t, openai.New(openai.Options{BaseURL: oa.URL, APIKey: "k", Model: "same-model", HTTPClient: oa.Client()}), len(tc.calls))

			srv := llmhttptest.New(t, sse(t, tc.fixture))
			gotDown, gotUp := runService(t, client(srv, gemini.Options{Model: "same-model"}), len(tc.calls))

			if d := cmp.Diff(byType(wantDown), byType(gotDown), sameFrames); d != "" {
				t.Errorf("downstream frames (-openai +gemini):\n%s", d)
			}
			if d := cmp.Diff(byType(wantUp), byType(gotUp), sameFrames); d != "" {
				t.Errorf("upstream frames (-openai +gemini):\n%s", d)
			}
			if len(pipelinetest.OfType[*frames.LLMText](gotDown)) != len(tc.pieces) {
				t.Errorf("%d text frames, want %d", len(pipelinetest.OfType[*frames.LLMText](gotDown)), len(tc.pieces))
			}
		})
	}
}

// An interruption mid-stream through the service closes the request at
// the server and reports no error.
func TestInterruptionThroughTheService(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.Fixture(t, "cut.sse"), Stall: true})
	svc := llm.NewService(client(srv, gemini.Options{}), llm.ServiceOptions{})
	res := pipelinetest.Start(t, svc, pipelinetest.Options{Send: []frames.Frame{question()}, NoEnd: true})
	deadline := time.Now().Add(10 * time.Second)
	for len(pipelinetest.OfType[*frames.LLMText](res.Down())) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no text streamed")
		}
		time.Sleep(2 * time.Millisecond)
	}
	interrupted := time.Now()
	res.Task.QueueFrame(&frames.Interruption{})
	select {
	case <-srv.Closed:
		t.Logf("interruption to request closed at the server: %v", time.Since(interrupted))
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the request closed")
	}
	res.Task.EndWhenDone()
	res.Wait()
	if errs := pipelinetest.OfType[*frames.Error](res.Up()); len(errs) != 0 {
		t.Errorf("interruption reported errors: %v", errs)
	}
	down := res.Down()
	if s, e := len(pipelinetest.OfType[*frames.LLMFullResponseStart](down)), len(pipelinetest.OfType[*frames.LLMFullResponseEnd](down)); s != 1 || e != 1 {
		t.Errorf("%d starts and %d ends", s, e)
	}
}
