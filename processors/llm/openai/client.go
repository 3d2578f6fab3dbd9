package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// Defaults used when neither the options nor the environment say otherwise.
const (
	DefaultBaseURL = "https://api.openai.com/v1"
	DefaultModel   = "gpt-4o-mini"
)

// Options configure a [Client]. The zero value works: base URL, API key and
// model then come from the environment (OPENAI_BASE_URL, OPENAI_API_KEY,
// OPENAI_MODEL), and failing that from [DefaultBaseURL] and [DefaultModel]
// (with no API key, for local servers that need none).
type Options struct {
	// BaseURL is the API root, for example "http://localhost:11434/v1" for
	// Ollama or "http://localhost:8000/v1" for vLLM. "/chat/completions" is
	// appended. Default: $OPENAI_BASE_URL, then DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Default: $OPENAI_API_KEY; empty
	// sends no Authorization header.
	APIKey string
	// Model names the model. Default: $OPENAI_MODEL, then DefaultModel.
	Model string
	// Header holds extra request headers (organization, project, ...).
	Header http.Header
	// HTTPClient sends the requests. Default: a client with no overall
	// timeout (a stream lasts as long as the answer); cancel through ctx.
	HTTPClient *http.Client

	// Temperature, when set, is sent as is.
	Temperature *float64
	// MaxTokens, when positive, is sent as max_tokens.
	MaxTokens int
	// Extra fields are merged into the request body (they win over the
	// fields above), for server-specific settings.
	Extra map[string]any
	// SystemInstruction, when set, is sent as a first system message.
	SystemInstruction string
	// DeveloperRole, when set, replaces the "developer" role in outgoing
	// messages (for example "system" for servers that do not know it).
	DeveloperRole string

	// MaxRetries is how many times a request that failed before the first
	// token (HTTP 429 or 5xx, or a connection error) is retried. Default: 2;
	// negative means never.
	MaxRetries int
	// RetryBackoff is the wait before the first retry; it doubles after
	// each one, up to 8s. A Retry-After header, when given, wins (capped at
	// 8s). Default: 500ms.
	RetryBackoff time.Duration
	// MaxLineBytes bounds one SSE line. Default: DefaultMaxLineBytes.
	MaxLineBytes int
}

// Client is a streaming Chat Completions client for any OpenAI-compatible
// server (OpenAI, vLLM, Ollama, llama.cpp server, Groq). It implements
// [llm.Provider]. It is safe for concurrent use.
type Client struct {
	opts Options
	url  string
}

var _ llm.Provider = (*Client)(nil)

const maxBackoff = 8 * time.Second

// New returns a client for o, filling unset options from the environment
// and the defaults.
func New(o Options) *Client {
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if o.Model == "" {
		o.Model = os.Getenv("OPENAI_MODEL")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 500 * time.Millisecond
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	return &Client{opts: o, url: strings.TrimRight(o.BaseURL, "/") + "/chat/completions"}
}

// Model implements [llm.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// Stream implements [llm.Provider]: it sends req and yields the answer as
// it streams. The request is cancelled and the body closed as soon as ctx
// is done or the consumer stops.
func (c *Client) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := c.encodeRequest(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		resp, err := c.send(ctx, body)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		defer resp.Body.Close()
		// Reads may sit in a blocked network read: close the body the moment
		// ctx ends rather than waiting for the transport to notice.
		stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
		defer stop()
		c.read(ctx, resp, yield)
	}
}

// read parses the event stream of resp and yields its events.
func (c *Client) read(ctx context.Context, resp *http.Response, yield func(llm.Event, error) bool) {
	rd := newSSEReader(resp.Body, c.opts.MaxLineBytes)
	var dec chunkDecoder
	done := false
	for !done {
		data, _, err := rd.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			} else {
				err = fmt.Errorf("openai: reading the stream: %w", err)
			}
			yield(llm.Event{}, err)
			return
		}
		if isDone(data) {
			done = true
			break
		}
		text, err := dec.decode(data)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if dec.apiErr != nil {
			yield(llm.Event{}, dec.apiErr)
			return
		}
		if len(text) > 0 && !yield(llm.TextEvent(string(text)), nil) {
			return
		}
		if dec.newUsage && !yield(llm.UsageEvent(dec.usage), nil) {
			return
		}
	}
	if !done && !dec.finished {
		err := errors.New("openai: the stream ended before the answer was complete (no finish_reason, no [DONE])")
		if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "text/event-stream") {
			err = fmt.Errorf("openai: the server answered %q instead of an event stream", ct)
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		yield(llm.Event{}, err)
		return
	}
	for _, call := range dec.calls() {
		if !yield(llm.ToolCallEvent(call), nil) {
			return
		}
	}
}

// send posts body, retrying 429, 5xx and connection errors with backoff.
// Nothing has been streamed yet, so a retry is invisible to the caller.
func (c *Client) send(ctx context.Context, body []byte) (*http.Response, error) {
	wait := c.opts.RetryBackoff
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("openai: building the request: %w", err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		if c.opts.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
		}
		for k, vs := range c.opts.Header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		resp, err := c.opts.HTTPClient.Do(req)
		var retryAfter time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			err = fmt.Errorf("openai: POST %s: %w", c.url, err)
		case resp.StatusCode == http.StatusOK:
			return resp, nil
		default:
			apiErr := readAPIError(resp)
			if !retryable(resp.StatusCode) {
				return nil, apiErr
			}
			err = apiErr
			retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
		}
		if attempt >= c.opts.MaxRetries {
			return nil, err
		}
		d := wait
		if retryAfter > 0 {
			d = min(retryAfter, maxBackoff)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, maxBackoff)
	}
}

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// APIError is an error answer from the server: an HTTP error status, or an
// error object sent inside the stream.
type APIError struct {
	// StatusCode is the HTTP status (200 for an error inside the stream).
	StatusCode int
	// Message, Type, Code and Param come from OpenAI's error object.
	Message, Type, Code, Param string
	// Body is the start of the response body when it was not an OpenAI
	// error object.
	Body string
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("openai: ")
	if e.StatusCode != http.StatusOK {
		fmt.Fprintf(&b, "HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	} else {
		b.WriteString("error in stream")
	}
	switch {
	case e.Message != "":
		b.WriteString(": ")
		b.WriteString(e.Message)
	case e.Body != "":
		b.WriteString(": ")
		b.WriteString(e.Body)
	}
	var details []string
	if e.Type != "" {
		details = append(details, "type "+e.Type)
	}
	if e.Code != "" {
		details = append(details, "code "+e.Code)
	}
	if e.Param != "" {
		details = append(details, "param "+e.Param)
	}
	if len(details) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(details, ", "))
	}
	return b.String()
}

// Category implements [llm.Categorizer]: 429 and 5xx are transient.
func (e *APIError) Category() frames.ErrorCategory {
	if retryable(e.StatusCode) {
		return frames.ErrorTransient
	}
	return frames.ErrorUnknown
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// readAPIError reads and closes an error response.
func readAPIError(resp *http.Response) *APIError {
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{StatusCode: resp.StatusCode}
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" || json.Valid(raw) {
		if json.Unmarshal(raw, &env) == nil && len(env.Error) > 0 {
			var obj struct {
				Message string          `json:"message"`
				Type    string          `json:"type"`
				Code    json.RawMessage `json:"code"`
				Param   json.RawMessage `json:"param"`
			}
			if json.Unmarshal(env.Error, &obj) == nil {
				e.Message, e.Type = obj.Message, obj.Type
				e.Code, e.Param = scalarText(obj.Code), scalarText(obj.Param)
				return e
			}
			var msg string
			if json.Unmarshal(env.Error, &msg) == nil {
				e.Message = msg
				return e
			}
		}
	}
	body := strings.TrimSpace(string(raw))
	const show = 512
	if len(body) > show {
		body = body[:show] + "…"
	}
	e.Body = body
	return e
}

func scalarText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
