package llmhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/upstream"
)

// The bounds, phases and timeout error are package upstream's, which the
// clients' options show; these names keep the package's own code short.
type (
	// Timeouts is [upstream.Timeouts].
	Timeouts = upstream.Timeouts
	// Phase is [upstream.Phase].
	Phase = upstream.Phase
	// TimeoutError is [upstream.TimeoutError].
	TimeoutError = upstream.TimeoutError
)

// The phases of an exchange and the default bounds, from package upstream.
const (
	PhaseConnect   = upstream.PhaseConnect
	PhaseFirstByte = upstream.PhaseFirstByte
	PhaseIdle      = upstream.PhaseIdle

	DefaultConnectTimeout         = upstream.DefaultConnectTimeout
	DefaultFirstByteTimeout       = upstream.DefaultFirstByteTimeout
	DefaultIdleTimeout            = upstream.DefaultIdleTimeout
	DefaultSpeechFirstByteTimeout = upstream.DefaultSpeechFirstByteTimeout
	DefaultSpeechIdleTimeout      = upstream.DefaultSpeechIdleTimeout
)

// LLMTimeouts returns [upstream.LLMTimeouts]. [Request] fills zero fields
// from them.
func LLMTimeouts() Timeouts { return upstream.LLMTimeouts() }

// SpeechTimeouts returns [upstream.SpeechTimeouts].
func SpeechTimeouts() Timeouts { return upstream.SpeechTimeouts() }

func withDefaults(t Timeouts) Timeouts { return t.Or(LLMTimeouts()) }

// Resolve fills the zero fields of a client's [upstream.HTTP] the way
// every client does: the bounds from timeouts, the HTTP client from
// [Transport] of those bounds, [upstream.DefaultMaxRetries] and backoff;
// a negative MaxRetries becomes 0 (never) and a negative RetryBackoff 0
// (at once).
func Resolve(h upstream.HTTP, timeouts Timeouts, backoff time.Duration) upstream.HTTP {
	h.Timeouts = h.Timeouts.Or(timeouts)
	if h.HTTPClient == nil {
		h.HTTPClient = &http.Client{Transport: Transport(h.Timeouts)}
	}
	switch {
	case h.MaxRetries == 0:
		h.MaxRetries = upstream.DefaultMaxRetries
	case h.MaxRetries < 0:
		h.MaxRetries = 0
	}
	switch {
	case h.RetryBackoff == 0:
		h.RetryBackoff = backoff
	case h.RetryBackoff < 0:
		h.RetryBackoff = 0
	}
	return h
}

// RetryHinter is implemented by error answers that say how long to wait
// before retrying when the response has no Retry-After header (Gemini puts
// it in the error's details).
type RetryHinter interface {
	RetryAfter() time.Duration
}

// Request describes one POST whose answer is streamed.
type Request struct {
	// Provider starts error texts, such as "anthropic".
	Provider string
	// Client sends the request; nil means a client with no overall timeout.
	Client *http.Client
	// URL, Header and Body make the request; Body is resent on each retry.
	URL    string
	Header http.Header
	Body   []byte
	// Retries is how many times a request is retried after a connection
	// error or a retryable status (429, 5xx) before the first event.
	// Timeouts are not retried: the time is already spent.
	Retries int
	// Backoff is the wait before the first retry, doubling after each one
	// up to MaxBackoff, which also caps a Retry-After.
	Backoff, MaxBackoff time.Duration
	// Timeouts bound the exchange's phases; zero fields take the
	// [LLMTimeouts] defaults.
	Timeouts Timeouts
	// MaxLineBytes bounds one SSE line and one event ([Open] only).
	MaxLineBytes int
	// Failed turns a non-200 answer into the client's error; it must read
	// (with a bound) and close the body.
	Failed func(*http.Response) error
}

// Retryable reports whether an HTTP status is worth a retry: 429 and 5xx
// (Anthropic's 529 overloaded included).
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// ConnError is a request that failed before any answer: the connection
// could not be made or broke. A new attempt may succeed.
type ConnError struct{ err error }

// Error implements error.
func (e *ConnError) Error() string { return e.err.Error() }

// Unwrap returns the transport's error.
func (e *ConnError) Unwrap() error { return e.err }

// Category implements [frames.Categorizer]: a failed connection is
// transient.
func (e *ConnError) Category() frames.ErrorCategory { return frames.ErrorTransient }

// answer is a 200 answer under its watchdog: what [Stream] and [Body]
// share.
type answer struct {
	resp   *http.Response
	w      *watchdog
	parent context.Context // the caller's
	actx   context.Context // the attempt's, which the watchdog cancels
	stop   func() bool
}

// ended returns why the attempt ended early, or nil: the [TimeoutError]
// when a bound ran out, the caller's context error when it ended.
func (a *answer) ended() error {
	var te *TimeoutError
	if cause := context.Cause(a.actx); errors.As(cause, &te) {
		return te
	}
	return a.parent.Err()
}

func (a *answer) close() {
	a.stop()
	a.w.close()
	a.resp.Body.Close()
}

// Stream is the event stream of one successful answer: a [Reader] of its
// [Body], so the bounds apply to the reads from the network (one per
// buffer of events, not one per event). It is not safe for concurrent
// use; Close it when done.
type Stream struct {
	body Body
	rd   *Reader
}

// Body is the body of one successful answer, read under the first-byte and
// idle bounds: the first byte must come within Timeouts.FirstByte of the
// connection, and each later one within Timeouts.Idle of the one before.
// It is not safe for concurrent use; Close it when done.
type Body struct {
	answer
}

// watchdog cancels an attempt's context when the current phase's bound
// runs out. Only time spent waiting on the server counts: a read from the
// network arms the idle bound ([watchdog.wait]) and its data disarms it
// ([watchdog.got]), so a consumer that is slow to ask for more is never
// taken for a silent server. Arming and disarming are atomic stores (the
// per-read cost); the timer, when it fires before the deadline, sleeps
// again until it.
type watchdog struct {
	provider string
	t        Timeouts
	cancel   context.CancelCauseFunc
	start    time.Time // the clock's origin for deadline

	mu       sync.Mutex // serialises phase changes, fire and close
	timer    *time.Timer
	closed   bool
	phase    atomic.Uint32
	deadline atomic.Int64 // since start; 0: not armed
}

func newWatchdog(provider string, t Timeouts, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{provider: provider, t: t, cancel: cancel, start: time.Now()}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.set(PhaseConnect)
	return w
}

// set starts phase p's bound now; w.mu is held.
func (w *watchdog) set(p Phase) {
	w.phase.Store(uint32(p))
	d := w.t.Bound(p)
	if d <= 0 {
		w.deadline.Store(0)
		w.timer.Stop()
		return
	}
	w.deadline.Store(int64(time.Since(w.start) + d))
	w.timer.Reset(d)
}

// enter starts phase p's bound unless p is already running.
func (w *watchdog) enter(p Phase) {
	if Phase(w.phase.Load()) == p {
		return
	}
	w.mu.Lock()
	if !w.closed && Phase(w.phase.Load()) != p {
		w.set(p)
	}
	w.mu.Unlock()
}

// wait arms the idle bound before a read; in the earlier phases their
// own bound keeps running.
func (w *watchdog) wait() {
	if Phase(w.phase.Load()) != PhaseIdle {
		return
	}
	if d := w.t.Idle; d > 0 {
		w.deadline.Store(int64(time.Since(w.start) + d))
	}
}

// got records that data came: the idle phase starts, disarmed until the
// next read.
func (w *watchdog) got() {
	if Phase(w.phase.Load()) == PhaseIdle {
		w.deadline.Store(0)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.phase.Store(uint32(PhaseIdle))
	w.deadline.Store(0)
	// The timer may be set for a longer first-byte bound: bring it within
	// one idle bound, so no later deadline is missed.
	if w.t.Idle > 0 {
		w.timer.Reset(w.t.Idle)
	} else {
		w.timer.Stop()
	}
}

func (w *watchdog) fire() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	p := Phase(w.phase.Load())
	dl := w.deadline.Load()
	if dl == 0 { // disarmed: look again within one bound
		if d := w.t.Bound(p); d > 0 {
			w.timer.Reset(d)
		}
		w.mu.Unlock()
		return
	}
	if left := time.Duration(dl) - time.Since(w.start); left > 0 {
		w.timer.Reset(left)
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	w.cancel(&TimeoutError{Provider: w.provider, Phase: p, After: w.t.Bound(p)})
}

func (w *watchdog) close() {
	w.mu.Lock()
	w.closed = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel(nil)
}

// Open posts r and returns the answer's event stream once the server
// answered 200 OK. Connection errors and retryable statuses are retried
// first, with backoff; a Retry-After header (or the error's [RetryHinter])
// sets the wait. When ctx ends, Open returns ctx.Err().
func Open(ctx context.Context, r *Request) (*Stream, error) {
	a, err := r.send(ctx)
	if err != nil {
		return nil, err
	}
	s := &Stream{body: Body{answer: *a}}
	s.rd = NewReader(&s.body, r.MaxLineBytes)
	return s, nil
}

// Send posts r like [Open] and returns the body of the 200 answer, read
// under the bounds, for answers that are not event streams (audio, a JSON
// transcription).
func Send(ctx context.Context, r *Request) (*Body, error) {
	a, err := r.send(ctx)
	if err != nil {
		return nil, err
	}
	return &Body{answer: *a}, nil
}

// send posts r with retries and returns the 200 answer.
func (r *Request) send(ctx context.Context) (*answer, error) {
	hc := r.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	t := withDefaults(r.Timeouts)
	backoff := r.Backoff
	for attempt := 0; ; attempt++ {
		a, retry, err := r.attempt(ctx, hc, t)
		if err == nil {
			return a, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if retry < 0 || attempt >= r.Retries {
			return nil, err
		}
		if retry == 0 {
			retry = backoff
		}
		timer := time.NewTimer(min(retry, r.MaxBackoff))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		backoff = min(2*backoff, r.MaxBackoff)
	}
}

// attempt sends the request once. retry is the wait the answer asked for
// before a retry (0: the backoff), or -1 when it must not be retried.
func (r *Request) attempt(ctx context.Context, hc *http.Client, t Timeouts) (a *answer, retry time.Duration, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	w := newWatchdog(r.Provider, t, cancel)
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { w.enter(PhaseFirstByte) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(actx, trace), http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		w.close()
		return nil, -1, fmt.Errorf("%s: building the request: %w", r.Provider, err)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	resp, err := hc.Do(req)
	if err != nil {
		cause := context.Cause(actx)
		w.close()
		var te *TimeoutError
		if errors.As(cause, &te) {
			return nil, -1, te
		}
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		return nil, 0, &ConnError{fmt.Errorf("%s: POST %s: %w", r.Provider, r.URL, err)}
	}
	w.enter(PhaseFirstByte) // a transport that reports no connection
	if resp.StatusCode != http.StatusOK {
		wait := ParseRetryAfter(resp.Header.Get("Retry-After"))
		err := r.Failed(resp)
		cause := context.Cause(actx)
		w.close()
		var te *TimeoutError
		if errors.As(cause, &te) {
			return nil, -1, te
		}
		if !Retryable(resp.StatusCode) {
			return nil, -1, err
		}
		var h RetryHinter
		if wait <= 0 && errors.As(err, &h) {
			wait = h.RetryAfter()
		}
		return nil, max(wait, 0), err
	}
	a = &answer{resp: resp, w: w, parent: ctx, actx: actx}
	// A read may sit in a blocked network read: close the body the moment
	// the attempt's context ends (cancelled, or a bound ran out).
	a.stop = context.AfterFunc(actx, func() { resp.Body.Close() })
	return a, 0, nil
}

// ContentType returns the answer's Content-Type header.
func (s *Stream) ContentType() string { return s.body.ContentType() }

// Header returns the answer's headers.
func (s *Stream) Header() http.Header { return s.body.Header() }

// Next returns the next event's data and type, valid until the next call,
// or io.EOF after the last one. When a bound ran out it returns the
// [TimeoutError]; when the request's context ended, its error.
func (s *Stream) Next() (data, event []byte, err error) {
	data, event, err = s.rd.Next()
	if err != nil {
		if e := s.body.ended(); e != nil {
			return nil, nil, e
		}
		if err == io.EOF {
			return nil, nil, io.EOF
		}
		return nil, nil, fmt.Errorf("%s: reading the stream: %w", s.body.w.provider, err)
	}
	return data, event, nil
}

// Close releases the answer: it stops the bounds and closes the body.
func (s *Stream) Close() { s.body.close() }

// ContentType returns the answer's Content-Type header.
func (b *Body) ContentType() string { return b.resp.Header.Get("Content-Type") }

// Header returns the answer's headers.
func (b *Body) Header() http.Header { return b.resp.Header }

// StatusCode returns the answer's status: 200.
func (b *Body) StatusCode() int { return b.resp.StatusCode }

// Read implements io.Reader. When a bound ran out it returns the
// [TimeoutError], when the request's context ended its error, and
// otherwise the transport's errors as they are (io.EOF at the end).
func (b *Body) Read(p []byte) (int, error) {
	b.w.wait()
	n, err := b.resp.Body.Read(p)
	if n > 0 {
		b.w.got()
	}
	if err != nil {
		if e := b.ended(); e != nil {
			err = e
		}
	}
	return n, err
}

// Close implements io.Closer: it stops the bounds and closes the body.
func (b *Body) Close() error {
	b.close()
	return nil
}

// ParseRetryAfter reads a Retry-After header: seconds or an HTTP date. It
// returns 0 or less when there is no usable wait.
func ParseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e6 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// Transport returns the transport of a client's default HTTP client:
// http.DefaultTransport's settings, with dialling and the TLS handshake
// each bounded by t.Connect and a quarter more (when t.Connect is
// positive). The request's own connect bound, which starts first and is
// what the caller sees, gives up on a connection that is not ready in
// time; these end the dial the transport keeps going in the background
// for a later request, so a server that accepts and never completes the
// handshake holds no connection for much longer than the bound.
//
// Clients with the same connect bound share one transport, as they would
// share http.DefaultTransport: its connections and TLS sessions are reused
// from one client (and one session) to the next.
func Transport(t Timeouts) *http.Transport {
	d := max(t.Connect, 0)
	if tr, ok := transports.Load(d); ok {
		return tr.(*http.Transport)
	}
	tr, _ := transports.LoadOrStore(d, newTransport(d))
	return tr.(*http.Transport)
}

// transports holds the shared transports by connect bound.
var transports sync.Map

func newTransport(d time.Duration) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if d > 0 {
		d += d / 4
		tr.DialContext = (&net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}).DialContext
		tr.TLSHandshakeTimeout = d
	}
	return tr
}
