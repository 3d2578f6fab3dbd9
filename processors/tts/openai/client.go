package openai

import (
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
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/openaiapi"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/wavstream"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when the options leave a field empty.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultModel      = "gpt-4o-mini-tts"
	DefaultVoice      = "alloy"
	DefaultSampleRate = 24000
)

// Options configure a [Client]. The zero value talks to OpenAI with the
// key in $OPENAI_API_KEY.
type Options struct {
	// BaseURL is the API root; "/audio/speech" is appended. Default:
	// DefaultBaseURL. For example "http://localhost:8880/v1" for
	// Kokoro-FastAPI.
	BaseURL string
	// APIKey is sent as a bearer token. When empty and BaseURL is OpenAI's,
	// $OPENAI_API_KEY is used; other servers get no key unless given one,
	// so an OpenAI key never leaks to them.
	APIKey string
	// Model names the model. Default: DefaultModel.
	Model string
	// Voice names the voice. Default: DefaultVoice.
	Voice string
	// Speed, when positive, is sent as is (0.25 to 4.0 at OpenAI).
	Speed float64
	// Instructions, when set, steer the voice (gpt-4o-mini-tts).
	Instructions string
	// SampleRate is the rate of the PCM the server sends. Default:
	// DefaultSampleRate (OpenAI always sends 24 kHz).
	SampleRate int
	// Extra fields are merged into the request body (they win), for
	// server-specific settings.
	Extra map[string]any
	// Header holds extra request headers.
	Header http.Header
	// HTTP holds the HTTP client, the bounds and the retries. upstream.Timeouts
	// bound connecting, the wait for the first byte of audio and the
	// silence between two reads of it while the client waits (defaults:
	// upstream's SpeechTimeouts, 10s, 10s, 20s). A server that accepts and
	// never answers fails the request with a transient
	// *upstream.TimeoutError such as "openai tts: no first byte within
	// 10s", and the request is closed; timeouts are not retried. A request
	// that failed before any audio (connection error, HTTP 429 or 5xx) is
	// retried MaxRetries times (default 2), after RetryBackoff (default
	// 250ms, doubled after each, up to 4s; a Retry-After header wins).
	upstream.HTTP
}

// Client synthesizes speech through /audio/speech. It implements
// tts.Synthesizer and is safe for concurrent use.
type Client struct {
	opts   Options
	url    string
	header http.Header
}

var _ tts.Synthesizer = (*Client)(nil)

// New returns a client for o, filling unset options with the defaults.
func New(o Options) *Client {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.APIKey == "" && o.BaseURL == DefaultBaseURL {
		o.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Voice == "" {
		o.Voice = DefaultVoice
	}
	if o.SampleRate <= 0 {
		o.SampleRate = DefaultSampleRate
	}
	o.HTTP = llmhttp.Resolve(o.HTTP, llmhttp.SpeechTimeouts(), 250*time.Millisecond)
	// The caller's headers first; the fixed ones win.
	h := http.Header{}
	for k, vs := range o.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	h.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	return &Client{opts: o, url: o.BaseURL + "/audio/speech", header: h}
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// maxBackoff caps the wait between retries.
const maxBackoff = 4 * time.Second

// readSize is the most audio yielded at once, and minRead the least
// (about 20 ms at 24 kHz) unless the body ends: small network reads are
// gathered so the pipeline does not carry slivers of audio.
const (
	readSize = 16 << 10
	minRead  = 960
)

// Synthesize implements tts.Synthesizer: it posts the text and yields the
// PCM as the body streams in. Cancelling ctx, or a bound of
// Options.Timeouts running out, closes the connection.
func (c *Client) Synthesize(ctx context.Context, req tts.Request) iter.Seq2[tts.Chunk, error] {
	return func(yield func(tts.Chunk, error) bool) {
		body, err := c.encode(req.Text)
		if err != nil {
			yield(tts.Chunk{}, err)
			return
		}
		resp, err := c.send(ctx, body)
		if err != nil {
			if ctx.Err() == nil {
				yield(tts.Chunk{}, err)
			}
			return
		}
		defer resp.Close()
		rate, r, err := c.audioBody(resp)
		if err != nil {
			if ctx.Err() == nil {
				yield(tts.Chunk{}, err)
			}
			return
		}
		buf := make([]byte, readSize)
		for {
			n, err := gather(r, buf, minRead)
			if n > 0 && !yield(tts.Chunk{Audio: buf[:n], SampleRate: rate}, nil) {
				return
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				var te *llmhttp.TimeoutError
				switch {
				case ctx.Err() != nil:
				case errors.As(err, &te):
					yield(tts.Chunk{}, te)
				default:
					yield(tts.Chunk{}, fmt.Errorf("openai tts: reading the audio stream: %w", err))
				}
				return
			}
		}
	}
}

// gather reads into buf until it holds at least least bytes or the reader
// fails; unlike io.ReadAtLeast it keeps io.EOF (the end of the body) apart
// from io.ErrUnexpectedEOF (a body cut short).
func gather(r io.Reader, buf []byte, least int) (int, error) {
	n := 0
	for n < least {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (c *Client) encode(text string) ([]byte, error) {
	body := map[string]any{
		"model":           c.opts.Model,
		"input":           text,
		"voice":           c.opts.Voice,
		"response_format": "pcm",
	}
	if c.opts.Speed > 0 {
		body["speed"] = c.opts.Speed
	}
	if c.opts.Instructions != "" {
		body["instructions"] = c.opts.Instructions
	}
	for k, v := range c.opts.Extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai tts: encoding the request: %w", err)
	}
	return b, nil
}

// send posts body, retrying failures that happen before any audio.
func (c *Client) send(ctx context.Context, body []byte) (*llmhttp.Body, error) {
	return llmhttp.Send(ctx, &llmhttp.Request{
		Provider: "openai tts", Client: c.opts.HTTPClient, URL: c.url, Header: c.header, Body: body,
		Retries: c.opts.MaxRetries, Backoff: c.opts.RetryBackoff, MaxBackoff: maxBackoff,
		Timeouts: c.opts.Timeouts,
		Failed:   func(resp *http.Response) error { return readAPIError(resp) },
	})
}

// answer is what audioBody reads: an [llmhttp.Body] or, in tests, a bare
// reader.
type answer interface {
	io.Reader
	ContentType() string
	StatusCode() int
}

// audioBody checks the answer's media type and returns the sample rate and
// a reader positioned at the first sample. Servers that ignore
// response_format and send a compressed format get a clear error.
func (c *Client) audioBody(resp answer) (int, io.Reader, error) {
	ct := resp.ContentType()
	mt, params, _ := mime.ParseMediaType(ct)
	switch {
	case mt == "" || mt == "audio/pcm" || mt == "audio/raw" || mt == "audio/x-raw" || mt == "application/octet-stream" || strings.EqualFold(mt, "audio/l16"):
		rate := c.opts.SampleRate
		if r, err := strconv.Atoi(params["rate"]); err == nil && r > 0 {
			rate = r
		}
		return rate, resp, nil
	case mt == "audio/wav" || mt == "audio/x-wav" || mt == "audio/wave" || mt == "audio/vnd.wave":
		h, err := wavstream.ReadHeader(resp)
		var te *llmhttp.TimeoutError
		if errors.As(err, &te) {
			return 0, nil, te
		}
		if err != nil {
			return 0, nil, fmt.Errorf("openai tts: %w", err)
		}
		if h.Channels != 1 {
			return 0, nil, fmt.Errorf("openai tts: the server sent %d-channel audio, want mono", h.Channels)
		}
		var r io.Reader = resp
		if h.DataBytes >= 0 {
			r = io.LimitReader(resp, h.DataBytes)
		}
		return h.SampleRate, r, nil
	case strings.HasPrefix(mt, "audio/"):
		return 0, nil, fmt.Errorf("openai tts: the server sent %s, not raw PCM: it ignored response_format \"pcm\"", mt)
	default:
		raw, err := io.ReadAll(io.LimitReader(resp, openaiapi.MaxErrorBody))
		var te *llmhttp.TimeoutError
		if errors.As(err, &te) {
			return 0, nil, te
		}
		e := parseAPIError(resp.StatusCode(), raw)
		return 0, nil, fmt.Errorf("openai tts: the server answered %s instead of audio: %w", mt, e)
	}
}

// APIError is an error answer from the server.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message, Type, Code and Param come from OpenAI's error object.
	Message, Type, Code, Param string
	// Body is the start of the body when it was not an error object.
	Body string
}

// Error implements error.
func (e *APIError) Error() string {
	return openaiapi.Error(*e).Describe("openai tts", "")
}

// Category implements [frames.Categorizer]: 429 and 5xx are transient; 401 and
// 403 (bad or missing credentials) are permanent.
func (e *APIError) Category() frames.ErrorCategory {
	return openaiapi.Category(e.StatusCode, true)
}

// errorParse reads OpenAI error objects and FastAPI details (Kokoro).
var errorParse = openaiapi.Parse{Detail: openaiapi.DetailRaw}

// readAPIError reads and closes an error answer.
func readAPIError(resp *http.Response) *APIError {
	e := APIError(errorParse.Read(resp))
	return &e
}

// parseAPIError reads an error body.
func parseAPIError(status int, raw []byte) *APIError {
	e := APIError(errorParse.Parse(status, raw))
	return &e
}
