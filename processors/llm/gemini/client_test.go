package gemini_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/gemini"
	"github.com/framewire/framewire/processors/upstream"
)

func sse(t testing.TB, name string) llmhttptest.Answer {
	return llmhttptest.Answer{Body: llmhttptest.Fixture(t, name)}
}

func errorAnswer(t testing.TB, status int, name string) llmhttptest.Answer {
	a := llmhttptest.Answer{Status: status, Body: llmhttptest.Fixture(t, name), Header: http.Header{"Retry-After": {"0"}}}
	if strings.HasSuffix(name, ".html") {
		a.ContentType = "text/html"
	}
	return a
}

// client returns a client of srv with fast retries.
func client(srv *llmhttptest.Server, o gemini.Options) *gemini.Client {
	o.BaseURL = srv.URL
	if o.APIKey == "" {
		o.APIKey = "AIza-test"
	}
	o.HTTPClient = srv.Client()
	if o.RetryBackoff == 0 {
		o.RetryBackoff = time.Millisecond
	}
	return gemini.New(o)
}

// generatedID matches the ids the client makes for calls without one.
var generatedID = regexp.MustCompile(`^gemini_[0-9a-f]{16}_[0-9]+$`)

// sameIDs replaces generated ids by "gen<i>" to compare calls.
func sameIDs(cs []frames.LLMToolCall) []frames.LLMToolCall {
	out := append([]frames.LLMToolCall(nil), cs...)
	for i := range out {
		if generatedID.MatchString(out[i].ID) {
			out[i].ID = "gen" + out[i].ID[strings.LastIndexByte(out[i].ID, '_')+1:]
		}
	}
	return out
}

// Every recorded stream yields its text chunk by chunk (thoughts left
// out), its calls in order after the text, and one usage event last.
func TestFixtures(t *testing.T) {
	cases := []struct {
		fixture   string
		text      string
		textParts int
		calls     []frames.LLMToolCall
		usage     frames.LLMTokenUsage
	}{
		{fixture: "text.sse", text: "Hello! How can I help you today?", textParts: 3,
			usage: frames.LLMTokenUsage{PromptTokens: 5, CompletionTokens: 9, TotalTokens: 14}},
		{fixture: "usage.sse", text: "It's 21°C in \"Paris\".\nEnjoy 😀", textParts: 2,
			usage: frames.LLMTokenUsage{PromptTokens: 12, CompletionTokens: 10, TotalTokens: 22}},
		{fixture: "thinking.sse", text: "Hi there.", textParts: 1,
			usage: frames.LLMTokenUsage{PromptTokens: 8, CompletionTokens: 123, TotalTokens: 131, CacheReadTokens: 4, ReasoningTokens: 120}},
		{fixture: "function_call.sse", calls: []frames.LLMToolCall{
			{ID: "gen0", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
		}, usage: frames.LLMTokenUsage{PromptTokens: 60, CompletionTokens: 18, TotalTokens: 78}},
		{fixture: "parallel_calls.sse", calls: []frames.LLMToolCall{
			{ID: "gen0", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "gen1", Name: "get_weather", Arguments: `{"city":"Tokyo"}`},
			{ID: "gen2", Name: "get_time", Arguments: `{}`},
		}, usage: frames.LLMTokenUsage{PromptTokens: 70, CompletionTokens: 30, TotalTokens: 100}},
		{fixture: "calls_with_ids.sse", calls: []frames.LLMToolCall{
			{ID: "ka5kd2yq", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "p0v3n8xw", Name: "get_time", Arguments: `{}`},
		}, usage: frames.LLMTokenUsage{PromptTokens: 70, CompletionTokens: 20, TotalTokens: 90}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			srv := llmhttptest.New(t, sse(t, tc.fixture))
			evs, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), llmhttptest.Question())
			if err != nil {
				t.Fatal(err)
			}
			got, parts := llmhttptest.Text(evs)
			if got != tc.text || parts != tc.textParts {
				t.Errorf("text = %q in %d events, want %q in %d", got, parts, tc.text, tc.textParts)
			}
			if d := cmp.Diff(tc.calls, sameIDs(llmhttptest.Calls(evs))); d != "" {
				t.Errorf("calls (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]frames.LLMTokenUsage{tc.usage}, llmhttptest.Usage(evs)); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
		})
	}
}

// Generated call ids are stable: the same request gives the same ids, and
// the next turn's request new ones.
func TestGeneratedIDsAreStable(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "parallel_calls.sse"))
	c := client(srv, gemini.Options{})
	first, _ := llmhttptest.Collect(t.Context(), c, llmhttptest.Question())
	again, _ := llmhttptest.Collect(t.Context(), c, llmhttptest.Question())
	other, _ := llmhttptest.Collect(t.Context(), c, llm.NewContext(llm.UserMessage("hello")).Snapshot())
	a, b, o := llmhttptest.Calls(first), llmhttptest.Calls(again), llmhttptest.Calls(other)
	if len(a) != 3 || !generatedID.MatchString(a[0].ID) {
		t.Fatalf("calls %+v", a)
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("the same request gave other ids (-first +again):\n%s", d)
	}
	if a[0].ID == o[0].ID || a[0].ID == a[1].ID {
		t.Errorf("ids repeat: %s %s %s", a[0].ID, a[1].ID, o[0].ID)
	}
}

// The request goes to streamGenerateContent with alt=sse and the key in
// x-goog-api-key (never in the URL).
func TestRequestShape(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	c := client(srv, gemini.Options{APIKey: "AIza-secret", Model: "models/gemini-2.5-flash-lite"})
	if c.Model() != "gemini-2.5-flash-lite" {
		t.Errorf("model = %q", c.Model())
	}
	if _, err := llmhttptest.Collect(t.Context(), c, llmhttptest.Question()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodPost || r.Path != "/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent" || r.RawQuery != "alt=sse" {
		t.Errorf("%s %s?%s", r.Method, r.Path, r.RawQuery)
	}
	if r.Header.Get("X-Goog-Api-Key") != "AIza-secret" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", r.Header)
	}
}

// Each error answer is an *APIError with its status, a category the
// pipeline can act on, and a short text without the raw body; only 429
// and 5xx are retried.
func TestErrorAnswers(t *testing.T) {
	cases := []struct {
		status   int
		fixture  string
		want     string
		category frames.ErrorCategory
		requests int
	}{
		{400, "error_400.json", "gemini: HTTP 400 Bad Request: INVALID_ARGUMENT: * GenerateContentRequest.tools[0].function_declarations[0].parameters.properties: should be non-empty", frames.ErrorPermanent, 1},
		{400, "error_400_key.json", "gemini: HTTP 400 Bad Request: INVALID_ARGUMENT (API_KEY_INVALID): API key not valid.", frames.ErrorPermanent, 1},
		{400, "error_array.json", "gemini: HTTP 400 Bad Request: INVALID_ARGUMENT: Request contains an invalid argument.", frames.ErrorPermanent, 1},
		{403, "error_403.json", "gemini: HTTP 403 Forbidden: PERMISSION_DENIED: Method doesn't allow unregistered callers", frames.ErrorPermanent, 1},
		{404, "error_404.json", "gemini: HTTP 404 Not Found: NOT_FOUND: models/gemini-0.1-nope is not found", frames.ErrorPermanent, 1},
		{429, "error_429.json", "gemini: HTTP 429 Too Many Requests: RESOURCE_EXHAUSTED: You exceeded your current quota", frames.ErrorTransient, 3},
		{500, "error_500.json", "gemini: HTTP 500 Internal Server Error: INTERNAL: An internal error has occurred.", frames.ErrorTransient, 3},
		{502, "error_502.html", "gemini: HTTP 502 Bad Gateway", frames.ErrorTransient, 3},
		{503, "error_503.json", "gemini: HTTP 503 Service Unavailable: UNAVAILABLE: The model is overloaded.", frames.ErrorTransient, 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status, "_", tc.fixture), func(t *testing.T) {
			srv := llmhttptest.New(t, errorAnswer(t, tc.status, tc.fixture))
			_, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), llmhttptest.Question())
			var apiErr *gemini.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %q\nwant prefix %q", err, tc.want)
			}
			for _, leak := range []string{"<html", "@type", `"code"`, "\n"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("err %q carries the raw body (%q)", err, leak)
				}
			}
			if apiErr.StatusCode != tc.status || apiErr.Category() != tc.category || apiErr.Body == "" {
				t.Errorf("status %d category %v body %q, want %d %v and the body", apiErr.StatusCode, apiErr.Category(), apiErr.Body, tc.status, tc.category)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

// A rate-limited answer without Retry-After is retried after the delay
// its RetryInfo asks for (0.2s in the fixture).
func TestRateLimitHonoursRetryInfo(t *testing.T) {
	limited := errorAnswer(t, 429, "error_429.json")
	limited.Header = nil
	srv := llmhttptest.New(t, limited, sse(t, "text.sse"))
	began := time.Now()
	evs, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), llmhttptest.Question())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := llmhttptest.Text(evs); got != "Hello! How can I help you today?" || len(srv.Requests()) != 2 {
		t.Errorf("text %q after %d requests", got, len(srv.Requests()))
	}
	if waited := time.Since(began); waited < 200*time.Millisecond {
		t.Errorf("retried after %v, before the 200ms RetryInfo delay", waited)
	}
}

// A Retry-After header wins over the backoff.
func TestRateLimitHonoursRetryAfter(t *testing.T) {
	limited := errorAnswer(t, 429, "error_503.json")
	limited.Header = http.Header{"Retry-After": {"0.2"}}
	srv := llmhttptest.New(t, limited, sse(t, "text.sse"))
	began := time.Now()
	if _, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), llmhttptest.Question()); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < 200*time.Millisecond || len(srv.Requests()) != 2 {
		t.Errorf("retried after %v with %d requests", waited, len(srv.Requests()))
	}
}

// Filtered answers, blocked prompts and broken streams are errors, never
// silently short answers; what streamed before was yielded.
func TestStreamProblemsAreClearErrors(t *testing.T) {
	cases := []struct {
		name     string
		answer   llmhttptest.Answer
		opts     gemini.Options
		text     string
		want     string
		category frames.ErrorCategory
	}{
		{"safety", sse(t, "safety.sse"), gemini.Options{}, "Here is how",
			"gemini: the answer was stopped by Gemini's content filter (finishReason SAFETY)", frames.ErrorPermanent},
		{"recitation", sse(t, "recitation.sse"), gemini.Options{}, "The lyrics go",
			"gemini: the answer was stopped by Gemini's content filter (finishReason RECITATION)", frames.ErrorPermanent},
		{"prohibited content", sse(t, "prohibited.sse"), gemini.Options{}, "",
			"(finishReason PROHIBITED_CONTENT)", frames.ErrorPermanent},
		{"prompt blocked", sse(t, "prompt_blocked.sse"), gemini.Options{}, "",
			"gemini: the prompt was blocked (blockReason SAFETY)", frames.ErrorPermanent},
		{"malformed call", llmhttptest.Answer{Body: []byte("data: {\"candidates\":[{\"content\":{\"role\":\"model\"},\"finishReason\":\"MALFORMED_FUNCTION_CALL\"}]}\n\n")}, gemini.Options{}, "",
			"gemini: the answer was stopped (finishReason MALFORMED_FUNCTION_CALL)", frames.ErrorUnknown},
		{"cut in the middle", sse(t, "cut.sse"), gemini.Options{}, "Once upon",
			"gemini: the stream ended before the answer was complete (no finishReason)", frames.ErrorUnknown},
		{"error in stream", sse(t, "error_midstream.sse"), gemini.Options{}, "Once",
			"gemini: error in stream: UNAVAILABLE: The model is overloaded.", frames.ErrorTransient},
		{"not a stream", llmhttptest.Answer{ContentType: "application/json", Body: []byte(`{"candidates":[]}`)}, gemini.Options{}, "",
			`gemini: the server answered "application/json" instead of an event stream`, frames.ErrorUnknown},
		{"bad JSON", llmhttptest.Answer{Body: []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a}]}}]}\n\n")}, gemini.Options{}, "",
			"gemini: invalid stream event JSON", frames.ErrorUnknown},
		{"args not an object", llmhttptest.Answer{Body: []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":\"x\"}}]},\"finishReason\":\"STOP\"}]}\n\n")}, gemini.Options{}, "",
			"functionCall args is not an object", frames.ErrorUnknown},
		{"line too long", llmhttptest.Answer{Body: []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"" + strings.Repeat("x", 300) + "\"}]}}]}\n\n")}, gemini.Options{MaxLineBytes: 128}, "",
			"SSE line too long: more than 128 bytes", frames.ErrorUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmhttptest.New(t, tc.answer)
			llmhttptest.CheckStreamError(t, client(srv, tc.opts), tc.want, tc.text, tc.category)
		})
	}
}

// Cancelling the context mid-stream closes the request at once.
func TestCancelClosesTheRequest(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.Fixture(t, "cut.sse"), Stall: true})
	llmhttptest.CheckCancelClosesTheRequest(t, srv, client(srv, gemini.Options{}))
}

func TestEnvironmentDefaults(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	t.Setenv("GEMINI_BASE_URL", srv.URL+"/")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "gemini-env-key")
	t.Setenv("GEMINI_MODEL", "gemini-env")
	c := gemini.New(gemini.Options{HTTP: upstream.HTTP{HTTPClient: srv.Client()}})
	if _, err := llmhttptest.Collect(t.Context(), c, llmhttptest.Question()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Header.Get("X-Goog-Api-Key") != "gemini-env-key" || r.Path != "/v1beta/models/gemini-env:streamGenerateContent" {
		t.Errorf("key %q path %s", r.Header.Get("X-Goog-Api-Key"), r.Path)
	}
	t.Setenv("GOOGLE_API_KEY", "google-env-key")
	if _, err := llmhttptest.Collect(t.Context(), gemini.New(gemini.Options{HTTP: upstream.HTTP{HTTPClient: srv.Client()}}), llmhttptest.Question()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Header.Get("X-Goog-Api-Key"); got != "google-env-key" {
		t.Errorf("GOOGLE_API_KEY should win: key %q", got)
	}
	t.Setenv("GEMINI_MODEL", "")
	if m := gemini.New(gemini.Options{}).Model(); m != gemini.DefaultModel {
		t.Errorf("default model = %q", m)
	}
}

func TestUnencodableRequestsFailClearly(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	cases := map[string]*frames.LLMContext{
		"video part":           {Messages: []frames.LLMMessage{{Role: "user", Parts: []frames.LLMContentPart{{Type: "video"}}}}},
		"bad image url":        {Messages: []frames.LLMMessage{{Role: "user", Parts: []frames.LLMContentPart{{Type: "image_url", ImageURL: "data:image/png,x"}}}}},
		"bad raw":              {Messages: []frames.LLMMessage{{Raw: []byte(`{"role":"assistant","parts":[]}`)}}},
		"unknown role":         {Messages: []frames.LLMMessage{{Role: "narrator", Content: "x"}}},
		"orphan result":        {Messages: []frames.LLMMessage{{Role: "tool", ToolCallID: "nope", Content: "x"}}},
		"bad parameters":       {Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Name: "t", Parameters: []byte(`{`)}}},
		"recursive $ref":       {Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Name: "t", Parameters: []byte(`{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}`)}}},
		"remote $ref":          {Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Name: "t", Parameters: []byte(`{"type":"object","properties":{"n":{"$ref":"https://example.com/s.json"}}}`)}}},
		"schema not an object": {Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Name: "t", Parameters: []byte(`[1]`)}}},
	}
	for name, req := range cases {
		if _, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), req); err == nil || !strings.HasPrefix(err.Error(), "gemini: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for unencodable contexts", n)
	}
}

// The thought signature Gemini attached to a call goes back with that
// call in the next request, and a call Gemini gave an id keeps it in both
// the call and its result. Calls Gemini sent unsigned (a model without
// thinking) take the placeholder; so does the second of parallel calls,
// which the aggregator records as an assistant/tool pair of its own, so
// that it starts a model turn (without one, Gemini 3 refuses the step).
func TestCallsGoBackAsGeminiSentThem(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "function_call.sse"), sse(t, "calls_with_ids.sse"), sse(t, "text.sse"))
	c := client(srv, gemini.Options{})
	conv := llm.NewContext(llm.UserMessage("weather?"))
	for range 2 {
		evs, err := llmhttptest.Collect(t.Context(), c, conv.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range llmhttptest.Calls(evs) {
			conv.Add(frames.LLMMessage{Role: "assistant", ToolCalls: []frames.LLMToolCall{call}},
				frames.LLMMessage{Role: "tool", ToolCallID: call.ID, Content: `"done"`})
		}
	}
	if _, err := llmhttptest.Collect(t.Context(), c, conv.Snapshot()); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(srv.Requests()[2].Body, &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range body.Contents {
		got = append(got, string(c))
	}
	want := []string{
		`{"role":"user","parts":[{"text":"weather?"}]}`,
		`{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris","unit":"celsius"}},"thoughtSignature":"CiQB0e2Kb7mJcR4kZrW0eXGz1oB7bq0yq6o0dYcBEd3uYgV6M1s="}]}`,
		`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"result":"done"}}}]}`,
		`{"role":"model","parts":[{"functionCall":{"id":"ka5kd2yq","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"skip_thought_signature_validator"}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"ka5kd2yq","name":"get_weather","response":{"result":"done"}}}]}`,
		`{"role":"model","parts":[{"functionCall":{"id":"p0v3n8xw","name":"get_time","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"p0v3n8xw","name":"get_time","response":{"result":"done"}}}]}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("contents (-want +got):\n%s", d)
	}
}

// newClient makes a client for the shared timeout checks.
func newClient(baseURL string, hc *http.Client, to llmhttp.Timeouts) llm.Provider {
	return gemini.New(gemini.Options{BaseURL: baseURL, APIKey: "k", HTTP: upstream.HTTP{HTTPClient: hc, Timeouts: to, RetryBackoff: time.Millisecond}})
}

// A server that accepts the connection and never completes the TLS
// handshake trips the connect bound, and the connection is closed.
func TestConnectTimeout(t *testing.T) { llmhttptest.CheckConnectTimeout(t, "gemini", newClient) }

// A server that accepts the request and never answers, or answers the
// headers and then nothing, trips the first-byte bound; the request is
// closed and not retried.
func TestFirstByteTimeout(t *testing.T) { llmhttptest.CheckFirstByteTimeout(t, "gemini", newClient) }

// A stream that stalls mid-answer trips the idle bound after the text
// that came; the request is closed.
func TestIdleTimeout(t *testing.T) {
	llmhttptest.CheckIdleTimeout(t, "gemini", newClient, llmhttptest.Fixture(t, "cut.sse"), "Once upon")
}

// An interruption mid-stream through the service closes the request at
// the server and reports no error.
func TestInterruptionThroughTheService(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.Fixture(t, "cut.sse"), Stall: true})
	llmhttptest.InterruptThroughService(t, srv, client(srv, gemini.Options{}))
}

// A negative bound turns that bound off: only the caller's deadline ends
// a stall.
func TestNegativeTimeoutIsOff(t *testing.T) {
	llmhttptest.CheckNegativeTimeoutIsOff(t, newClient, llmhttptest.Fixture(t, "cut.sse"))
}

// A call whose signature this client never saw (history from another
// client, a restart, an evicted entry) goes back with the placeholder
// Gemini documents; of parallel calls in one turn only the first carries
// it, as Gemini sends them.
func TestUnknownCallsTakeThePlaceholderSignature(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	conv := &frames.LLMContext{Messages: []frames.LLMMessage{
		llm.UserMessage("weather and time?"),
		{Role: "assistant", ToolCalls: []frames.LLMToolCall{
			{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "c2", Name: "get_time", Arguments: `{}`},
		}},
		{Role: "tool", ToolCallID: "c1", Content: `"sunny"`},
		{Role: "tool", ToolCallID: "c2", Content: `"noon"`},
	}}
	if _, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), conv); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := `{"role":"model","parts":[{"functionCall":{"id":"c1","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"id":"c2","name":"get_time","args":{}}}]}`
	if len(body.Contents) != 3 || string(body.Contents[1]) != want {
		t.Errorf("contents %s\nwant the model turn %s", body.Contents, want)
	}
}

// The signature Gemini put on an answer's text (in a stream, on a last
// empty text part) goes back on that text in the next request; text the
// client did not receive that way goes back without one.
func TestTextSignatureGoesBackWithItsText(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text_signature.sse"), sse(t, "text.sse"))
	c := client(srv, gemini.Options{})
	conv := llm.NewContext(llm.UserMessage("hi"))
	evs, err := llmhttptest.Collect(t.Context(), c, conv.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	text, _ := llmhttptest.Text(evs)
	conv.Add(llm.AssistantMessage(text), llm.UserMessage("thanks"), llm.AssistantMessage("You're welcome."), llm.UserMessage("bye"))
	if _, err := llmhttptest.Collect(t.Context(), c, conv.Snapshot()); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"role":"user","parts":[{"text":"hi"}]}`,
		`{"role":"model","parts":[{"text":"Hi! I can check the weather for you.","thoughtSignature":"EjQKMgHRqeQ1xXwq3c0y7JkVb9n3pT0mQ2a8sF4dK6hL1jN5rP7tV9xZ2bD4fH6kM8oQ"}]}`,
		`{"role":"user","parts":[{"text":"thanks"}]}`,
		`{"role":"model","parts":[{"text":"You're welcome."}]}`,
		`{"role":"user","parts":[{"text":"bye"}]}`,
	}
	var got []string
	for _, c := range body.Contents {
		got = append(got, string(c))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("contents (-want +got):\n%s", d)
	}
}
