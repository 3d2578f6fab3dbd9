package gemini

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when neither the options nor the environment say otherwise.
const (
	DefaultBaseURL = "https://generativelanguage.googleapis.com"
	DefaultModel   = "gemini-2.5-flash"
)

// Options configure a [Client]. The zero value works: API key, base URL
// and model then come from the environment (GOOGLE_API_KEY, then
// GEMINI_API_KEY; GEMINI_BASE_URL; GEMINI_MODEL), and failing that from
// the defaults.
type Options struct {
	// APIKey is sent as x-goog-api-key. Default: $GOOGLE_API_KEY, then
	// $GEMINI_API_KEY.
	APIKey string
	// BaseURL is the API root; "/v1beta/models/{model}:streamGenerateContent"
	// is appended. Default: $GEMINI_BASE_URL, then DefaultBaseURL.
	BaseURL string
	// Model names the model ("models/" prefix optional). Default:
	// $GEMINI_MODEL, then DefaultModel.
	Model string
	// MaxTokens, when positive, is sent as maxOutputTokens.
	MaxTokens int
	// Temperature, when set, is sent as is.
	Temperature *float64
	// ThinkingBudget, when set, is sent as thinkingConfig.thinkingBudget
	// (0 turns thinking off on models that allow it, which cuts the time
	// to the first token of a voice answer).
	ThinkingBudget *int
	// SystemInstruction, when set, is the first part of the system
	// instruction, before the conversation's own system messages.
	SystemInstruction string
	// Header holds extra request headers.
	Header http.Header
	// HTTP holds the HTTP client, the bounds (defaults: upstream's
	// LLMTimeouts, 10s, 30s, 30s) and the retries of a request that failed
	// before the first event (HTTP 429 or 5xx, or a connection error;
	// default backoff 500ms, doubling up to 8s, a Retry-After header or the
	// error's RetryInfo delay winning). A timeout is an error of category
	// transient, and the request is closed.
	upstream.HTTP

	// MaxLineBytes bounds one SSE line and one event. Default: 1 MiB.
	MaxLineBytes int
}

// Client is a streaming Gemini API client. It implements [llm.Provider]
// and [frames.Modeler]. It is safe for concurrent use.
type Client struct {
	opts   Options
	model  string
	url    string
	header http.Header
	sigs   signatures
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
		o.APIKey = os.Getenv("GOOGLE_API_KEY")
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv("GEMINI_API_KEY")
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("GEMINI_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Model == "" {
		o.Model = os.Getenv("GEMINI_MODEL")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	o.HTTP = llmhttp.Resolve(o.HTTP, llmhttp.LLMTimeouts(), 500*time.Millisecond)
	model := strings.TrimPrefix(o.Model, "models/")
	h := http.Header{}
	for k, vs := range o.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	if o.APIKey != "" {
		h.Set("X-Goog-Api-Key", o.APIKey)
	}
	return &Client{
		opts: o, model: model, header: h,
		url: strings.TrimRight(o.BaseURL, "/") + "/v1beta/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse",
	}
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.model }

// Stream implements [llm.Provider]: it sends req and yields the answer as
// it streams: text pieces as they come, then the function calls in order,
// then the token usage. The request is cancelled and the body closed as
// soon as ctx is done or the consumer stops.
func (c *Client) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := c.encodeRequest(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		s, err := llmhttp.Open(ctx, &llmhttp.Request{
			Provider: "gemini", Client: c.opts.HTTPClient, URL: c.url, Header: c.header, Body: body,
			Retries: c.opts.MaxRetries, Backoff: c.opts.RetryBackoff, MaxBackoff: maxBackoff,
			Timeouts: c.opts.Timeouts, MaxLineBytes: c.opts.MaxLineBytes,
			Failed: func(resp *http.Response) error { return readAPIError(resp) },
		})
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		defer s.Close()
		c.read(s, callPrefix(body), yield)
	}
}

// callPrefix derives the ids of the calls of one answer from its request:
// the same request gives the same ids, and as every turn's request differs
// (it holds the turn before), ids do not repeat within a conversation.
func callPrefix(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return fmt.Sprintf("%s%016x_", generatedPrefix, h.Sum64())
}

// generatedPrefix starts the ids the client makes for calls Gemini sent
// without one; such ids are not sent back.
const generatedPrefix = "gemini_"

// events is what read needs of a stream: [llmhttp.Stream] or, in tests, a
// bare reader.
type events interface {
	Next() (data, event []byte, err error)
	ContentType() string
}

// read parses the event stream and yields its events.
func (c *Client) read(s events, prefix string, yield func(llm.Event, error) bool) {
	var dec decoder
	var answer []byte // the text, for the key of its signature
	for {
		data, _, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		text, err := dec.decode(data)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		answer = append(answer, text...)
		if len(text) > 0 && !yield(llm.TextEvent(string(text)), nil) {
			return
		}
	}
	if dec.finish == "" {
		err := errors.New("gemini: the stream ended before the answer was complete (no finishReason)")
		if ct := s.ContentType(); ct != "" && !strings.HasPrefix(ct, "text/event-stream") {
			err = fmt.Errorf("gemini: the server answered %q instead of an event stream", ct)
		}
		yield(llm.Event{}, err)
		return
	}
	if dec.textSig != "" {
		if key, ok := textKey(string(answer)); ok {
			c.sigs.put(key, dec.textSig)
		}
	}
	calls := dec.calls(prefix)
	for i, call := range calls {
		if sig := dec.fcalls[i].signature; sig != "" {
			c.sigs.put(call.ID, sig)
		}
		if !yield(llm.ToolCallEvent(call), nil) {
			return
		}
	}
	if dec.gotUsage {
		yield(llm.UsageEvent(dec.usage()), nil)
	}
}

// signatures remembers the thought signatures Gemini attached to function
// calls, by call id, and to answers' text, by [textKey], so they go back
// as they came (Gemini 3 models require it of calls and recommend it for
// text). It holds at most maxSignatures, forgetting the oldest.
type signatures struct {
	mu    sync.Mutex
	byID  map[string]string
	order []string
}

const maxSignatures = 1024

func (s *signatures) put(id, sig string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = make(map[string]string)
	}
	if _, ok := s.byID[id]; !ok {
		s.order = append(s.order, id)
	}
	s.byID[id] = sig
	if len(s.order) > maxSignatures {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *signatures) get(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// textKey is the key of the signature of an answer's text: a hash of the
// text as the context records it (trimmed, as the assistant aggregator
// does), so an answer cut short by an interruption, whose signature no
// longer belongs to its text, finds none. Empty text has no key.
func textKey(text string) (string, bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", false
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	return fmt.Sprintf("text:%016x", h.Sum64()), true
}
