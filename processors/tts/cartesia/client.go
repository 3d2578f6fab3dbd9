package cartesia

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
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/wsmux"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when the options leave a field empty. The model and API
// version are the ones Pipecat's Cartesia service uses.
const (
	DefaultURL      = "wss://api.cartesia.ai/tts/websocket"
	DefaultVersion  = "2026-03-01"
	DefaultModel    = "sonic-3.5"
	DefaultLanguage = "en"
)

// Options configure a [Client]. VoiceID is required; the rest defaults.
type Options struct {
	// APIKey authenticates (sent as the api_key query parameter, as
	// Cartesia's websocket expects). Default: $CARTESIA_API_KEY.
	APIKey string
	// VoiceID is the id of the voice to speak with. Required.
	VoiceID string
	// Model names the model. Default: DefaultModel.
	Model string
	// Language is the language of the text. Default: DefaultLanguage.
	Language string
	// Version is the Cartesia-Version date. Default: DefaultVersion.
	Version string
	// URL is the websocket endpoint. Default: DefaultURL.
	URL string
	// SampleRate is the rate requested from Cartesia; 0 asks for the
	// pipeline's output rate, which spares resampling.
	SampleRate int
	// Extra fields are merged into every generation request (for example
	// "generation_config" or "max_buffer_delay_ms"); they win.
	Extra map[string]any
	// HTTP holds the client that dials the websocket, the bounds and the
	// retries. Timeouts bound the websocket handshake (Connect), the wait
	// from a request to its first message (FirstByte: the first audio
	// chunk or timestamps) and the silence between two messages of a
	// request while the client waits (Idle); defaults: upstream's
	// SpeechTimeouts, 10s, 10s, 20s. A bound that runs out fails the
	// request with a transient *upstream.TimeoutError such as "cartesia:
	// no first byte within 10s" (not retried); when nothing at all came
	// over the connection meanwhile, the connection is closed too, and the
	// next request opens a new one. A request that failed before any audio
	// (the connection could not be opened, or dropped) is retried on a new
	// connection MaxRetries times (default 2), after RetryBackoff (default
	// 250ms, doubled after each, up to 4s).
	upstream.HTTP
	// Logger receives connection events. Default: none.
	Logger *zap.Logger
}

// Client speaks through Cartesia's websocket API with word timestamps. It
// keeps one connection and multiplexes requests over it by context_id;
// the connection is opened on first use (or by Warm), and opened again
// after it drops. It implements tts.Synthesizer, tts.WordTimer, tts.Warmer
// and io.Closer, and is safe for concurrent use.
type Client struct {
	opts Options
	url  string

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
)

// New returns a client for o.
func New(o Options) *Client {
	if o.APIKey == "" {
		o.APIKey = os.Getenv("CARTESIA_API_KEY")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Language == "" {
		o.Language = DefaultLanguage
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.URL == "" {
		o.URL = DefaultURL
	}
	o.HTTP = llmhttp.Resolve(o.HTTP, llmhttp.SpeechTimeouts(), 250*time.Millisecond)
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	q := url.Values{"api_key": {o.APIKey}, "cartesia_version": {o.Version}}
	sep := "?"
	if strings.Contains(o.URL, "?") {
		sep = "&"
	}
	return &Client{opts: o, url: o.URL + sep + q.Encode()}
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// WordTimestamps implements tts.WordTimer: Cartesia reports when each
// word starts.
func (c *Client) WordTimestamps() bool { return true }

// Warm implements tts.Warmer: it opens the connection ahead of the first
// request.
func (c *Client) Warm(ctx context.Context) error {
	_, err := c.connection(ctx)
	return err
}

// Close implements io.Closer: it closes the connection, if any. A later
// request opens a new one.
func (c *Client) Close() error {
	c.mu.Lock()
	cn := c.conn
	c.conn = nil
	c.closes++
	c.mu.Unlock()
	if cn == nil {
		return nil
	}
	cn.Close(websocket.StatusNormalClosure, "")
	return nil
}

// maxBackoff caps the wait between retries.
const maxBackoff = 4 * time.Second

// Synthesize implements tts.Synthesizer: it sends one generation request
// (context_id = req.ContextID, add_timestamps on) and yields the audio
// chunks and word timestamps as they arrive, until the done message. When
// ctx ends it sends a cancel for the context and returns.
func (c *Client) Synthesize(ctx context.Context, req tts.Request) iter.Seq2[tts.Chunk, error] {
	return func(yield func(tts.Chunk, error) bool) {
		if c.opts.VoiceID == "" {
			yield(tts.Chunk{}, errors.New("cartesia: no voice: set Options.VoiceID"))
			return
		}
		rate := c.opts.SampleRate
		if rate <= 0 {
			rate = req.SampleRate
		}
		if rate <= 0 {
			rate = 24000
		}
		ctxID := req.ContextID
		if ctxID == "" {
			ctxID = fmt.Sprintf("framewire-%d", frames.NextID())
		}
		msg, err := c.request(req.Text, ctxID, rate)
		if err != nil {
			yield(tts.Chunk{}, err)
			return
		}
		backoff := c.opts.RetryBackoff
		for attempt := 0; ; attempt++ {
			started, err := c.generate(ctx, msg, ctxID, rate, yield)
			if err == nil || ctx.Err() != nil || errors.Is(err, errStopped) {
				return
			}
			if started || !retryable(err) || attempt >= c.opts.MaxRetries {
				yield(tts.Chunk{}, err)
				return
			}
			c.opts.Logger.Warn("cartesia: retrying on a new connection", zap.Error(err), zap.Int("attempt", attempt+1))
			t := time.NewTimer(backoff)
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

// errStopped reports that the consumer stopped iterating.
var errStopped = errors.New("cartesia: consumer stopped")

// generate runs one attempt of a request. started reports whether anything
// reached the consumer (then the request cannot be retried).
func (c *Client) generate(ctx context.Context, msg []byte, ctxID string, rate int, yield func(tts.Chunk, error) bool) (started bool, err error) {
	cn, err := c.connection(ctx)
	if err != nil {
		return false, err
	}
	inbox := cn.Register(ctxID)
	defer cn.Unregister(ctxID)
	if err := cn.Write(ctx, msg); err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		cn.Close(websocket.StatusInternalError, "write failed")
		return false, &connError{fmt.Errorf("cartesia: sending the request: %w", err)}
	}
	var audio []byte
	// The first message must come within the first-byte bound of the
	// request, each later one within the idle bound of the client asking
	// for it (after the consumer took the one before).
	phase := llmhttp.PhaseFirstByte
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var expired <-chan time.Time
	arm := func() {
		if d := c.opts.Timeouts.Bound(phase); d > 0 {
			timer.Reset(d)
			expired = timer.C
		} else {
			timer.Stop()
			expired = nil
		}
	}
	arm()
	for {
		select {
		case <-ctx.Done():
			cn.cancel(ctxID)
			return started, nil
		case <-expired:
			bound := c.opts.Timeouts.Bound(phase)
			c.expire(cn, ctxID, bound)
			return started, &llmhttp.TimeoutError{Provider: "cartesia", Phase: phase, After: bound}
		case m, ok := <-inbox:
			if !ok {
				return started, &connError{fmt.Errorf("cartesia: connection lost during the generation: %w", cn.failure())}
			}
			phase = llmhttp.PhaseIdle
			arm()
			switch m.Type {
			case "chunk":
				audio, err = m.appendAudio(audio[:0])
				if err != nil {
					return started, err
				}
				if len(audio) == 0 {
					continue
				}
				started = true
				if !yield(tts.Chunk{Audio: audio, SampleRate: rate}, nil) {
					cn.cancel(ctxID)
					return started, errStopped
				}
			case "timestamps":
				words := m.words()
				if len(words) == 0 {
					continue
				}
				started = true
				if !yield(tts.Chunk{Words: words}, nil) {
					cn.cancel(ctxID)
					return started, errStopped
				}
			case "error":
				return started, m.apiError()
			case "done":
				return started, nil
			}
			if m.Done {
				return started, nil
			}
			arm() // from now: the consumer's time does not count
		}
	}
}

// expire ends a request whose bound ran out. When nothing came over the
// connection during the bound either, the connection is taken for dead
// and closed at once (its other requests fail, and are retried if they
// had no audio yet); otherwise only this request is cancelled.
func (c *Client) expire(cn *conn, ctxID string, bound time.Duration) {
	if cn.silentFor() < bound {
		cn.cancel(ctxID)
		return
	}
	c.opts.Logger.Warn("cartesia: no answer in time; closing the connection", zap.Duration("bound", bound))
	cn.Unregister(ctxID)
	c.mu.Lock()
	if c.conn == cn {
		c.conn = nil
	}
	c.mu.Unlock()
	cn.Abort()
}

// request encodes a generation request.
func (c *Client) request(text, ctxID string, rate int) ([]byte, error) {
	body := map[string]any{
		"model_id":   c.opts.Model,
		"transcript": text,
		"voice":      map[string]any{"mode": "id", "id": c.opts.VoiceID},
		"language":   c.opts.Language,
		"context_id": ctxID,
		"output_format": map[string]any{
			"container": "raw", "encoding": "pcm_s16le", "sample_rate": rate,
		},
		"add_timestamps": true,
		"continue":       false,
	}
	for k, v := range c.opts.Extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("cartesia: encoding the request: %w", err)
	}
	return b, nil
}

// connection returns the open connection, dialling one if needed.
func (c *Client) connection(ctx context.Context) (*conn, error) {
	if cn := c.current(); cn != nil {
		return cn, nil
	}
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	if cn := c.current(); cn != nil {
		return cn, nil
	}
	c.mu.Lock()
	closes := c.closes
	c.mu.Unlock()
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d := c.opts.Timeouts.Connect; d > 0 {
		dctx, cancel = context.WithTimeoutCause(ctx, d, &llmhttp.TimeoutError{Provider: "cartesia", Phase: llmhttp.PhaseConnect, After: d})
		defer cancel()
	}
	ws, resp, err := websocket.Dial(dctx, c.url, &websocket.DialOptions{HTTPClient: c.opts.HTTPClient})
	if err != nil {
		var te *llmhttp.TimeoutError
		if errors.As(context.Cause(dctx), &te) && ctx.Err() == nil {
			return nil, te
		}
		return nil, dialError(err, resp)
	}
	ws.SetReadLimit(maxMessageBytes)
	cn := newConn(ctx, ws, c.opts.Logger)
	c.mu.Lock()
	if c.closes != closes {
		c.mu.Unlock()
		cn.Abort()
		return nil, errors.New("cartesia: the client was closed while connecting")
	}
	c.conn = cn
	c.mu.Unlock()
	return cn, nil
}

// current returns the connection if it is still open.
func (c *Client) current() *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && c.conn.Dead() {
		c.conn = nil
	}
	return c.conn
}

// maxMessageBytes bounds one message from the server (a chunk of base64
// audio is far smaller).
const maxMessageBytes = 8 << 20

// connError marks a failure of the connection itself, which a new
// connection may fix.
type connError struct{ error }

func (e *connError) Unwrap() error { return e.error }

// Category implements [frames.Categorizer]: connection failures are transient.
func (e *connError) Category() frames.ErrorCategory { return frames.ErrorTransient }

func retryable(err error) bool {
	var ce *connError
	if errors.As(err, &ce) {
		return true
	}
	var he *HandshakeError
	return errors.As(err, &he) && he.Category() == frames.ErrorTransient
}

// HandshakeError is a refused websocket handshake.
type HandshakeError struct {
	// StatusCode is the HTTP status of the refusal.
	StatusCode int
	// Body is the start of the answer's body.
	Body string
}

// Error implements error.
func (e *HandshakeError) Error() string {
	s := fmt.Sprintf("cartesia: handshake refused: HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// Category implements [frames.Categorizer]: bad credentials are permanent, 429
// and 5xx transient.
func (e *HandshakeError) Category() frames.ErrorCategory {
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return frames.ErrorPermanent
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500:
		return frames.ErrorTransient
	}
	return frames.ErrorUnknown
}

func dialError(err error, resp *http.Response) error {
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		var body []byte
		if resp.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
		}
		return &HandshakeError{StatusCode: resp.StatusCode, Body: errorText(body)}
	}
	return &connError{fmt.Errorf("cartesia: connecting: %w", err)}
}

// errorText extracts a message from an error body: a JSON object's
// message, error, title or detail field, else the trimmed text.
func errorText(body []byte) string {
	var obj map[string]any
	if json.Unmarshal(body, &obj) == nil {
		for _, k := range []string{"message", "error", "title", "detail"} {
			if s, ok := obj[k].(string); ok && s != "" {
				return s
			}
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// conn is the shared websocket connection, with Cartesia's control
// message and error words on top.
type conn struct {
	*wsmux.Conn[message]
	log *zap.Logger
	// silentFor is Conn.SilentFor; a test stands in for traffic with it.
	silentFor func() time.Duration
}

// newConn starts the connection's reader on ws.
func newConn(ctx context.Context, ws *websocket.Conn, log *zap.Logger) *conn {
	mc := wsmux.New(ctx, ws, wsmux.Options[message]{Route: router(), Name: "cartesia", Logger: log})
	return &conn{Conn: mc, log: log, silentFor: mc.SilentFor}
}

// router reads a server message for the connection's reader: it goes to
// the request of its context_id; an error without one goes to every
// request.
func router() wsmux.Route[message] {
	var id []byte // the reader's scratch: no allocation per message
	return func(data []byte) (message, []byte, bool, error) {
		m, err := parseMessage(data)
		if err != nil {
			return message{}, nil, false, err
		}
		id = append(id[:0], m.ContextID...)
		return m, id, m.ContextID == "" && m.Type == "error", nil
	}
}

// failure is why the connection ended.
func (cn *conn) failure() error {
	if err := cn.Err(); err != nil {
		return closeError(err)
	}
	return errors.New("connection closed")
}

// cancel asks the server to stop a context, best effort and briefly.
func (cn *conn) cancel(id string) {
	cn.Unregister(id)
	msg, _ := json.Marshal(map[string]any{"context_id": id, "cancel": true})
	if err := cn.WriteBrief(msg); err != nil {
		cn.log.Debug("cartesia: sending cancel failed", zap.String("context_id", id), zap.Error(err))
	}
}

func closeError(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Reason != "" {
			return fmt.Errorf("closed by the server with status %d (%s)", int(ce.Code), ce.Reason)
		}
		return fmt.Errorf("closed by the server with status %d", int(ce.Code))
	}
	return err
}
