package anthropic

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
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when neither the options nor the environment say otherwise.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultModel     = "claude-sonnet-4-5"
	DefaultMaxTokens = 1024
	// APIVersion is the anthropic-version header the client speaks.
	APIVersion = "2023-06-01"
)

// Options configure a [Client]. The zero value works: API key, base URL
// and model then come from the environment (ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL, ANTHROPIC_MODEL), and failing that from the
// defaults.
type Options struct {
	// APIKey is sent as x-api-key. Default: $ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL is the API root; "/v1/messages" is appended. Default:
	// $ANTHROPIC_BASE_URL, then DefaultBaseURL.
	BaseURL string
	// Model names the model. Default: $ANTHROPIC_MODEL, then DefaultModel.
	Model string
	// MaxTokens caps the answer's length; the API requires it. Default:
	// DefaultMaxTokens.
	MaxTokens int
	// Temperature, when set, is sent as is.
	Temperature *float64
	// SystemInstruction, when set, is the first block of the system
	// prompt, before the conversation's own system messages.
	SystemInstruction string
	// PromptCaching marks the stable prefix of every request for Anthropic's
	// prompt cache: cache_control {type: ephemeral} on the last tool and on
	// the last system block, so a long system prompt and tool list are
	// billed and processed once per cache lifetime.
	PromptCaching bool
	// Header holds extra request headers (anthropic-beta, ...).
	Header http.Header
	// HTTP holds the HTTP client, the bounds (defaults: upstream's
	// LLMTimeouts, 10s, 30s, 30s; Anthropic sends ping events, so a
	// healthy stream is never idle that long) and the retries of a request
	// that failed before the first event (HTTP 429, 529 or another 5xx, or
	// a connection error; default backoff 500ms, doubling up to 8s, a
	// retry-after header winning). A timeout is an error of category
	// transient, and the request is closed.
	upstream.HTTP
	// MaxLineBytes bounds one SSE line and one event. Default: 1 MiB.
	MaxLineBytes int
	// MaxContinuations bounds how many times one answer is continued after
	// the service paused it (stop_reason pause_turn, which its server tools
	// cause in long turns). Default: 4; negative means never (a paused
	// answer is then an error).
	MaxContinuations int
}

// Client is a streaming Messages API client. It implements [llm.Provider]
// and [frames.Modeler]. It is safe for concurrent use.
type Client struct {
	opts   Options
	url    string
	header http.Header
}

var (
	_ llm.Provider   = (*Client)(nil)
	_ frames.Modeler = (*Client)(nil)
)

const maxBackoff = 8 * time.Second

// New returns a client for o, filling unset options from the environment
// and the defaults.
func New(o Options) *Client {
	if o.APIKey == "" {
		o.APIKey = os.Getenv("ANTHROPIC_API_KEY")
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Model == "" {
		o.Model = os.Getenv("ANTHROPIC_MODEL")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	o.HTTP = llmhttp.Resolve(o.HTTP, llmhttp.LLMTimeouts(), 500*time.Millisecond)
	if o.MaxContinuations == 0 {
		o.MaxContinuations = 4
	}
	if o.MaxContinuations < 0 {
		o.MaxContinuations = 0
	}
	h := http.Header{}
	for k, vs := range o.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("Anthropic-Version", APIVersion)
	if o.APIKey != "" {
		h.Set("X-Api-Key", o.APIKey)
	}
	return &Client{opts: o, url: strings.TrimRight(o.BaseURL, "/") + "/v1/messages", header: h}
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// Stream implements [llm.Provider]: it sends req and yields the answer as
// it streams: text pieces as they come, then the tool calls in block
// order, then the token usage. The request is cancelled and the body
// closed as soon as ctx is done or the consumer stops.
//
// When the service pauses a long turn of its own tools (stop_reason
// pause_turn, after web searches for example), the answer so far goes
// back as the last assistant message and the turn continues in a new
// request, up to MaxContinuations times; the text of every part streams
// as one answer, and the usage is their sum.
func (c *Client) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := c.buildRequest(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		var t turn
		for part := 0; ; part++ {
			raw, err := body.encode()
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			var dec decoder
			if !c.streamPart(ctx, raw, &dec, yield) {
				return
			}
			t.add(&dec)
			if dec.stopReason != "pause_turn" {
				break
			}
			if part == c.opts.MaxContinuations {
				yield(llm.Event{}, fmt.Errorf("anthropic: the service paused the turn (pause_turn) %d times; MaxContinuations is %d", part+1, c.opts.MaxContinuations))
				return
			}
			content, err := dec.content()
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			body.Messages = appendMerged(body.Messages, "assistant", content)
			if dec.container != "" {
				body.Container = dec.container
			}
		}
		t.finish(yield)
	}
}

// streamPart sends one request of a turn and yields its text. It reports
// whether the response ended well (message_stop); otherwise the error has
// been yielded, or the consumer stopped.
func (c *Client) streamPart(ctx context.Context, body []byte, dec *decoder, yield func(llm.Event, error) bool) bool {
	s, err := llmhttp.Open(ctx, &llmhttp.Request{
		Provider: "anthropic", Client: c.opts.HTTPClient, URL: c.url, Header: c.header, Body: body,
		Retries: c.opts.MaxRetries, Backoff: c.opts.RetryBackoff, MaxBackoff: maxBackoff,
		Timeouts: c.opts.Timeouts, MaxLineBytes: c.opts.MaxLineBytes,
		Failed: func(resp *http.Response) error { return readAPIError(resp) },
	})
	if err != nil {
		yield(llm.Event{}, err)
		return false
	}
	defer s.Close()
	return readPart(s, dec, yield)
}

// events is what read needs of a stream: [llmhttp.Stream] or, in tests, a
// bare reader.
type events interface {
	Next() (data, event []byte, err error)
	ContentType() string
}

// read parses the event stream of a one-part answer and yields its events.
func read(s events, yield func(llm.Event, error) bool) {
	var dec decoder
	if !readPart(s, &dec, yield) {
		return
	}
	var t turn
	t.add(&dec)
	t.finish(yield)
}

// readPart parses one response's events and yields its text. It reports
// whether the response ended with message_stop.
func readPart(s events, dec *decoder, yield func(llm.Event, error) bool) bool {
	for !dec.stopped {
		data, event, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			yield(llm.Event{}, err)
			return false
		}
		text, err := dec.decode(event, data)
		if err != nil {
			yield(llm.Event{}, err)
			return false
		}
		if len(text) > 0 && !yield(llm.TextEvent(string(text)), nil) {
			return false
		}
	}
	if !dec.stopped {
		err := errors.New("anthropic: the stream ended before the answer was complete (no message_stop)")
		if ct := s.ContentType(); ct != "" && !strings.HasPrefix(ct, "text/event-stream") {
			err = fmt.Errorf("anthropic: the server answered %q instead of an event stream", ct)
		}
		yield(llm.Event{}, err)
		return false
	}
	return true
}

// turn gathers what the parts of one answer end with: the stop reason of
// the last, the tool calls and usage of all.
type turn struct {
	stopReason string
	calls      []frames.LLMToolCall
	usage      frames.LLMTokenUsage
	gotUsage   bool
}

func (t *turn) add(d *decoder) {
	t.stopReason = d.stopReason
	t.calls = append(t.calls, d.calls()...)
	if d.gotUsage {
		u := d.usage()
		t.gotUsage = true
		t.usage.PromptTokens += u.PromptTokens
		t.usage.CompletionTokens += u.CompletionTokens
		t.usage.TotalTokens += u.TotalTokens
		t.usage.CacheReadTokens += u.CacheReadTokens
	}
}

// finish yields the answer's end: a refusal error, or its tool calls in
// block order and its usage.
func (t *turn) finish(yield func(llm.Event, error) bool) {
	if t.stopReason == "refusal" {
		yield(llm.Event{}, &APIError{StatusCode: http.StatusOK, Type: "refusal", Message: "the model declined to answer (stop_reason refusal)"})
		return
	}
	for _, call := range t.calls {
		if !yield(llm.ToolCallEvent(call), nil) {
			return
		}
	}
	if t.gotUsage {
		yield(llm.UsageEvent(t.usage), nil)
	}
}
