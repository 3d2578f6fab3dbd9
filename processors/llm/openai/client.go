package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/openaiapi"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when neither the options nor the environment say otherwise.
const (
	DefaultBaseURL = "https://api.openai.com/v1"
	DefaultModel   = "gpt-4o-mini"
	// DefaultMaxLineBytes bounds one SSE line when Options.MaxLineBytes is
	// zero.
	DefaultMaxLineBytes = llmhttp.DefaultMaxLineBytes
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
	// HTTP holds the HTTP client, the bounds (defaults: upstream's
	// LLMTimeouts, 10s, 30s, 30s) and the retries of a request that failed
	// before the first token (HTTP 429 or 5xx, or a connection error;
	// default backoff 500ms, doubling up to 8s, a Retry-After header
	// winning). A server that accepts and never answers ends the turn with
	// a transient *upstream.TimeoutError such as "openai: no first byte
	// within 30s", and the request is closed.
	upstream.HTTP

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

	// MaxLineBytes bounds one SSE line and one event. Default:
	// DefaultMaxLineBytes.
	MaxLineBytes int
}

// Client is a streaming Chat Completions client for any OpenAI-compatible
// server (OpenAI, vLLM, Ollama, llama.cpp server, Groq). It implements
// [llm.Provider]. It is safe for concurrent use.
type Client struct {
	opts   Options
	url    string
	header http.Header
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
	o.HTTP = llmhttp.Resolve(o.HTTP, llmhttp.LLMTimeouts(), 500*time.Millisecond)
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	// The fixed headers first, then the caller's, added (a name set in
	// both keeps both values).
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	for k, vs := range o.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return &Client{opts: o, url: strings.TrimRight(o.BaseURL, "/") + "/chat/completions", header: h}
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// Stream implements [llm.Provider]: it sends req and yields the answer as
// it streams. The request is cancelled and the body closed as soon as ctx
// is done, the consumer stops, or a bound of Options.Timeouts runs out.
func (c *Client) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := c.encodeRequest(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		s, err := llmhttp.Open(ctx, &llmhttp.Request{
			Provider: "openai", Client: c.opts.HTTPClient, URL: c.url, Header: c.header, Body: body,
			Retries: c.opts.MaxRetries, Backoff: c.opts.RetryBackoff, MaxBackoff: maxBackoff,
			Timeouts: c.opts.Timeouts, MaxLineBytes: c.opts.MaxLineBytes,
			Failed: func(resp *http.Response) error { return readAPIError(resp) },
		})
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		defer s.Close()
		read(s, yield)
	}
}

// events is what read needs of a stream: [llmhttp.Stream] or, in tests, a
// bare reader.
type events interface {
	Next() (data, event []byte, err error)
	ContentType() string
}

// read parses the event stream and yields its events.
func read(s events, yield func(llm.Event, error) bool) {
	var dec chunkDecoder
	done := false
	for !done {
		data, _, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
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
		if ct := s.ContentType(); ct != "" && !strings.HasPrefix(ct, "text/event-stream") {
			err = fmt.Errorf("openai: the server answered %q instead of an event stream", ct)
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
	return openaiapi.Error(*e).Describe("openai", "error in stream")
}

// Category implements [frames.Categorizer]: 429 and 5xx are transient.
func (e *APIError) Category() frames.ErrorCategory {
	return openaiapi.Category(e.StatusCode, false)
}

// errorParse reads OpenAI error objects; other bodies are kept up to 512
// bytes.
var errorParse = openaiapi.Parse{BodyLimit: 512}

// readAPIError reads and closes an error response.
func readAPIError(resp *http.Response) *APIError {
	e := APIError(errorParse.Read(resp))
	return &e
}
