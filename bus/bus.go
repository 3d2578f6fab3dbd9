package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Handler serves one call: req is the request, progress sends a progress
// payload to the caller (payloads over the bus's cap are dropped), and the
// returned bytes are the result. ctx ends when the caller cancels or goes
// away, or the service stops: return promptly then. A returned error
// reaches the caller as a [*RemoteError] holding its text (at most
// [MaxErrorText] bytes of it).
type Handler func(ctx context.Context, req []byte, progress func([]byte)) ([]byte, error)

// Bus carries calls between a caller and whoever serves a subject.
type Bus interface {
	// Serve serves subject with h until ctx ends or the service is
	// stopped. It returns once requests can reach h. Several services of
	// one subject share its requests.
	Serve(ctx context.Context, subject string, h Handler) (*Service, error)
	// Request calls subject with req and returns the callee's result.
	// progress (may be nil) is called on the caller's goroutine for each
	// progress payload, in order, before Request returns. Ending ctx
	// cancels the callee's work and returns ctx.Err(). Request waits as
	// long as the callee is alive: bound a call with ctx.
	Request(ctx context.Context, subject string, req []byte, progress func([]byte)) ([]byte, error)
}

// Options configure a bus. The zero value gives the defaults.
type Options struct {
	// MaxPayload caps every request, progress and result payload, in
	// bytes. 0 means [DefaultMaxPayload].
	MaxPayload int
	// Heartbeat is how often a callee tells its callers it is still
	// working. 0 means [DefaultHeartbeat]. Only the NATS bus beats; the
	// processes of one subject must agree on it (a caller's patience,
	// Heartbeat × MissedBeats, must exceed the callee's Heartbeat).
	Heartbeat time.Duration
	// MissedBeats is how many heartbeats of silence make a caller give the
	// callee up with [ErrGone]. 0 means [DefaultMissedBeats].
	MissedBeats int
	// MaxCalls bounds the calls one service runs at once; more are refused
	// with [ErrBusy]. 0 means [DefaultMaxCalls].
	MaxCalls int
	// QueueGroup is the NATS queue group of the services: NATS hands each
	// request to one of the services of a subject. "" means
	// [DefaultQueueGroup].
	QueueGroup string
}

// Defaults of [Options].
const (
	DefaultMaxPayload  = 1 << 20 // NATS's default max_payload
	DefaultHeartbeat   = 500 * time.Millisecond
	DefaultMissedBeats = 4
	DefaultMaxCalls    = 64
	DefaultQueueGroup  = "framewire.bus"
)

// MaxErrorText caps the text of a callee's error that crosses the bus.
const MaxErrorText = 1024

// withDefaults returns o with its zero fields set.
func (o Options) withDefaults() Options {
	if o.MaxPayload <= 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.MissedBeats <= 0 {
		o.MissedBeats = DefaultMissedBeats
	}
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.QueueGroup == "" {
		o.QueueGroup = DefaultQueueGroup
	}
	return o
}

// silence is how long a caller waits for any message of its callee.
func (o Options) silence() time.Duration { return o.Heartbeat * time.Duration(o.MissedBeats) }

// Errors of [Bus.Request]. Test with errors.Is.
var (
	// ErrNoResponders: nobody serves the subject.
	ErrNoResponders = errors.New("bus: nobody serves the subject")
	// ErrTooLarge: the request or the result is over the payload cap.
	ErrTooLarge = errors.New("bus: payload too large")
	// ErrGone: the callee stopped, died or fell silent before it answered.
	ErrGone = errors.New("bus: the callee went away")
	// ErrBusy: the callee runs as many calls as it may.
	ErrBusy = errors.New("bus: the callee is busy")
	// ErrProtocol: the callee sent something this version does not
	// understand.
	ErrProtocol = errors.New("bus: unexpected message")
)

// RemoteError is a callee's error, as its text.
type RemoteError struct {
	// Subject is the subject called.
	Subject string
	// Message is the text of the callee's error.
	Message string
}

// Error returns the subject and the callee's text.
func (e *RemoteError) Error() string { return "bus: " + e.Subject + ": " + e.Message }

// Service is one subject being served. Stop it to wait for its calls.
type Service struct {
	subject string
	cancel  context.CancelFunc
	done    chan struct{}
	err     error // set before done closes
}

func newService(ctx context.Context, subject string) (*Service, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	return &Service{subject: subject, cancel: cancel, done: make(chan struct{})}, ctx
}

// Subject returns the subject served.
func (s *Service) Subject() string { return s.subject }

// Done is closed once the service has stopped and its handlers returned.
func (s *Service) Done() <-chan struct{} { return s.done }

// Stop stops the service (its running calls are cancelled; their callers
// get [ErrGone]) and waits until every handler has returned (and, over
// NATS, until the server has dropped its subscription, within the
// heartbeat silence, so a request sent after Stop gets [ErrNoResponders]),
// so a handler must not call it. It returns why the service stopped by itself, if it
// did (its connection closed). Stop may be called more than once.
func (s *Service) Stop() error {
	s.cancel()
	<-s.done
	return s.err
}

// validSubject reports whether s is a run of plain NATS tokens (no
// wildcards), at most 256 bytes.
func validSubject(s string) error {
	if s == "" || len(s) > 256 {
		return fmt.Errorf("bus: subject %q must have 1 to 256 characters", s)
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
			return fmt.Errorf("bus: subject %q is not a run of plain NATS tokens", s)
		}
	}
	return nil
}

// call runs h, turning a panic into an error.
func call(ctx context.Context, h Handler, req []byte, progress func([]byte)) (resp []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return h(ctx, req, progress)
}

// errorText is what crosses the bus of a handler's error.
func errorText(err error) string {
	s := err.Error()
	if len(s) > MaxErrorText {
		s = s[:MaxErrorText]
	}
	return s
}

// tooLarge is the error of an oversized payload.
func tooLarge(subject, what string, n, limit int) error {
	return fmt.Errorf("bus: %s: the %s has %d bytes, over the cap of %d: %w", subject, what, n, limit, ErrTooLarge)
}

// gone is the error of a callee that went away.
func gone(subject, why string) error {
	return fmt.Errorf("bus: %s: %s: %w", subject, why, ErrGone)
}

// calls counts a service's running calls against its limit.
type calls struct {
	mu      sync.Mutex
	n, max  int
	stopped bool
	wg      sync.WaitGroup
}

// acquire counts one more call, or reports why it cannot run.
func (c *calls) acquire() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.stopped:
		return ErrGone
	case c.n >= c.max:
		return ErrBusy
	}
	c.n++
	c.wg.Add(1)
	return nil
}

func (c *calls) release() {
	c.mu.Lock()
	c.n--
	c.mu.Unlock()
	c.wg.Done()
}

// stop refuses new calls and waits for the running ones.
func (c *calls) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.wg.Wait()
}
