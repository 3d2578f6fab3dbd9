package llmhttptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
)

// Question is the one-message conversation the client tests send.
func Question() *frames.LLMContext {
	return llm.NewContext(llm.UserMessage("hi")).Snapshot()
}

// Collect runs one stream of p to its end and returns its events and the
// error that ended it, if any.
func Collect(ctx context.Context, p llm.Provider, req *frames.LLMContext) ([]llm.Event, error) {
	var evs []llm.Event
	for ev, err := range p.Stream(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// Text returns the streamed text of evs and in how many pieces it came.
func Text(evs []llm.Event) (string, int) {
	var b strings.Builder
	n := 0
	for _, e := range evs {
		if e.Kind == llm.EventText {
			b.WriteString(e.Text)
			n++
		}
	}
	return b.String(), n
}

// Calls returns the tool calls of evs, in order.
func Calls(evs []llm.Event) []frames.LLMToolCall {
	var out []frames.LLMToolCall
	for _, e := range evs {
		if e.Kind == llm.EventToolCall {
			out = append(out, e.ToolCall)
		}
	}
	return out
}

// Usage returns the usage reports of evs, in order.
func Usage(evs []llm.Event) []frames.LLMTokenUsage {
	var out []frames.LLMTokenUsage
	for _, e := range evs {
		if e.Kind == llm.EventUsage {
			out = append(out, e.Usage)
		}
	}
	return out
}

// Category returns err's category, or frames.ErrorUnknown when it has none.
func Category(err error) frames.ErrorCategory {
	var c frames.Categorizer
	if errors.As(err, &c) {
		return c.Category()
	}
	return frames.ErrorUnknown
}

// OpenAIStream writes the OpenAI Chat Completions stream that says the same
// as another provider's fixture: these text pieces, these calls, this
// usage. Comparing a client with the OpenAI one over it checks that both
// produce the same frames.
func OpenAIStream(pieces []string, calls []frames.LLMToolCall, u frames.LLMTokenUsage) []byte {
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

// RunService runs one inference of [Question] through an llm.Service over
// p with two functions registered (get_weather and get_time), waits for
// the response's end and wantResults function results, and returns every
// frame the service pushed downstream and upstream.
func RunService(t *testing.T, p llm.Provider, wantResults int) (down, up []frames.Frame) {
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
		Send:  []frames.Frame{Question()},
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

// SameFrames compares frames by content, leaving out what differs between
// any two runs: the random group ids of function calls and the measured
// durations.
var SameFrames = cmp.Options{
	pipelinetest.CmpOptions(),
	cmpopts.IgnoreFields(frames.FunctionCallsStarted{}, "GroupID"),
	cmpopts.IgnoreFields(frames.FunctionCallInProgress{}, "GroupID"),
	cmpopts.IgnoreFields(frames.FunctionCallResult{}, "GroupID"),
	cmpopts.IgnoreFields(frames.Metric{}, "Value"),
}

// ByType groups frames by type, each group in order. The relative order of
// frames of different lanes (a broadcast FunctionCallsStarted and the
// response's end) is the pipeline's, not the provider's, and varies.
func ByType(fs []frames.Frame) map[string][]frames.Frame {
	out := map[string][]frames.Frame{}
	for _, f := range fs {
		k := fmt.Sprintf("%T", f)
		out[k] = append(out[k], f)
	}
	return out
}

// InterruptThroughService streams the answer srv gives (text, then a
// stall) through an llm.Service over p, interrupts it after the second
// text piece and checks that the request was closed at the server, that
// no error was reported, and that the response started and ended once.
func InterruptThroughService(t *testing.T, srv *Server, p llm.Provider) {
	t.Helper()
	svc := llm.NewService(p, llm.ServiceOptions{})
	res := pipelinetest.Start(t, svc, pipelinetest.Options{Send: []frames.Frame{Question()}, NoEnd: true})
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

// ShortTimeouts are the bounds the timeout checks give a client: 100ms
// each.
var ShortTimeouts = llmhttp.Timeouts{Connect: 100 * time.Millisecond, FirstByte: 100 * time.Millisecond, Idle: 100 * time.Millisecond}

// NewClient makes the client under test for a timeout check: a client of
// baseURL that sends through hc (nil: the client's default) with the
// bounds to.
type NewClient func(baseURL string, hc *http.Client, to llmhttp.Timeouts) llm.Provider

// WantTimeout fails t unless err is a transient *llmhttp.TimeoutError of
// phase whose text contains text.
func WantTimeout(t testing.TB, err error, phase llmhttp.Phase, text string) {
	t.Helper()
	var te *llmhttp.TimeoutError
	if !errors.As(err, &te) || te.Phase != phase {
		t.Fatalf("err = %v, want a %v timeout", err, phase)
	}
	if !strings.Contains(err.Error(), text) {
		t.Errorf("err = %q, want it to contain %q", err, text)
	}
	if Category(err) != frames.ErrorTransient {
		t.Errorf("category %v, want transient", Category(err))
	}
}

// WaitClosed fails t unless closed receives within five seconds: the
// server saw the client close the request or the connection.
func WaitClosed(t testing.TB, closed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatalf("the server never saw the %s closed", what)
	}
}

// CheckConnectTimeout checks that a client of a server that accepts the
// TCP connection and never completes the TLS handshake gives up after
// its connect bound, with "<provider>: timed out connecting after
// 100ms", and that its default HTTP client (newClient gets a nil one)
// closes the connection.
func CheckConnectTimeout(t *testing.T, provider string, newClient NewClient) {
	t.Helper()
	srv := NewSilent(t)
	_, err := Collect(t.Context(), newClient("https://"+srv.Addr, nil, ShortTimeouts), Question())
	WantTimeout(t, err, llmhttp.PhaseConnect, provider+": timed out connecting after 100ms")
	WaitClosed(t, srv.Closed, "connection")
}

// CheckFirstByteTimeout checks both ways a server can accept a request
// and not answer it (no headers at all; headers and then nothing): the
// client gives up after its first-byte bound with "<provider>: no first
// byte within 100ms", closes the request, and does not retry.
func CheckFirstByteTimeout(t *testing.T, provider string, newClient NewClient) {
	t.Helper()
	for _, a := range []struct {
		name string
		Answer
	}{{"no headers", Answer{Hang: true}}, {"headers then nothing", Answer{Stall: true}}} {
		t.Run(a.name, func(t *testing.T) {
			srv := New(t, a.Answer)
			_, err := Collect(t.Context(), newClient(srv.URL, srv.Client(), ShortTimeouts), Question())
			WantTimeout(t, err, llmhttp.PhaseFirstByte, provider+": no first byte within 100ms")
			WaitClosed(t, srv.Closed, "request")
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a timeout was retried", n)
			}
		})
	}
}

// CheckIdleTimeout checks that a stream that stalls after cut (a stream
// fixture cut short) ends after the idle bound with "<provider>: the
// stream stalled: nothing received for 100ms", having yielded wantText,
// and that the request is closed.
func CheckIdleTimeout(t *testing.T, provider string, newClient NewClient, cut []byte, wantText string) {
	t.Helper()
	srv := New(t, Answer{Body: cut, Stall: true})
	evs, err := Collect(t.Context(), newClient(srv.URL, srv.Client(), ShortTimeouts), Question())
	WantTimeout(t, err, llmhttp.PhaseIdle, provider+": the stream stalled: nothing received for 100ms")
	if got, _ := Text(evs); got != wantText {
		t.Errorf("text before the stall = %q, want %q", got, wantText)
	}
	WaitClosed(t, srv.Closed, "request")
}

// CheckNegativeTimeoutIsOff checks that a negative bound turns that bound
// off: with the first-byte bound off, a server that answers the headers
// and then nothing, and with the idle bound off, a stream that stalls
// after cut, end only at the caller's deadline; the request is closed.
func CheckNegativeTimeoutIsOff(t *testing.T, newClient NewClient, cut []byte) {
	t.Helper()
	for _, tc := range []struct {
		name string
		to   llmhttp.Timeouts
		a    Answer
	}{
		{"first byte", llmhttp.Timeouts{Connect: ShortTimeouts.Connect, FirstByte: -1, Idle: ShortTimeouts.Idle}, Answer{Stall: true}},
		{"idle", llmhttp.Timeouts{Connect: ShortTimeouts.Connect, FirstByte: ShortTimeouts.FirstByte, Idle: -1}, Answer{Body: cut, Stall: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(t, tc.a)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			_, err := Collect(ctx, newClient(srv.URL, srv.Client(), tc.to), Question())
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want only the caller's deadline (the bound is off)", err)
			}
			WaitClosed(t, srv.Closed, "request")
		})
	}
}
