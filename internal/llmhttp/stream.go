package llmhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/framewire/framewire/frames"
)

// Default timeouts, used when a [Timeouts] field is zero.
const (
	// DefaultConnectTimeout bounds dialling and the TLS handshake.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultFirstByteTimeout bounds the wait from the connection to the
	// stream's first event: long enough for a large prompt, short enough
	// that a server that accepted and went silent is noticed.
	DefaultFirstByteTimeout = 30 * time.Second
	// DefaultIdleTimeout bounds the silence between two events.
	DefaultIdleTimeout = 30 * time.Second
)

// Timeouts bound each phase of one streamed exchange. A zero field takes
// its default; a negative one disables that bound.
type Timeouts struct {
	// Connect runs from the request's start until a connection is ready.
	Connect time.Duration
	// FirstByte runs from the connection until the first event of the
	// stream (for an error answer: until its body is read).
	FirstByte time.Duration
	// Idle runs from each event to the next.
	Idle time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Connect == 0 {
		t.Connect = DefaultConnectTimeout
	}
	if t.FirstByte == 0 {
		t.FirstByte = DefaultFirstByteTimeout
	}
	if t.Idle == 0 {
		t.Idle = DefaultIdleTimeout
	}
	return t
}

// Phase names the part of an exchange a [TimeoutError] ran out in.
type Phase uint8

// The phases of an exchange.
const (
	PhaseConnect Phase = iota + 1
	PhaseFirstByte
	PhaseIdle
)

// String implements fmt.Stringer.
func (p Phase) String() string {
	switch p {
	case PhaseConnect:
		return "connect"
	case PhaseFirstByte:
		return "first byte"
	case PhaseIdle:
		return "idle"
	}
	return "phase " + strconv.Itoa(int(p))
}

// TimeoutError reports that the server did not answer within a bound.
type TimeoutError struct {
	// Provider names the client, such as "anthropic".
	Provider string
	// Phase is the bound that ran out; After is its length.
	Phase Phase
	After time.Duration
}

// Error implements error.
func (e *TimeoutError) Error() string {
	switch e.Phase {
	case PhaseConnect:
		return fmt.Sprintf("%s: timed out connecting after %v", e.Provider, e.After)
	case PhaseFirstByte:
		return fmt.Sprintf("%s: timed out waiting %v for the first event of the answer", e.Provider, e.After)
	}
	return fmt.Sprintf("%s: the stream stalled: no event for %v", e.Provider, e.After)
}

// Timeout reports true, as net.Error timeouts do.
func (e *TimeoutError) Timeout() bool { return true }

// Category implements [frames.Categorizer]: a timeout is worth a
// retry.
func (e *TimeoutError) Category() frames.ErrorCategory { return frames.ErrorTransient }

// RetryHinter is implemented by error answers that say how long to wait
// before retrying when the response has no Retry-After header (Gemini puts
// it in the error's details).
type RetryHinter interface {
	RetryAfter() time.Duration
}

// Request describes one streamed POST.
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
	// Timeouts bound the exchange's phases.
	Timeouts Timeouts
	// MaxLineBytes bounds one SSE line and one event.
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

// Stream is the event stream of one successful answer. It is not safe for
// concurrent use; Close it when done.
type Stream struct {
	resp   *http.Response
	rd     *Reader
	w      *watchdog
	parent context.Context // the caller's
	actx   context.Context // the attempt's, which the watchdog cancels
	stop   func() bool
}

// watchdog cancels an attempt's context when the current phase's bound
// runs out.
type watchdog struct {
	provider string
	t        Timeouts
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	phase    atomic.Uint32
}

func (w *watchdog) bound(p Phase) time.Duration {
	switch p {
	case PhaseConnect:
		return w.t.Connect
	case PhaseFirstByte:
		return w.t.FirstByte
	}
	return w.t.Idle
}

// enter starts phase p's bound, replacing the running one.
func (w *watchdog) enter(p Phase) {
	w.phase.Store(uint32(p))
	if d := w.bound(p); d > 0 {
		w.timer.Reset(d)
	} else {
		w.timer.Stop()
	}
}

func (w *watchdog) fire() {
	p := Phase(w.phase.Load())
	w.cancel(&TimeoutError{Provider: w.provider, Phase: p, After: w.bound(p)})
}

func (w *watchdog) close() {
	w.timer.Stop()
	w.cancel(nil)
}

// Open posts r and returns the answer's event stream once the server
// answered 200 OK. Connection errors and retryable statuses are retried
// first, with backoff; a Retry-After header (or the error's [RetryHinter])
// sets the wait. When ctx ends, Open returns ctx.Err().
func Open(ctx context.Context, r *Request) (*Stream, error) {
	hc := r.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	t := r.Timeouts.withDefaults()
	backoff := r.Backoff
	for attempt := 0; ; attempt++ {
		s, retry, err := r.attempt(ctx, hc, t)
		if err == nil {
			return s, nil
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
func (r *Request) attempt(ctx context.Context, hc *http.Client, t Timeouts) (s *Stream, retry time.Duration, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{provider: r.Provider, t: t, cancel: cancel}
	w.phase.Store(uint32(PhaseConnect))
	w.timer = time.AfterFunc(max(t.Connect, 0), w.fire)
	if t.Connect < 0 {
		w.timer.Stop()
	}
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		if Phase(w.phase.Load()) == PhaseConnect {
			w.enter(PhaseFirstByte)
		}
	}}
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
		return nil, 0, fmt.Errorf("%s: POST %s: %w", r.Provider, r.URL, err)
	}
	if Phase(w.phase.Load()) == PhaseConnect { // a transport that reports no connection
		w.enter(PhaseFirstByte)
	}
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
	s = &Stream{resp: resp, rd: NewReader(resp.Body, r.MaxLineBytes), w: w, parent: ctx, actx: actx}
	// A read may sit in a blocked network read: close the body the moment
	// the attempt's context ends (cancelled, or a bound ran out).
	s.stop = context.AfterFunc(actx, func() { resp.Body.Close() })
	return s, 0, nil
}

// ContentType returns the answer's Content-Type header.
func (s *Stream) ContentType() string { return s.resp.Header.Get("Content-Type") }

// Header returns the answer's headers.
func (s *Stream) Header() http.Header { return s.resp.Header }

// Next returns the next event's data and type, valid until the next call,
// or io.EOF after the last one. When a bound ran out it returns the
// [TimeoutError]; when the request's context ended, its error.
func (s *Stream) Next() (data, event []byte, err error) {
	data, event, err = s.rd.Next()
	if err != nil {
		var te *TimeoutError
		if cause := context.Cause(s.actx); errors.As(cause, &te) {
			return nil, nil, te
		}
		if s.parent.Err() != nil {
			return nil, nil, s.parent.Err()
		}
		if err == io.EOF {
			return nil, nil, io.EOF
		}
		return nil, nil, fmt.Errorf("%s: reading the stream: %w", s.w.provider, err)
	}
	s.w.enter(PhaseIdle)
	return data, event, nil
}

// Close releases the answer: it stops the bounds and closes the body.
func (s *Stream) Close() {
	s.stop()
	s.w.close()
	s.resp.Body.Close()
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
