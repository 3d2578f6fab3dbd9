package anthropic_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/anthropic"
	"github.com/framewire/framewire/processors/upstream"
)

func sse(t testing.TB, name string) llmhttptest.Answer {
	return llmhttptest.Answer{Body: llmhttptest.Fixture(t, name)}
}

func errorAnswer(t testing.TB, status int, name string) llmhttptest.Answer {
	a := llmhttptest.Answer{Status: status, Body: llmhttptest.Fixture(t, name), Header: http.Header{"Retry-After": {"0"}, "Request-Id": {"req_011CSHoEeqs5C35K2UUqR7Fy"}}}
	if strings.HasSuffix(name, ".html") {
		a.ContentType = "text/html"
	}
	return a
}

// client returns a client of srv with fast retries.
func client(srv *llmhttptest.Server, o anthropic.Options) *anthropic.Client {
	o.BaseURL = srv.URL
	if o.APIKey == "" {
		o.APIKey = "sk-ant-test"
	}
	if o.Model == "" {
		o.Model = "claude-sonnet-4-5"
	}
	o.HTTPClient = srv.Client()
	if o.RetryBackoff == 0 {
		o.RetryBackoff = time.Millisecond
	}
	return anthropic.New(o)
}

// Every recorded stream yields its text delta by delta, its tool calls
// assembled in block order after the text, and one usage event last.
func TestFixtures(t *testing.T) {
	cases := []struct {
		fixture   string
		text      string
		textParts int
		calls     []frames.LLMToolCall
		usage     frames.LLMTokenUsage
	}{
		{fixture: "text.sse", text: "Hello! How can I help you today?", textParts: 9,
			usage: frames.LLMTokenUsage{PromptTokens: 25, CompletionTokens: 12, TotalTokens: 37}},
		{fixture: "usage.sse", text: "It's 21°C in \"Paris\".\nEnjoy 😀", textParts: 3,
			usage: frames.LLMTokenUsage{PromptTokens: 1821, CompletionTokens: 14, TotalTokens: 1835, CacheReadTokens: 1800}},
		{fixture: "thinking.sse", text: "Hi there.", textParts: 1,
			usage: frames.LLMTokenUsage{PromptTokens: 40, CompletionTokens: 30, TotalTokens: 70}},
		{fixture: "tool_use.sse", text: "Let me check the weather.", textParts: 1, calls: []frames.LLMToolCall{
			{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: `{"city": "Paris", "unit": "celsius"}`},
		}, usage: frames.LLMTokenUsage{PromptTokens: 472, CompletionTokens: 89, TotalTokens: 561}},
		{fixture: "parallel_tool_use.sse", calls: []frames.LLMToolCall{
			{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{ID: "toolu_01B7vM3nK2pQ8rS4tU6wX9yZ", Name: "get_weather", Arguments: `{"city": "Tokyo"}`},
			{ID: "toolu_01C5dE7fG9hJ1kL3mN5pQ7rS", Name: "get_time", Arguments: `{}`},
		}, usage: frames.LLMTokenUsage{PromptTokens: 512, CompletionTokens: 151, TotalTokens: 663}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			srv := llmhttptest.New(t, sse(t, tc.fixture))
			evs, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), llmhttptest.Question())
			if err != nil {
				t.Fatal(err)
			}
			got, parts := llmhttptest.Text(evs)
			if got != tc.text || parts != tc.textParts {
				t.Errorf("text = %q in %d events, want %q in %d", got, parts, tc.text, tc.textParts)
			}
			if d := cmp.Diff(tc.calls, llmhttptest.Calls(evs)); d != "" {
				t.Errorf("calls (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]frames.LLMTokenUsage{tc.usage}, llmhttptest.Usage(evs)); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
			if last := evs[len(evs)-1]; last.Kind != llm.EventUsage {
				t.Errorf("last event is %v, want the usage", last.Kind)
			}
		})
	}
}

// The request goes to /v1/messages with Anthropic's headers.
func TestRequestHeaders(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	c := client(srv, anthropic.Options{APIKey: "sk-ant-secret", Header: http.Header{"anthropic-beta": {"prompt-caching-2024-07-31"}}})
	if _, err := llmhttptest.Collect(t.Context(), c, llmhttptest.Question()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	want := map[string]string{
		"X-Api-Key":         "sk-ant-secret",
		"Anthropic-Version": "2023-06-01",
		"Content-Type":      "application/json",
		"Accept":            "text/event-stream",
		"Anthropic-Beta":    "prompt-caching-2024-07-31",
		"Authorization":     "",
	}
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if r.Method != http.MethodPost || r.Path != "/v1/messages" {
		t.Errorf("%s %s, want POST /v1/messages", r.Method, r.Path)
	}
}

// Each error answer is an *APIError with its status, a category the
// pipeline can act on, and a short text without the raw body; only 429,
// 5xx and 529 are retried.
func TestErrorAnswers(t *testing.T) {
	cases := []struct {
		status   int
		fixture  string
		want     string
		category frames.ErrorCategory
		requests int
	}{
		{400, "error_400.json", "anthropic: HTTP 400 Bad Request: invalid_request_error: messages.1.content.0.tool_result: unexpected `tool_use_id`", frames.ErrorPermanent, 1},
		{401, "error_401.json", "anthropic: HTTP 401 Unauthorized: authentication_error: invalid x-api-key", frames.ErrorPermanent, 1},
		{403, "error_403.json", "anthropic: HTTP 403 Forbidden: permission_error: Your API key does not have permission", frames.ErrorPermanent, 1},
		{404, "error_404.json", "anthropic: HTTP 404 Not Found: not_found_error: model: claude-nonexistent-1", frames.ErrorPermanent, 1},
		{413, "error_413.json", "anthropic: HTTP 413 Request Entity Too Large: request_too_large: Request exceeds", frames.ErrorUnknown, 1},
		{429, "error_429.json", "anthropic: HTTP 429 Too Many Requests: rate_limit_error: This request would exceed the rate limit", frames.ErrorTransient, 3},
		{500, "error_500.json", "anthropic: HTTP 500 Internal Server Error: api_error: Internal server error", frames.ErrorTransient, 3},
		{502, "error_502.html", "anthropic: HTTP 502 Bad Gateway", frames.ErrorTransient, 3},
		{529, "error_529.json", "anthropic: HTTP 529 Overloaded: overloaded_error: Overloaded", frames.ErrorTransient, 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := llmhttptest.New(t, errorAnswer(t, tc.status, tc.fixture))
			_, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), llmhttptest.Question())
			var apiErr *anthropic.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %q\nwant prefix %q", err, tc.want)
			}
			for _, leak := range []string{"<html>", "request_id", `"type"`, "\n"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("err %q carries the raw body (%q)", err, leak)
				}
			}
			if apiErr.StatusCode != tc.status || apiErr.Category() != tc.category {
				t.Errorf("status %d category %v, want %d %v", apiErr.StatusCode, apiErr.Category(), tc.status, tc.category)
			}
			if apiErr.Body == "" || apiErr.RequestID != "req_011CSHoEeqs5C35K2UUqR7Fy" {
				t.Errorf("Body %q, RequestID %q: the log needs both", apiErr.Body, apiErr.RequestID)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

// A rate-limited request waits as long as retry-after says, then retries;
// an overloaded one too; the third attempt streams.
func TestRateLimitHonoursRetryAfter(t *testing.T) {
	limited := errorAnswer(t, 429, "error_429.json")
	limited.Header = http.Header{"Retry-After": {"0.2"}}
	overloaded := errorAnswer(t, 529, "error_529.json")
	srv := llmhttptest.New(t, limited, overloaded, sse(t, "text.sse"))
	began := time.Now()
	evs, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), llmhttptest.Question())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := llmhttptest.Text(evs); got != "Hello! How can I help you today?" {
		t.Errorf("text %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if waited := time.Since(began); waited < 200*time.Millisecond {
		t.Errorf("retried after %v, before the 200ms retry-after", waited)
	}
	if string(reqs[0].Body) != string(reqs[2].Body) {
		t.Error("the retried request differs")
	}
}

func TestNoRetriesWhenDisabled(t *testing.T) {
	srv := llmhttptest.New(t, errorAnswer(t, 529, "error_529.json"))
	_, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{HTTP: upstream.HTTP{MaxRetries: -1}}), llmhttptest.Question())
	if err == nil || len(srv.Requests()) != 1 {
		t.Errorf("err %v after %d requests", err, len(srv.Requests()))
	}
}

// A stream that goes wrong after it started is an error, never a silently
// short answer, and what streamed before it was yielded.
func TestStreamProblemsAreClearErrors(t *testing.T) {
	cases := []struct {
		name     string
		answer   llmhttptest.Answer
		opts     anthropic.Options
		text     string
		want     string
		category frames.ErrorCategory
	}{
		{"cut in the middle", sse(t, "cut.sse"), anthropic.Options{}, "Once upon",
			"anthropic: the stream ended before the answer was complete (no message_stop)", frames.ErrorUnknown},
		{"overloaded mid-stream", sse(t, "overloaded_midstream.sse"), anthropic.Options{}, "Once upon",
			"anthropic: error in stream: overloaded_error: Overloaded", frames.ErrorTransient},
		{"invalid request mid-stream", llmhttptest.Answer{Body: []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long\"}}\n\n")}, anthropic.Options{}, "",
			"anthropic: error in stream: invalid_request_error: prompt is too long", frames.ErrorPermanent},
		{"refusal", llmhttptest.Answer{Body: []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")}, anthropic.Options{}, "",
			"anthropic: error in stream: refusal: the model declined to answer", frames.ErrorPermanent},
		{"not a stream", llmhttptest.Answer{ContentType: "application/json", Body: []byte(`{"id":"msg_1","type":"message","content":[]}`)}, anthropic.Options{}, "",
			`anthropic: the server answered "application/json" instead of an event stream`, frames.ErrorUnknown},
		{"bad JSON", llmhttptest.Answer{Body: []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a}}\n\n")}, anthropic.Options{}, "",
			"anthropic: invalid stream event JSON", frames.ErrorUnknown},
		{"input for a text block", llmhttptest.Answer{Body: []byte("data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n")}, anthropic.Options{}, "",
			"anthropic: input_json_delta for block 4, which is not a tool use block", frames.ErrorUnknown},
		{"line too long", llmhttptest.Answer{Body: []byte("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("x", 300) + "\"}}\n\n")}, anthropic.Options{MaxLineBytes: 128}, "",
			"SSE line too long: more than 128 bytes", frames.ErrorUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmhttptest.New(t, tc.answer)
			llmhttptest.CheckStreamError(t, client(srv, tc.opts), tc.want, tc.text, tc.category)
		})
	}
}

// Cancelling the context mid-stream closes the request at once: the
// server sees it go, and the stream ends with the context's error.
func TestCancelClosesTheRequest(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.Fixture(t, "cut.sse"), Stall: true})
	llmhttptest.CheckCancelClosesTheRequest(t, srv, client(srv, anthropic.Options{}))
}

// Stopping the iteration early also closes the request.
func TestStoppingEarlyClosesTheRequest(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.Fixture(t, "cut.sse"), Stall: true})
	for range client(srv, anthropic.Options{}).Stream(t.Context(), llmhttptest.Question()) {
		break
	}
	select {
	case <-srv.Closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the request closed")
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL+"/")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env")
	t.Setenv("ANTHROPIC_MODEL", "claude-env")
	c := anthropic.New(anthropic.Options{HTTP: upstream.HTTP{HTTPClient: srv.Client()}})
	if c.Model() != "claude-env" {
		t.Errorf("model = %q", c.Model())
	}
	if _, err := llmhttptest.Collect(t.Context(), c, llmhttptest.Question()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if got := r.Header.Get("X-Api-Key"); got != "sk-ant-env" {
		t.Errorf("x-api-key = %q", got)
	}
	if !strings.Contains(string(r.Body), `"model":"claude-env"`) || !strings.Contains(string(r.Body), `"max_tokens":1024`) {
		t.Errorf("body = %s", r.Body)
	}
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_MODEL", "")
	if m := anthropic.New(anthropic.Options{}).Model(); m != anthropic.DefaultModel {
		t.Errorf("default model = %q", m)
	}
}

func TestUnencodableRequestsFailClearly(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	cases := map[string]*frames.LLMContext{
		"audio part":      {Messages: []frames.LLMMessage{{Role: "user", Parts: []frames.LLMContentPart{{Type: "input_audio", AudioData: "AAAA", AudioFormat: "wav"}}}}},
		"bad image url":   {Messages: []frames.LLMMessage{{Role: "user", Parts: []frames.LLMContentPart{{Type: "image_url", ImageURL: "data:image/png,notbase64"}}}}},
		"bad raw":         {Messages: []frames.LLMMessage{{Raw: []byte(`{"role":`)}}},
		"raw system role": {Messages: []frames.LLMMessage{{Raw: []byte(`{"role":"system","content":"x"}`)}}},
		"unknown role":    {Messages: []frames.LLMMessage{{Role: "narrator", Content: "x"}}},
		"result no id":    {Messages: []frames.LLMMessage{{Role: "tool", Content: "x"}}},
		"bad parameters":  {Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Name: "t", Parameters: []byte(`{`)}}},
		"tool no name":    {Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Description: "d"}}},
	}
	for name, req := range cases {
		if _, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), req); err == nil || !strings.HasPrefix(err.Error(), "anthropic: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for unencodable contexts", n)
	}
}

// newClient makes a client for the shared timeout checks.
func newClient(baseURL string, hc *http.Client, to llmhttp.Timeouts) llm.Provider {
	return anthropic.New(anthropic.Options{BaseURL: baseURL, APIKey: "k", HTTP: upstream.HTTP{HTTPClient: hc, Timeouts: to, RetryBackoff: time.Millisecond}})
}

// A server that accepts the connection and never completes the TLS
// handshake trips the connect bound, and the connection is closed.
func TestConnectTimeout(t *testing.T) { llmhttptest.CheckConnectTimeout(t, "anthropic", newClient) }

// A server that accepts the request and never answers, or answers the
// headers and then nothing, trips the first-byte bound; the request is
// closed and not retried.
func TestFirstByteTimeout(t *testing.T) { llmhttptest.CheckFirstByteTimeout(t, "anthropic", newClient) }

// A stream that stalls mid-answer trips the idle bound after the text
// that came; the request is closed.
func TestIdleTimeout(t *testing.T) {
	llmhttptest.CheckIdleTimeout(t, "anthropic", newClient, llmhttptest.Fixture(t, "cut.sse"), "Once upon")
}

// An interruption mid-stream through the service closes the request at
// the server and reports no error.
func TestInterruptionThroughTheService(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.Fixture(t, "cut.sse"), Stall: true})
	llmhttptest.InterruptThroughService(t, srv, client(srv, anthropic.Options{}))
}

// A negative bound turns that bound off.
func TestNegativeTimeoutIsOff(t *testing.T) {
	llmhttptest.CheckNegativeTimeoutIsOff(t, newClient, llmhttptest.Fixture(t, "cut.sse"))
}
