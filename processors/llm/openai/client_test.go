package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/internal/openaiapi/openaiapitest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/upstream"
)

// replay serves a recorded answer: an SSE body with status 200, or an
// error body with its status.
type replay struct {
	status int
	body   []byte
	ctype  string
	header map[string]string
}

func sse(t testing.TB, name string) replay {
	return replay{status: 200, body: openaiapitest.Fixture(t, name), ctype: "text/event-stream"}
}

// answer is the same reply for an llmhttptest server.
func (r replay) answer() llmhttptest.Answer {
	return llmhttptest.Answer{Status: r.status, Body: r.body, ContentType: r.ctype}
}

func errorReply(t testing.TB, status int, name string) replay {
	ct := "application/json"
	if strings.HasSuffix(name, ".html") {
		ct = "text/html"
	}
	return replay{status: status, body: openaiapitest.Fixture(t, name), ctype: ct}
}

// server answers successive requests with replies (the last one repeats)
// and records the request bodies.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func newServer(t *testing.T, replies ...replay) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "wrong endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		rep := replies[min(n, len(replies)-1)]
		w.Header().Set("Content-Type", rep.ctype)
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write(rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func (s *server) client(o openai.Options) *openai.Client {
	o.BaseURL = s.URL + "/v1"
	if o.APIKey == "" {
		o.APIKey = "sk-test"
	}
	if o.Model == "" {
		o.Model = "gpt-4o-mini"
	}
	o.HTTPClient = s.Client()
	if o.RetryBackoff == 0 {
		o.RetryBackoff = time.Millisecond
	}
	return openai.New(o)
}

// collect runs one stream to its end.
func collect(t *testing.T, p llm.Provider, req *frames.LLMContext) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	for ev, err := range p.Stream(context.Background(), req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func question() *frames.LLMContext {
	return llm.NewContext(llm.UserMessage("hi")).Snapshot()
}

func text(evs []llm.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == llm.EventText {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func calls(evs []llm.Event) []frames.LLMToolCall {
	var out []frames.LLMToolCall
	for _, e := range evs {
		if e.Kind == llm.EventToolCall {
			out = append(out, e.ToolCall)
		}
	}
	return out
}

func usage(evs []llm.Event) []frames.LLMTokenUsage {
	var out []frames.LLMTokenUsage
	for _, e := range evs {
		if e.Kind == llm.EventUsage {
			out = append(out, e.Usage)
		}
	}
	return out
}

func TestFixtures(t *testing.T) {
	usage121 := frames.LLMTokenUsage{PromptTokens: 112, CompletionTokens: 9, TotalTokens: 121, CacheReadTokens: 64}
	cases := []struct {
		fixture   string
		text      string
		calls     []frames.LLMToolCall
		usage     []frames.LLMTokenUsage
		textParts int
	}{
		{fixture: "text.sse", text: "Hello! How can I help you today?", textParts: 9},
		{fixture: "usage.sse", text: "It's 21°C in \"Paris\".\nEnjoy 😀", usage: []frames.LLMTokenUsage{usage121}, textParts: 8},
		{fixture: "tool_call.sse", calls: []frames.LLMToolCall{
			{ID: "call_Qm1vW3xYz8aB2cD4eF6gH7jK", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
		}, usage: []frames.LLMTokenUsage{{PromptTokens: 112, CompletionTokens: 18, TotalTokens: 130, CacheReadTokens: 64}}},
		{fixture: "parallel_interleaved.sse", calls: []frames.LLMToolCall{
			{ID: "call_A1b2C3d4E5f6G7h8I9j0K1l2", Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{ID: "call_M3n4O5p6Q7r8S9t0U1v2W3x4", Name: "get_weather", Arguments: `{"city": "Tokyo"}`},
			{ID: "call_Y5z6A7b8C9d0E1f2G3h4I5j6", Name: "get_time", Arguments: `{"tz": "Asia/Tokyo"}`},
		}, usage: []frames.LLMTokenUsage{usage121}},
		{fixture: "multi_per_delta.sse", text: "Let me check.", textParts: 1, calls: []frames.LLMToolCall{
			{ID: "call_one", Name: "lookup_order", Arguments: `{"order_id": "A-1001"}`},
			{ID: "call_two", Name: "lookup_order", Arguments: `{"order_id": "A-1002"}`},
		}},
		{fixture: "truncated_args.sse", calls: []frames.LLMToolCall{
			{ID: "call_trunc01", Name: "get_weather", Arguments: `{"city": "San Fr`},
		}, usage: []frames.LLMTokenUsage{{PromptTokens: 112, CompletionTokens: 6, TotalTokens: 118, CacheReadTokens: 64}}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			srv := newServer(t, sse(t, tc.fixture))
			evs, err := collect(t, srv.client(openai.Options{}), question())
			if err != nil {
				t.Fatal(err)
			}
			if got := text(evs); got != tc.text {
				t.Errorf("text = %q, want %q", got, tc.text)
			}
			parts := 0
			for _, e := range evs {
				if e.Kind == llm.EventText {
					parts++
				}
			}
			if parts != tc.textParts {
				t.Errorf("%d text events, want %d (one per non-empty delta)", parts, tc.textParts)
			}
			if d := cmp.Diff(tc.calls, calls(evs)); d != "" {
				t.Errorf("calls (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.usage, usage(evs)); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
		})
	}
}

func TestErrorBodiesBecomeClearErrors(t *testing.T) {
	cases := []struct {
		status   int
		fixture  string
		want     string
		category frames.ErrorCategory
		attempts int
	}{
		{400, "error_400.json", "openai: HTTP 400 Bad Request: Invalid 'messages[3].tool_calls[0].function.arguments': expected a string, but got an object instead. (type invalid_request_error, code invalid_type, param messages[3].tool_calls[0].function.arguments)", frames.ErrorUnknown, 1},
		{401, "error_401.json", "openai: HTTP 401 Unauthorized: Incorrect API key provided", frames.ErrorUnknown, 1},
		{429, "error_429.json", "openai: HTTP 429 Too Many Requests: Rate limit reached for gpt-4o-mini", frames.ErrorTransient, 3},
		{500, "error_500.json", "openai: HTTP 500 Internal Server Error: The server had an error while processing your request. Sorry about that! (type server_error)", frames.ErrorTransient, 3},
		{502, "error_502.html", "openai: HTTP 502 Bad Gateway: <html>", frames.ErrorTransient, 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := newServer(t, errorReply(t, tc.status, tc.fixture))
			_, err := collect(t, srv.client(openai.Options{}), question())
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %q\nwant prefix %q", err, tc.want)
			}
			if apiErr.StatusCode != tc.status || apiErr.Category() != tc.category {
				t.Errorf("status %d category %v", apiErr.StatusCode, apiErr.Category())
			}
			if n := srv.requests(); n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
		})
	}
}

func TestRetriesBeforeTheFirstToken(t *testing.T) {
	srv := newServer(t,
		replay{status: 429, body: openaiapitest.Fixture(t, "error_429.json"), ctype: "application/json", header: map[string]string{"Retry-After": "0.001"}},
		errorReply(t, 500, "error_500.json"),
		sse(t, "text.sse"))
	evs, err := collect(t, srv.client(openai.Options{}), question())
	if err != nil {
		t.Fatal(err)
	}
	if text(evs) != "Hello! How can I help you today?" || srv.requests() != 3 {
		t.Errorf("text %q after %d requests", text(evs), srv.requests())
	}
	// Every attempt sent the same request.
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if string(srv.bodies[0]) != string(srv.bodies[2]) {
		t.Error("the retried request differs")
	}
}

func TestNoRetriesWhenDisabled(t *testing.T) {
	srv := newServer(t, errorReply(t, 503, "error_500.json"))
	_, err := collect(t, srv.client(openai.Options{HTTP: upstream.HTTP{MaxRetries: -1}}), question())
	if err == nil || srv.requests() != 1 {
		t.Errorf("err %v after %d requests", err, srv.requests())
	}
}

func TestStreamProblemsAreClearErrors(t *testing.T) {
	cases := []struct {
		name string
		rep  replay
		opts openai.Options
		want string
	}{
		{"cut off", replay{200, []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"), "text/event-stream", nil}, openai.Options{}, "the stream ended before the answer was complete"},
		{"not a stream", replay{200, []byte(`{"id":"x","choices":[{"message":{"content":"hi"}}]}`), "application/json", nil}, openai.Options{}, `the server answered "application/json" instead of an event stream`},
		{"error in stream", replay{200, []byte("data: {\"error\":{\"message\":\"context length exceeded\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}\n\n"), "text/event-stream", nil}, openai.Options{}, "openai: error in stream: context length exceeded (type invalid_request_error, code context_length_exceeded)"},
		{"bad JSON", replay{200, []byte("data: {\"choices\":[{\"delta\":{\"content\":\"a}]}\n\n"), "text/event-stream", nil}, openai.Options{}, "invalid stream event JSON"},
		{"line too long", replay{200, []byte("data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", 300) + "\"}}]}\n\n"), "text/event-stream", nil}, openai.Options{MaxLineBytes: 128}, "SSE line too long: more than 128 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.rep)
			_, err := collect(t, srv.client(tc.opts), question())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRequestShape(t *testing.T) {
	srv := newServer(t, sse(t, "text.sse"))
	temp := 0.2
	c := srv.client(openai.Options{
		Model:             "llama3.1",
		APIKey:            "sk-secret",
		Header:            http.Header{"Openai-Project": {"proj_1"}},
		Temperature:       &temp,
		MaxTokens:         256,
		SystemInstruction: "Be brief.",
		DeveloperRole:     "system",
		Extra:             map[string]any{"seed": 7},
	})
	conv := llm.NewContext(
		llm.DeveloperMessage("<ui_state>…</ui_state>"),
		frames.LLMMessage{Role: "user", Parts: []frames.LLMContentPart{
			{Type: "text", Text: "What is this?"},
			{Type: "image_url", ImageURL: "data:image/png;base64,AAAA", Detail: "low"},
		}},
		frames.LLMMessage{Role: "assistant", ToolCalls: []frames.LLMToolCall{{ID: "c1", Name: "look", Arguments: ""}}},
		frames.LLMMessage{Role: "tool", ToolCallID: "c1", Content: "a cat"},
		frames.LLMMessage{Raw: json.RawMessage(`{"role":"user","content":"raw escape hatch"}`)},
	)
	conv.SetTools([]frames.LLMTool{
		{Name: "look", Description: "Look at the screen."},
		{Raw: json.RawMessage(`{"type":"function","function":{"name":"native","parameters":{"type":"object"},"strict":true}}`)},
	})
	conv.SetToolChoice(frames.LLMToolChoice{Function: "look"})
	if _, err := collect(t, c, conv.Snapshot()); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(srv.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":          "llama3.1",
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"temperature":    0.2,
		"max_tokens":     256.0,
		"seed":           7.0,
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "system", "content": "<ui_state>…</ui_state>"},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What is this?"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA", "detail": "low"}},
			}},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "look", "arguments": "{}"}},
			}},
			map[string]any{"role": "tool", "content": "a cat", "tool_call_id": "c1"},
			map[string]any{"role": "user", "content": "raw escape hatch"},
		},
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{"name": "look", "description": "Look at the screen.", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}},
			map[string]any{"type": "function", "function": map[string]any{"name": "native", "parameters": map[string]any{"type": "object"}, "strict": true}},
		},
		"tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "look"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
	hdr := srv.headers[0]
	if hdr.Get("Authorization") != "Bearer sk-secret" || hdr.Get("Openai-Project") != "proj_1" || hdr.Get("Accept") != "text/event-stream" {
		t.Errorf("headers = %v", hdr)
	}
}

func TestNoToolChoiceWithoutTools(t *testing.T) {
	srv := newServer(t, sse(t, "text.sse"))
	conv := llm.NewContext(llm.UserMessage("hi"))
	conv.SetToolChoice(frames.LLMToolChoice{Mode: "required"})
	if _, err := collect(t, srv.client(openai.Options{}), conv.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(srv.bodies[0]), "tool_choice") || strings.Contains(string(srv.bodies[0]), `"tools"`) {
		t.Errorf("body = %s", srv.bodies[0])
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	srv := newServer(t, sse(t, "text.sse"))
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1/")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_MODEL", "env-model")
	c := openai.New(openai.Options{HTTP: upstream.HTTP{HTTPClient: srv.Client()}})
	if c.Model() != "env-model" {
		t.Errorf("model = %q", c.Model())
	}
	if _, err := collect(t, c, question()); err != nil {
		t.Fatal(err)
	}
	if got := srv.headers[0].Get("Authorization"); got != "Bearer sk-from-env" {
		t.Errorf("Authorization = %q", got)
	}
	if !strings.Contains(string(srv.bodies[0]), `"model":"env-model"`) {
		t.Errorf("body = %s", srv.bodies[0])
	}

	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_MODEL", "")
	if m := openai.New(openai.Options{}).Model(); m != openai.DefaultModel {
		t.Errorf("default model = %q", m)
	}
}

func TestStoppingEarlyClosesTheRequest(t *testing.T) {
	closed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"one\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(closed)
	}))
	defer srv.Close()
	c := openai.New(openai.Options{BaseURL: srv.URL, HTTP: upstream.HTTP{HTTPClient: srv.Client()}})
	for ev, err := range c.Stream(context.Background(), question()) {
		if err != nil || ev.Text != "one" {
			t.Fatalf("ev %+v err %v", ev, err)
		}
		break
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the request end")
	}
}

func TestEncodingDetails(t *testing.T) {
	srv := newServer(t, sse(t, "text.sse"))
	conv := llm.NewContext(frames.LLMMessage{Role: "user", Name: "ana", Parts: []frames.LLMContentPart{
		{Type: "input_audio", AudioData: "UklGRg==", AudioFormat: "wav"},
	}})
	conv.SetTools([]frames.LLMTool{{Name: "t"}})
	conv.SetToolChoice(frames.LLMToolChoice{Mode: "required"})
	if _, err := collect(t, srv.client(openai.Options{}), conv.Snapshot()); err != nil {
		t.Fatal(err)
	}
	body := string(srv.bodies[0])
	for _, want := range []string{
		`"tool_choice":"required"`,
		`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}],"name":"ana"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}
}

func TestUnencodableRequestsFailClearly(t *testing.T) {
	srv := newServer(t, sse(t, "text.sse"))
	cases := map[string]*frames.LLMContext{
		"unknown part":   {Messages: []frames.LLMMessage{{Role: "user", Parts: []frames.LLMContentPart{{Type: "video"}}}}},
		"bad raw":        {Messages: []frames.LLMMessage{{Raw: json.RawMessage(`{"role":`)}}},
		"bad parameters": {Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Name: "t", Parameters: json.RawMessage(`{`)}}},
	}
	for name, req := range cases {
		if _, err := collect(t, srv.client(openai.Options{}), req); err == nil || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := srv.requests(); n != 0 {
		t.Errorf("%d requests sent for unencodable contexts", n)
	}
}

func TestRetryAfterDateIsHonoured(t *testing.T) {
	srv := newServer(t,
		replay{status: 503, body: []byte("overloaded"), ctype: "text/plain", header: map[string]string{"Retry-After": time.Now().Add(-time.Second).UTC().Format(http.TimeFormat)}},
		sse(t, "text.sse"))
	if _, err := collect(t, srv.client(openai.Options{}), question()); err != nil || srv.requests() != 2 {
		t.Errorf("err %v after %d requests", err, srv.requests())
	}
}

func TestErrorInStreamWithNumericCode(t *testing.T) {
	srv := newServer(t, replay{200, []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"error\":{\"message\":\"upstream timeout\",\"code\":504}}\n\n"), "text/event-stream", nil})
	evs, err := collect(t, srv.client(openai.Options{}), question())
	if text(evs) != "Hi" || err == nil || err.Error() != "openai: error in stream: upstream timeout (code 504)" {
		t.Errorf("text %q err %v", text(evs), err)
	}
}

// newClient makes a client for the shared timeout checks.
func newClient(baseURL string, hc *http.Client, to llmhttp.Timeouts) llm.Provider {
	return openai.New(openai.Options{BaseURL: baseURL, APIKey: "k", HTTP: upstream.HTTP{HTTPClient: hc, Timeouts: to, RetryBackoff: time.Millisecond}})
}

// cutStream is an answer that stops before its end: two text chunks.
const cutStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Once\"}}]}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" upon\"}}]}\n\n"

// A server that accepts the connection and never completes the TLS
// handshake trips the connect bound, and the connection is closed.
func TestConnectTimeout(t *testing.T) { llmhttptest.CheckConnectTimeout(t, "openai", newClient) }

// A server that accepts the request and never answers, or answers the
// headers and then nothing, trips the first-byte bound ("openai: no first
// byte within 100ms"); the request is closed and not retried.
func TestFirstByteTimeout(t *testing.T) { llmhttptest.CheckFirstByteTimeout(t, "openai", newClient) }

// A stream that stalls mid-answer trips the idle bound after the text
// that came; the request is closed.
func TestIdleTimeout(t *testing.T) {
	llmhttptest.CheckIdleTimeout(t, "openai", newClient, []byte(cutStream), "Once upon")
}

// A consumer that takes longer than the idle bound between two events is
// not a stalled server: only the time spent waiting on the server counts.
func TestSlowConsumerIsNotAnIdleServer(t *testing.T) {
	a := sse(t, "text.sse").answer()
	a.Gap = 20 * time.Millisecond // events come one by one
	srv := llmhttptest.New(t, a)
	c := newClient(srv.URL+"/v1", srv.Client(), llmhttptest.ShortTimeouts)
	var got strings.Builder
	for ev, err := range c.Stream(t.Context(), question()) {
		if err != nil {
			t.Fatalf("after %q: %v", got.String(), err)
		}
		got.WriteString(ev.Text)
		time.Sleep(150 * time.Millisecond)
	}
	if got.Len() == 0 {
		t.Error("no text")
	}
}

// A negative bound turns that bound off.
func TestNegativeTimeoutIsOff(t *testing.T) {
	llmhttptest.CheckNegativeTimeoutIsOff(t, newClient, []byte(cutStream))
}
