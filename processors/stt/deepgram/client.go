package deepgram

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
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/upstream"
)

// Defaults used when the options leave a field empty (Pipecat's).
const (
	DefaultURL      = "wss://api.deepgram.com/v1/listen"
	DefaultModel    = "nova-3-general"
	DefaultLanguage = "en"
)

// Options configure a [Client]. The zero value uses $DEEPGRAM_API_KEY and
// Deepgram's nova-3 model in English with interim results and punctuation.
type Options struct {
	// APIKey authenticates ("Authorization: Token <key>"). Default:
	// $DEEPGRAM_API_KEY.
	APIKey string
	// URL is the websocket endpoint. Default: DefaultURL.
	URL string
	// Model is the model query parameter. Default: DefaultModel.
	Model string
	// Language is the language query parameter ("en", "en-US", or "multi"
	// for code-switching). Default: DefaultLanguage.
	Language string
	// NoInterimResults turns interim results off.
	NoInterimResults bool
	// NoPunctuate turns punctuation off.
	NoPunctuate bool
	// SmartFormat formats numbers, dates and the like.
	SmartFormat bool
	// Endpointing is the silence in milliseconds after which Deepgram
	// closes an utterance itself (speech_final); 0 leaves Deepgram's
	// default, negative turns it off.
	Endpointing int
	// UtteranceEndMS, when positive, asks for UtteranceEnd messages after
	// that many milliseconds without words.
	UtteranceEndMS int
	// VADEvents asks for SpeechStarted messages.
	VADEvents bool
	// Keyterms boost recognition of these terms (nova-3).
	Keyterms []string
	// Extra query parameters, added as they are (they win).
	Extra url.Values
	// HTTPClient dials the websocket. Default: a client whose dials and
	// TLS handshakes are bounded by the connect timeout.
	HTTPClient *http.Client
	// Timeouts bound the websocket handshake (Connect) and the silence of
	// the server while audio it has not answered is out: the first message
	// of a session must come within FirstByte of the first audio sent, and
	// each later one within Idle of the first audio sent after the message
	// before (Deepgram answers streamed audio with Results, empty ones for
	// silence, within a few seconds; keep-alives need no answer). Defaults:
	// upstream's SpeechTimeouts, 10s, 10s, 20s; a negative field disables
	// that bound. A bound that runs out closes the connection and ends the
	// session with a transient *upstream.TimeoutError such as "deepgram:
	// the stream stalled: nothing received for 20s", so stt.Streaming
	// reconnects. (The client has no retries of its own: stt.Streaming
	// opens a session that failed again, with its backoff.)
	Timeouts upstream.Timeouts
}

// Client opens Deepgram live sessions. It implements stt.Streamer and is
// safe for concurrent use.
type Client struct {
	opts Options
}

var _ stt.Streamer = (*Client)(nil)

// New returns a client for o.
func New(o Options) *Client {
	if o.APIKey == "" {
		o.APIKey = os.Getenv("DEEPGRAM_API_KEY")
	}
	if o.URL == "" {
		o.URL = DefaultURL
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Language == "" {
		o.Language = DefaultLanguage
	}
	o.Timeouts = o.Timeouts.Or(llmhttp.SpeechTimeouts())
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: llmhttp.Transport(o.Timeouts)}
	}
	return &Client{opts: o}
}

// Model implements [frames.Modeler].
func (c *Client) Model() string { return c.opts.Model }

// Query returns the query parameters of a session for f.
func (c *Client) Query(f stt.Format) url.Values {
	o := c.opts
	q := url.Values{}
	q.Set("model", o.Model)
	q.Set("language", o.Language)
	q.Set("encoding", "linear16")
	q.Set("sample_rate", strconv.Itoa(f.SampleRate))
	q.Set("channels", strconv.Itoa(max(1, f.Channels)))
	q.Set("interim_results", strconv.FormatBool(!o.NoInterimResults))
	q.Set("punctuate", strconv.FormatBool(!o.NoPunctuate))
	if o.SmartFormat {
		q.Set("smart_format", "true")
	}
	switch {
	case o.Endpointing > 0:
		q.Set("endpointing", strconv.Itoa(o.Endpointing))
	case o.Endpointing < 0:
		q.Set("endpointing", "false")
	}
	if o.UtteranceEndMS > 0 {
		q.Set("utterance_end_ms", strconv.Itoa(o.UtteranceEndMS))
	}
	if o.VADEvents {
		q.Set("vad_events", "true")
	}
	for _, k := range o.Keyterms {
		q.Add("keyterm", k)
	}
	for k, vs := range o.Extra {
		q[k] = append([]string(nil), vs...)
	}
	return q
}

// maxMessageBytes bounds one message from the server.
const maxMessageBytes = 4 << 20

// Connect implements stt.Streamer: it opens a session for audio in f.
func (c *Client) Connect(ctx context.Context, f stt.Format) (stt.Stream, error) {
	if f.SampleRate <= 0 {
		return nil, errors.New("deepgram: no sample rate")
	}
	u := c.opts.URL
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	u += sep + c.Query(f).Encode()
	h := http.Header{}
	if c.opts.APIKey != "" {
		h.Set("Authorization", "Token "+c.opts.APIKey)
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d := c.opts.Timeouts.Connect; d > 0 {
		dctx, cancel = context.WithTimeoutCause(ctx, d, &llmhttp.TimeoutError{Provider: "deepgram", Phase: llmhttp.PhaseConnect, After: d})
		defer cancel()
	}
	ws, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: c.opts.HTTPClient, HTTPHeader: h})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var te *llmhttp.TimeoutError
		if errors.As(context.Cause(dctx), &te) {
			return nil, te
		}
		return nil, dialError(err, resp)
	}
	ws.SetReadLimit(maxMessageBytes)
	s := &stream{ws: ws, t: c.opts.Timeouts}
	s.timer = time.AfterFunc(time.Hour, s.expire)
	s.timer.Stop()
	return s, nil
}

// stream is one live session.
type stream struct {
	ws *websocket.Conn
	t  upstream.Timeouts

	// The watch on the server: armed by the first audio sent after the
	// last message (or the session's start), disarmed by the next
	// message; when it fires the connection is closed and Recv returns
	// timedOut.
	mu       sync.Mutex
	timer    *time.Timer
	armed    bool
	heard    bool // a message came in this session
	timedOut *llmhttp.TimeoutError
}

// awaitAnswer arms the watch after audio went out, unless it is armed.
func (s *stream) awaitAnswer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed || s.timedOut != nil {
		return
	}
	if d := s.t.Bound(s.phase()); d > 0 {
		s.armed = true
		s.timer.Reset(d)
	}
}

// phase is the bound the watch runs: first byte until the session's first
// message, then idle. s.mu is held.
func (s *stream) phase() llmhttp.Phase {
	if s.heard {
		return llmhttp.PhaseIdle
	}
	return llmhttp.PhaseFirstByte
}

// answered disarms the watch: a message came.
func (s *stream) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heard = true
	s.armed = false
	s.timer.Stop()
}

// expire runs when the watch fires: the server left audio unanswered for
// the bound, so the connection is taken for dead and closed.
func (s *stream) expire() {
	s.mu.Lock()
	if !s.armed || s.timedOut != nil {
		s.mu.Unlock()
		return
	}
	p := s.phase()
	s.timedOut = &llmhttp.TimeoutError{Provider: "deepgram", Phase: p, After: s.t.Bound(p)}
	s.mu.Unlock()
	_ = s.ws.CloseNow()
}

// expired returns the timeout that closed the session, if any.
func (s *stream) expired() *llmhttp.TimeoutError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timedOut
}

var (
	msgFinalize    = []byte(`{"type":"Finalize"}`)
	msgKeepAlive   = []byte(`{"type":"KeepAlive"}`)
	msgCloseStream = []byte(`{"type":"CloseStream"}`)
)

// SendAudio implements stt.Stream. Empty audio is not sent: Deepgram
// reads an empty binary message as the end of the stream.
func (s *stream) SendAudio(ctx context.Context, pcm []byte) error {
	if len(pcm) == 0 {
		return nil
	}
	if err := s.ws.Write(ctx, websocket.MessageBinary, pcm); err != nil {
		if te := s.expired(); te != nil {
			return te
		}
		return err
	}
	s.awaitAnswer()
	return nil
}

// Finalize implements stt.Stream.
func (s *stream) Finalize(ctx context.Context) error {
	return s.ws.Write(ctx, websocket.MessageText, msgFinalize)
}

// KeepAlive implements stt.Stream.
func (s *stream) KeepAlive(ctx context.Context) error {
	return s.ws.Write(ctx, websocket.MessageText, msgKeepAlive)
}

// Close implements stt.Stream: CloseStream asks Deepgram to send its last
// results and the summary metadata, then close.
func (s *stream) Close(ctx context.Context) error {
	return s.ws.Write(ctx, websocket.MessageText, msgCloseStream)
}

// Abort implements stt.Stream.
func (s *stream) Abort() error {
	s.mu.Lock()
	s.armed = false
	s.timer.Stop()
	s.mu.Unlock()
	return s.ws.CloseNow()
}

// Recv implements stt.Stream. Messages it does not use (Metadata, unknown
// types, ones that do not parse) are skipped.
func (s *stream) Recv(ctx context.Context) (stt.Event, error) {
	for {
		typ, data, err := s.ws.Read(ctx)
		if err != nil {
			if te := s.expired(); te != nil {
				return stt.Event{}, te
			}
			return stt.Event{}, closeError(err)
		}
		s.answered()
		if typ != websocket.MessageText {
			continue
		}
		ev, ok, err := parseMessage(data)
		if err != nil || !ok {
			continue
		}
		return ev, nil
	}
}

// result is the part of a Results message the client uses.
type result struct {
	IsFinal      bool `json:"is_final"`
	SpeechFinal  bool `json:"speech_final"`
	FromFinalize bool `json:"from_finalize"`
	Channel      *struct {
		Alternatives []struct {
			Transcript string   `json:"transcript"`
			Languages  []string `json:"languages"`
		} `json:"alternatives"`
	} `json:"channel"`
}

// parseMessage turns a server message into an event; ok is false for
// messages that carry none (Metadata, unknown types).
func parseMessage(data []byte) (ev stt.Event, ok bool, err error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return stt.Event{}, false, fmt.Errorf("deepgram: bad message: %w", err)
	}
	switch head.Type {
	case "Results":
		var m result
		if err := json.Unmarshal(data, &m); err != nil {
			return stt.Event{}, false, fmt.Errorf("deepgram: bad Results message: %w", err)
		}
		if m.Channel == nil || len(m.Channel.Alternatives) == 0 {
			return stt.Event{}, false, errors.New("deepgram: Results without alternatives")
		}
		alt := m.Channel.Alternatives[0]
		ev = stt.Event{Kind: stt.EventInterim, Text: alt.Transcript}
		if m.IsFinal {
			ev.Kind = stt.EventFinal
			ev.Finalized = m.SpeechFinal || m.FromFinalize
		}
		if len(alt.Languages) > 0 {
			ev.Language = alt.Languages[0]
		}
		return ev, true, nil
	case "SpeechStarted":
		return stt.Event{Kind: stt.EventSpeechStarted}, true, nil
	case "UtteranceEnd":
		return stt.Event{Kind: stt.EventUtteranceEnd}, true, nil
	}
	return stt.Event{}, false, nil
}

// CloseError is a session Deepgram closed with an error status; Reason
// holds its error code (NET-0001: no audio within the timeout; DATA-0000:
// audio it cannot decode).
type CloseError struct {
	Code   int
	Reason string
}

// Error implements error.
func (e *CloseError) Error() string {
	s := fmt.Sprintf("deepgram: closed by the server with status %d", e.Code)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

// Category implements [frames.Categorizer]: a dropped session is transient.
func (e *CloseError) Category() frames.ErrorCategory { return frames.ErrorTransient }

// closeError maps the end of a session: a normal close is io.EOF.
func closeError(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == websocket.StatusNormalClosure {
			return io.EOF
		}
		return &CloseError{Code: int(ce.Code), Reason: ce.Reason}
	}
	return &transient{fmt.Errorf("deepgram: connection lost: %w", err)}
}

type transient struct{ error }

func (e *transient) Unwrap() error { return e.error }

// Category implements [frames.Categorizer].
func (e *transient) Category() frames.ErrorCategory { return frames.ErrorTransient }

// HandshakeError is a refused connection.
type HandshakeError struct {
	// StatusCode is the HTTP status of the refusal.
	StatusCode int
	// Code and Message come from Deepgram's error body (err_code, err_msg)
	// or its dg-error header.
	Code, Message string
	// RequestID is Deepgram's dg-request-id, for support.
	RequestID string
}

// Error implements error.
func (e *HandshakeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deepgram: connection refused: HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// Category implements [frames.Categorizer]: bad credentials and bad parameters
// (401, 403, 400) are permanent, 429 and 5xx transient.
func (e *HandshakeError) Category() frames.ErrorCategory {
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden || e.StatusCode == http.StatusBadRequest:
		return frames.ErrorPermanent
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500:
		return frames.ErrorTransient
	}
	return frames.ErrorUnknown
}

func dialError(err error, resp *http.Response) error {
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return &transient{fmt.Errorf("deepgram: connecting: %w", err)}
	}
	e := &HandshakeError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("dg-request-id")}
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
	}
	parseRefusal(e, body)
	if e.Message == "" {
		e.Message = resp.Header.Get("dg-error")
	}
	return e
}

// parseRefusal reads a refusal body: {"err_code","err_msg","request_id"}
// or {"category","message","details","request_id"}, else plain text.
func parseRefusal(e *HandshakeError, body []byte) {
	var b struct {
		ErrCode   string `json:"err_code"`
		ErrMsg    string `json:"err_msg"`
		Category  string `json:"category"`
		Message   string `json:"message"`
		Details   string `json:"details"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(body, &b) == nil {
		e.Code = first(b.ErrCode, b.Category)
		e.Message = first(b.ErrMsg, b.Message)
		if b.Details != "" && b.Details != e.Message {
			e.Message = strings.TrimSpace(e.Message + " " + b.Details)
		}
		if e.RequestID == "" {
			e.RequestID = b.RequestID
		}
		return
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	e.Message = s
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
