package elevenlabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when the options and the environment leave a field empty.
const (
	DefaultBaseURL    = "https://api.elevenlabs.io"
	DefaultModel      = "eleven_flash_v2_5"
	DefaultSampleRate = 24000
)

// Transport selects the API a [Client] speaks.
type Transport int

const (
	// WebSocket streams over the multi-context websocket
	// (/v1/text-to-speech/{voice_id}/multi-stream-input): one connection
	// for all requests, one context per request, closed on interruption.
	WebSocket Transport = iota
	// HTTP posts each request to /v1/text-to-speech/{voice_id}/stream/with-timestamps
	// and streams the answer: a fallback where websockets cannot pass.
	HTTP
)

// String names the transport.
func (t Transport) String() string {
	switch t {
	case WebSocket:
		return "websocket"
	case HTTP:
		return "http"
	}
	return "Transport(" + strconv.Itoa(int(t)) + ")"
}

// VoiceSettings override the voice's stored settings. Every field is sent
// as set, except a zero Speed, which is left out.
type VoiceSettings struct {
	// Stability: lower is more expressive, higher more even (0 to 1).
	Stability float64 `json:"stability"`
	// SimilarityBoost: how closely to keep to the original voice (0 to 1).
	SimilarityBoost float64 `json:"similarity_boost"`
	// Style exaggerates the voice's style (0 to 1; costs latency).
	Style float64 `json:"style"`
	// UseSpeakerBoost raises the similarity to the speaker.
	UseSpeakerBoost bool `json:"use_speaker_boost"`
	// Speed is the speaking rate (0.7 to 1.2; 1 is normal).
	Speed float64 `json:"speed,omitempty"`
}

// DefaultVoiceSettings are the settings ElevenLabs documents as its
// defaults, a starting point to adjust.
func DefaultVoiceSettings() VoiceSettings {
	return VoiceSettings{Stability: 0.5, SimilarityBoost: 0.75, UseSpeakerBoost: true, Speed: 1}
}

// Options configure a [Client]. VoiceID (or $ELEVENLABS_VOICE_ID) is
// required; the rest defaults.
type Options struct {
	// APIKey is sent as the xi-api-key header. Default: $ELEVENLABS_API_KEY.
	APIKey string
	// VoiceID is the id of the voice to speak with. Default:
	// $ELEVENLABS_VOICE_ID.
	VoiceID string
	// Model names the model. Default: $ELEVENLABS_MODEL, else DefaultModel.
	// (eleven_v3 has no websocket streaming; use it with Transport HTTP.)
	Model string
	// BaseURL is the API root; the websocket URL is derived from it
	// (https becomes wss, http ws). Default: $ELEVENLABS_BASE_URL, else
	// DefaultBaseURL.
	BaseURL string
	// Transport is the API to speak: WebSocket (the default) or HTTP.
	Transport Transport
	// SampleRate is the rate of the PCM asked for: 8000, 16000, 22050,
	// 24000, 44100 or 48000. 0 asks for the pipeline's output rate when
	// every ElevenLabs plan may have it (8000 to 24000; which spares
	// resampling), else DefaultSampleRate, which the tts.Service resamples.
	// 44100 and 48000 are for the plans that allow them (pcm_44100 needs
	// the Pro tier): when ElevenLabs refuses the rate for the account's
	// tier, the client falls back to DefaultSampleRate for that request
	// and every later one.
	SampleRate int
	// VoiceSettings, when set, override the voice's stored settings.
	VoiceSettings *VoiceSettings
	// ChunkLengthSchedule, when set, is the websocket's
	// generation_config.chunk_length_schedule: how many characters
	// ElevenLabs buffers before each generation (each 50 to 500). Requests
	// are flushed whole, so it matters little here.
	ChunkLengthSchedule []int
	// LanguageCode, when set, is sent as language_code (ISO 639-1), for
	// the models that take it.
	LanguageCode string
	// HTTP holds the client that dials the websocket and sends the HTTP
	// requests, the bounds and the retries. Timeouts bound connecting, the
	// first audio and the silence between messages (defaults: upstream's
	// SpeechTimeouts, 10s, 10s, 20s); a bound that runs out fails the
	// request with an *upstream.TimeoutError, which is transient and not
	// retried. A request that failed before any audio (the connection
	// dropped or could not be opened, HTTP 429 or 5xx) is retried
	// MaxRetries times (default 2), after RetryBackoff (default 250ms,
	// doubled after each, up to 4s; a Retry-After header wins).
	upstream.HTTP
	// InactivityTimeout is how long ElevenLabs keeps an idle websocket
	// open (its inactivity_timeout, at most 180s); a connection it closed
	// is opened again on the next request. Default: 180s.
	InactivityTimeout time.Duration
	// Logger receives connection events. Default: none.
	Logger *zap.Logger
}

// Client speaks through ElevenLabs with word timestamps from its character
// alignment. Over the websocket it keeps one connection and runs each
// request in its own context, so an interruption closes that context and
// the connection goes on; it is opened on first use (or by Warm) and
// again after it drops. It implements tts.Synthesizer, tts.WordTimer,
// tts.Warmer and io.Closer, and is safe for concurrent use.
type Client struct {
	opts  Options
	ws    string // the websocket URL without its query
	query url.Values

	// tierLimited is set once ElevenLabs refused a rate for the
	// account's tier: later requests ask for DefaultSampleRate instead.
	tierLimited atomic.Bool

	mu     sync.Mutex
	conn   *conn
	closes int        // Close calls so far: a dial that spans one is dropped
	dialMu sync.Mutex // one dial at a time
}

var (
	_ tts.Synthesizer = (*Client)(nil)
	_ tts.WordTimer   = (*Client)(nil)
	_ tts.Warmer      = (*Client)(nil)
	_ io.Closer       = (*Client)(nil)
	_ frames.Modeler  = (*Client)(nil)
)

// New returns a client for o, filling unset fields from the environment
// (ELEVENLABS_API_KEY, ELEVENLABS_VOICE_ID, ELEVENLABS_MODEL,
// ELEVENLABS_BASE_URL) and then the defaults.
func New(o Options) *Client {
	env := func(v *string, name, def string) {
		if *v == "" {
			*v = os.Getenv(name)
		}
		if *v == "" {
			*v = def
		}
	}
	env(&o.APIKey, "ELEVENLABS_API_KEY", "")
	env(&o.VoiceID, "ELEVENLABS_VOICE_ID", "")
	env(&o.Model, "ELEVENLABS_MODEL", DefaultModel)
	env(&o.BaseURL, "ELEVENLABS_BASE_URL", DefaultBaseURL)
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	o.HTTP = llmhttp.Resolve(o.HTTP, llmhttp.SpeechTimeouts(), 250*time.Millisecond)
	if o.InactivityTimeout <= 0 || o.InactivityTimeout > 180*time.Second {
		o.InactivityTimeout = 180 * time.Second
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	c := &Client{opts: o}
	ws := o.BaseURL
	switch {
	case strings.HasPrefix(ws, "https://"):
		ws = "wss://" + ws[len("https://"):]
	case strings.HasPrefix(ws, "http://"):
		ws = "ws://" + ws[len("http://"):]
	}
	c.ws = ws + "/v1/text-to-speech/" + url.PathEscape(o.VoiceID) + "/multi-stream-input"
	c.query = url.Values{
		"model_id":           {o.Model},
		"sync_alignment":     {"true"},
		"inactivity_timeout": {strconv.Itoa(int(o.InactivityTimeout / time.Second))},
	}
	if o.LanguageCode != "" {
		c.query.Set("language_code", o.LanguageCode)
	}
	return c
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// WordTimestamps implements tts.WordTimer: ElevenLabs reports when each
// character starts, which the client groups into words.
func (c *Client) WordTimestamps() bool { return true }

// Warm implements tts.Warmer: over the websocket it opens the connection
// ahead of the first request, at Options.SampleRate (or
// DefaultSampleRate). The HTTP transport has nothing to warm.
func (c *Client) Warm(ctx context.Context) error {
	if c.opts.Transport == HTTP {
		return nil
	}
	_, err := c.connection(ctx, c.rate(0))
	return err
}

// Close implements io.Closer: it closes the websocket, if one is open. A
// later request opens a new one.
func (c *Client) Close() error {
	c.mu.Lock()
	cn := c.conn
	c.conn = nil
	c.closes++
	c.mu.Unlock()
	if cn != nil {
		cn.shutdown()
	}
	return nil
}

// Rates ElevenLabs produces as raw PCM (output_format pcm_<rate>).
var rates = []int{8000, 16000, 22050, 24000, 44100, 48000}

// everyTier are the rates every plan may ask for. ElevenLabs' API
// reference (output_format) says 44.1 kHz PCM "requires you to be
// subscribed to Pro tier or above"; 48 kHz is taken to be gated alike.
var everyTier = []int{8000, 16000, 22050, 24000}

func supported(rate int) bool { return slices.Contains(rates, rate) }

// rate returns the rate to ask for when the pipeline plays at out: the
// configured one, else out when every plan has it, else
// DefaultSampleRate; and DefaultSampleRate for a rate the account's tier
// refused before.
func (c *Client) rate(out int) int {
	rate := c.opts.SampleRate
	if rate <= 0 {
		rate = out
		if !slices.Contains(everyTier, rate) {
			rate = DefaultSampleRate
		}
	}
	if c.tierLimited.Load() && !slices.Contains(everyTier, rate) {
		rate = DefaultSampleRate
	}
	return rate
}

// tierRefusal reports whether err is ElevenLabs refusing an output format
// the account's plan does not include: HTTP 403 (the answer, or the
// refused websocket handshake) with status subscription_required, or a
// 403 or policy close (1008) whose message names the format or the tier.
func tierRefusal(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.Code == "subscription_required" {
		return true
	}
	if ae.StatusCode != http.StatusForbidden && ae.CloseCode != 1008 {
		return false
	}
	msg := strings.ToLower(ae.Message)
	return strings.Contains(msg, "output format") || strings.Contains(msg, "output_format") || strings.Contains(msg, " tier")
}

// maxTextBytes bounds one request's text (the flash models take 40,000
// characters).
const maxTextBytes = 40000

// maxBackoff caps the wait between retries.
const maxBackoff = 4 * time.Second

// errStopped reports that the consumer stopped iterating.
var errStopped = errors.New("elevenlabs: consumer stopped")

// Synthesize implements tts.Synthesizer: it speaks req.Text and yields the
// PCM and the word timestamps as they arrive. Over the websocket it opens
// a context named req.ContextID, sends the text flushed, and closes the
// context once the alignment has covered the text; when ctx ends or the
// consumer stops, it closes the context at once and drops what still
// comes for it. Over HTTP, ending ctx closes the request.
func (c *Client) Synthesize(ctx context.Context, req tts.Request) iter.Seq2[tts.Chunk, error] {
	return func(yield func(tts.Chunk, error) bool) {
		if c.opts.VoiceID == "" {
			yield(tts.Chunk{}, errors.New("elevenlabs: no voice: set Options.VoiceID or ELEVENLABS_VOICE_ID"))
			return
		}
		if len(req.Text) > maxTextBytes {
			yield(tts.Chunk{}, fmt.Errorf("elevenlabs: text of %d bytes is over the limit of %d", len(req.Text), maxTextBytes))
			return
		}
		text := strings.TrimSpace(req.Text)
		if text == "" {
			return
		}
		if r := c.opts.SampleRate; r > 0 && !supported(r) {
			yield(tts.Chunk{}, fmt.Errorf("elevenlabs: no PCM output at %d Hz (it has %v)", r, rates))
			return
		}
		rate := c.rate(req.SampleRate)
		ctxID := req.ContextID
		if ctxID == "" {
			ctxID = fmt.Sprintf("framewire-%d", frames.NextID())
		}
		backoff := c.opts.RetryBackoff
		for attempt := 0; ; attempt++ {
			var started bool
			var err error
			if c.opts.Transport == HTTP {
				started, err = c.streamHTTP(ctx, text, rate, yield)
			} else {
				started, err = c.generate(ctx, text, ctxID, rate, yield)
			}
			if err == nil || ctx.Err() != nil || errors.Is(err, errStopped) {
				return
			}
			if !started && rate != DefaultSampleRate && tierRefusal(err) {
				// Asked again at a rate every plan has, at once: this is
				// not a retry of the same request. It cannot repeat, as
				// the new rate is never refused for the tier.
				c.tierLimited.Store(true)
				c.opts.Logger.Warn("elevenlabs: the account's plan has no PCM at this rate; using the default rate, resampled",
					zap.Int("refused_rate", rate), zap.Int("rate", DefaultSampleRate), zap.Error(err))
				rate = DefaultSampleRate
				attempt--
				continue
			}
			if started || !retryable(err) || attempt >= c.opts.MaxRetries {
				yield(tts.Chunk{}, err)
				return
			}
			wait := backoff
			var ae *APIError
			if errors.As(err, &ae) && ae.RetryAfter > 0 {
				wait = ae.RetryAfter
			}
			c.opts.Logger.Warn("elevenlabs: retrying", zap.Error(err), zap.Int("attempt", attempt+1), zap.Duration("wait", min(wait, maxBackoff)))
			t := time.NewTimer(min(wait, maxBackoff))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}
}

// connError marks a failure of the connection itself, which a new
// connection may fix.
type connError struct{ error }

func (e *connError) Unwrap() error { return e.error }

// Category implements [frames.Categorizer]: connection failures are
// transient.
func (e *connError) Category() frames.ErrorCategory { return frames.ErrorTransient }

// retryable reports whether a request that failed with err before any
// audio is worth another attempt: a dropped or refused connection, a rate
// limit, a busy or failing server. Timeouts are not retried: the time is
// spent.
func retryable(err error) bool {
	var ce *connError
	if errors.As(err, &ce) {
		return true
	}
	var ae *APIError
	return errors.As(err, &ae) && ae.Category() == frames.ErrorTransient
}

// The client's messages on the websocket.
type (
	initMessage struct {
		Text             string            `json:"text"`
		ContextID        string            `json:"context_id"`
		VoiceSettings    *VoiceSettings    `json:"voice_settings,omitempty"`
		GenerationConfig *generationConfig `json:"generation_config,omitempty"`
	}
	generationConfig struct {
		ChunkLengthSchedule []int `json:"chunk_length_schedule"`
	}
	textMessage struct {
		Text      string `json:"text"`
		ContextID string `json:"context_id"`
		Flush     bool   `json:"flush"`
	}
	closeMessage struct {
		ContextID    string `json:"context_id"`
		CloseContext bool   `json:"close_context"`
	}
	// httpBody is the HTTP transport's request body.
	httpBody struct {
		Text          string         `json:"text"`
		ModelID       string         `json:"model_id"`
		LanguageCode  string         `json:"language_code,omitempty"`
		VoiceSettings *VoiceSettings `json:"voice_settings,omitempty"`
	}
)

// openMessages encodes the messages that start a request on the
// websocket: the context's first message (a single space, with the voice
// settings and generation config), then the text, ending in a space as
// ElevenLabs asks, flushed so that it is spoken whole at once.
func (c *Client) openMessages(text, ctxID string) (open, body []byte, err error) {
	first := initMessage{Text: " ", ContextID: ctxID, VoiceSettings: c.opts.VoiceSettings}
	if len(c.opts.ChunkLengthSchedule) > 0 {
		first.GenerationConfig = &generationConfig{ChunkLengthSchedule: c.opts.ChunkLengthSchedule}
	}
	if open, err = json.Marshal(first); err != nil {
		return nil, nil, fmt.Errorf("elevenlabs: encoding the request: %w", err)
	}
	if body, err = json.Marshal(textMessage{Text: text + " ", ContextID: ctxID, Flush: true}); err != nil {
		return nil, nil, fmt.Errorf("elevenlabs: encoding the request: %w", err)
	}
	return open, body, nil
}

// httpRequestBody encodes the HTTP transport's request body.
func (c *Client) httpRequestBody(text string) ([]byte, error) {
	b, err := json.Marshal(httpBody{Text: text, ModelID: c.opts.Model, LanguageCode: c.opts.LanguageCode, VoiceSettings: c.opts.VoiceSettings})
	if err != nil {
		return nil, fmt.Errorf("elevenlabs: encoding the request: %w", err)
	}
	return b, nil
}
