package assemblyai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when the options leave a field empty.
const (
	// DefaultBaseURL is AssemblyAI's streaming host; the EU one is
	// wss://streaming.eu.assemblyai.com.
	DefaultBaseURL = "wss://streaming.assemblyai.com"
	// DefaultModel is the speech_model of a session: the fastest English
	// model. "universal-streaming-multilingual", "u3-rt-pro" and
	// "whisper-rt" are the others.
	DefaultModel = "universal-streaming-english"
	// DefaultChunk is how much audio one binary message carries; AssemblyAI
	// accepts 50 ms to 1 s and recommends about 50 ms.
	DefaultChunk = 50 * time.Millisecond
)

// The bounds AssemblyAI sets on one audio message.
const (
	minChunk = 50 * time.Millisecond
	maxChunk = time.Second
)

// wsPath is the endpoint under the base URL.
const wsPath = "/v3/ws"

// TurnDetection tunes AssemblyAI's own end-of-turn detection. Zero fields
// leave the server's defaults (0.4, 400 ms, 1280 ms).
type TurnDetection struct {
	// EndOfTurnConfidence is the confidence (0 to 1) above which a pause
	// ends the turn (end_of_turn_confidence_threshold).
	EndOfTurnConfidence float64
	// MinTurnSilence is the silence that ends a turn when the model is
	// confident (min_turn_silence, formerly
	// min_end_of_turn_silence_when_confident).
	MinTurnSilence time.Duration
	// MaxTurnSilence is the silence that ends a turn regardless of
	// confidence (max_turn_silence).
	MaxTurnSilence time.Duration
}

// set writes the non-zero fields to q.
func (td TurnDetection) set(q url.Values) {
	if td.EndOfTurnConfidence > 0 {
		q.Set("end_of_turn_confidence_threshold", strconv.FormatFloat(td.EndOfTurnConfidence, 'f', -1, 64))
	}
	if td.MinTurnSilence > 0 {
		q.Set("min_turn_silence", strconv.FormatInt(td.MinTurnSilence.Milliseconds(), 10))
	}
	if td.MaxTurnSilence > 0 {
		q.Set("max_turn_silence", strconv.FormatInt(td.MaxTurnSilence.Milliseconds(), 10))
	}
}

// Options configure a [Client]. The zero value uses $ASSEMBLYAI_API_KEY
// against $ASSEMBLYAI_BASE_URL or DefaultBaseURL, with DefaultModel and
// formatted final turns.
type Options struct {
	// APIKey authenticates (sent as the Authorization header). Default:
	// $ASSEMBLYAI_API_KEY.
	APIKey string
	// Token is a temporary streaming token, sent as the token query
	// parameter instead of the key: for clients that must not hold the key.
	Token string
	// BaseURL is the streaming host, wss:// (or ws:// for a local
	// stand-in; https:// and http:// are mapped to them); /v3/ws is added
	// unless it ends with it. Default: $ASSEMBLYAI_BASE_URL, else
	// DefaultBaseURL.
	BaseURL string
	// Model is the speech_model query parameter. Default: DefaultModel.
	Model string
	// NoFormatTurns asks for final turns as the model hears them, without
	// punctuation, casing and number formatting (format_turns=false). An
	// LLM does not need the formatting; it costs a little latency.
	NoFormatTurns bool
	// LanguageDetection reports the language of each turn (multilingual
	// model only).
	LanguageDetection bool
	// TurnDetection tunes the server's end-of-turn detection.
	TurnDetection TurnDetection
	// Keyterms boost recognition of these words and phrases
	// (keyterms_prompt).
	Keyterms []string
	// InactivityTimeout, when set, has the server end a session that
	// received no audio for that long (5 s to 1 h, whole seconds).
	InactivityTimeout time.Duration
	// Extra query parameters, added as they are (they win).
	Extra url.Values
	// Chunk is how much audio one binary message carries: the client
	// gathers the pipeline's audio frames into messages of this length, as
	// AssemblyAI rejects messages under 50 ms. Default: DefaultChunk;
	// clamped to 50 ms..1 s.
	Chunk time.Duration
	// HTTPClient dials the websocket. Default: a client whose dials and
	// TLS handshakes are bounded by Timeouts.Connect.
	HTTPClient *http.Client
	// Timeouts bound a session's phases: Connect the dial and the
	// websocket handshake, FirstByte the wait from the open socket to the
	// server's Begin message, Idle how long the server may take to show
	// it is alive when asked: each write to the socket, and the answer to
	// the ping sent with each keep-alive on a quiet session (AssemblyAI
	// sends nothing while no one speaks, so its silence is no bound).
	// Defaults: upstream's SpeechTimeouts, 10s, 10s, 20s; a negative field
	// disables that bound. A bound that runs out fails the connection or
	// the session with a transient error, so stt.Streaming opens it again
	// (the client has no retries of its own).
	Timeouts upstream.Timeouts
}

// Client opens AssemblyAI streaming sessions. It implements stt.Streamer
// and is safe for concurrent use.
type Client struct {
	opts Options
	url  string // the endpoint, without the query
}

var _ stt.Streamer = (*Client)(nil)

// New returns a client for o, filling what o leaves empty from the
// environment (ASSEMBLYAI_API_KEY, ASSEMBLYAI_BASE_URL) and the defaults.
func New(o Options) *Client {
	if o.APIKey == "" {
		o.APIKey = os.Getenv("ASSEMBLYAI_API_KEY")
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("ASSEMBLYAI_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Chunk <= 0 {
		o.Chunk = DefaultChunk
	}
	o.Chunk = min(max(o.Chunk, minChunk), maxChunk)
	o.Timeouts = o.Timeouts.Or(llmhttp.SpeechTimeouts())
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: llmhttp.Transport(o.Timeouts)}
	}
	return &Client{opts: o, url: endpoint(o.BaseURL)}
}

// endpoint turns a base URL into the websocket endpoint.
func endpoint(base string) string {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + u[len("https://"):]
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + u[len("http://"):]
	case !strings.HasPrefix(u, "wss://") && !strings.HasPrefix(u, "ws://"):
		u = "wss://" + u
	}
	if !strings.HasSuffix(u, wsPath) {
		u += wsPath
	}
	return u
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// URL returns the endpoint sessions dial, without the query.
func (c *Client) URL() string { return c.url }

// Query returns the query parameters of a session for f.
func (c *Client) Query(f stt.Format) url.Values {
	o := c.opts
	q := url.Values{}
	q.Set("speech_model", o.Model)
	q.Set("sample_rate", strconv.Itoa(f.SampleRate))
	q.Set("encoding", "pcm_s16le")
	q.Set("format_turns", strconv.FormatBool(!o.NoFormatTurns))
	if o.LanguageDetection {
		q.Set("language_detection", "true")
	}
	o.TurnDetection.set(q)
	if len(o.Keyterms) > 0 {
		// A JSON array, as the API reads list parameters.
		b, _ := json.Marshal(o.Keyterms) // []string always marshals
		q.Set("keyterms_prompt", string(b))
	}
	if o.InactivityTimeout > 0 {
		secs := min(max(int64(o.InactivityTimeout/time.Second), 5), 3600)
		q.Set("inactivity_timeout", strconv.FormatInt(secs, 10))
	}
	if o.Token != "" {
		q.Set("token", o.Token)
	}
	for k, vs := range o.Extra {
		q[k] = append([]string(nil), vs...)
	}
	return q
}

// maxMessageBytes bounds one message from the server.
const maxMessageBytes = 1 << 20

// Connect implements stt.Streamer: it opens a session for mono audio in f
// and waits for the server's Begin message, so credentials and parameters
// the server refuses fail here, with a permanent error. The stream it
// returns is a [*Session].
func (c *Client) Connect(ctx context.Context, f stt.Format) (stt.Stream, error) {
	if f.SampleRate <= 0 {
		return nil, errors.New("assemblyai: no sample rate")
	}
	if f.Channels > 1 {
		return nil, fmt.Errorf("assemblyai: %d channels; the stream takes mono audio", f.Channels)
	}
	u := c.url
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	q := c.Query(f)
	u += sep + q.Encode()
	// Extra may have changed format_turns: what the server is asked for
	// decides which end of a turn is final.
	formatTurns := q.Get("format_turns") == "true"
	h := http.Header{}
	if c.opts.APIKey != "" && c.opts.Token == "" {
		h.Set("Authorization", c.opts.APIKey)
	}
	t := c.opts.Timeouts
	dctx, cancel := withBound(ctx, t.Connect)
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: c.opts.HTTPClient, HTTPHeader: h})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if dctx.Err() != nil {
			return nil, &llmhttp.TimeoutError{Provider: "assemblyai", Phase: llmhttp.PhaseConnect, After: t.Connect}
		}
		return nil, dialError(err, resp)
	}
	ws.SetReadLimit(maxMessageBytes)
	s := newSession(ws, formatTurns, t.Idle, pcmBytes(f.SampleRate, c.opts.Chunk), pcmBytes(f.SampleRate, minChunk))
	bctx, cancel := withBound(ctx, t.FirstByte)
	defer cancel()
	if err := s.begin(bctx); err != nil {
		_ = s.Abort()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if bctx.Err() != nil {
			return nil, &transient{fmt.Errorf("assemblyai: no Begin message within %v", t.FirstByte)}
		}
		return nil, err
	}
	return s, nil
}

// withBound returns ctx bounded by d, or ctx itself for a disabled
// (negative) bound.
func withBound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// pcmBytes is the size of d of mono 16-bit audio at rate.
func pcmBytes(rate int, d time.Duration) int {
	return 2 * int(int64(rate)*int64(d)/int64(time.Second))
}

// transient is a failure that a new session may not meet.
type transient struct{ error }

func (e *transient) Unwrap() error { return e.error }

// Category implements [frames.Categorizer].
func (e *transient) Category() frames.ErrorCategory { return frames.ErrorTransient }

// HandshakeError is a connection refused with an HTTP status before the
// websocket opened.
type HandshakeError struct {
	// StatusCode is the HTTP status of the refusal.
	StatusCode int
	// Message is the server's error text, shortened.
	Message string
}

// Error implements error.
func (e *HandshakeError) Error() string {
	s := fmt.Sprintf("assemblyai: connection refused: HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Category implements [frames.Categorizer]: bad credentials and bad
// parameters (401, 403, 400, 422) are permanent, 429 and 5xx transient.
func (e *HandshakeError) Category() frames.ErrorCategory {
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden ||
		e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusUnprocessableEntity:
		return frames.ErrorPermanent
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500:
		return frames.ErrorTransient
	}
	return frames.ErrorUnknown
}

func dialError(err error, resp *http.Response) error {
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return &transient{fmt.Errorf("assemblyai: connecting: %w", err)}
	}
	e := &HandshakeError{StatusCode: resp.StatusCode}
	if resp.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		e.Message = refusalMessage(body)
	}
	return e
}

// maxRefusal bounds the server's text in a HandshakeError.
const maxRefusal = 200

// refusalMessage reads a refusal body: {"error": "..."} (AssemblyAI's
// error shape), else plain text; either is shortened.
func refusalMessage(body []byte) string {
	var b struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	s := ""
	if json.Unmarshal(body, &b) == nil {
		s = b.Error
		if s == "" {
			s = b.Message
		}
	} else {
		s = string(body)
	}
	return shorten(strings.TrimSpace(s), maxRefusal)
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
