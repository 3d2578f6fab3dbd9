package upstream

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/framewire/framewire/frames"
)

// HTTP says how a service client reaches its service. Every client's
// Options embeds it; the zero value takes the client's defaults.
type HTTP struct {
	// HTTPClient sends the requests and dials the websockets. Default: a
	// client with no overall timeout (a stream lasts as long as its
	// answer) whose dials and TLS handshakes are bounded by
	// Timeouts.Connect; the phases are bounded by Timeouts and the
	// caller's context.
	HTTPClient *http.Client
	// Timeouts bound connecting, the wait for the first byte of an answer
	// and the service's silence after it. A zero field takes the client's
	// default ([LLMTimeouts] or [SpeechTimeouts]); a negative one turns
	// that bound off.
	Timeouts Timeouts
	// MaxRetries is how many times a request that failed before any
	// answer (a connection error, HTTP 429 or 5xx, or what else the client
	// documents as transient) is tried again. A request that timed out or
	// had started answering is not. Default: [DefaultMaxRetries];
	// negative means never.
	MaxRetries int
	// RetryBackoff is the wait before the first retry; it doubles after
	// each one, up to the client's cap. A Retry-After the service sends
	// wins (capped alike). Default: the client's (250ms to 500ms);
	// negative retries at once.
	RetryBackoff time.Duration
}

// DefaultMaxRetries is how many times a client retries a request that
// failed before any answer, unless HTTP.MaxRetries says otherwise.
const DefaultMaxRetries = 2

// Timeouts bound each phase of one exchange with a service. A zero field
// takes the client's default; a negative one turns that bound off.
type Timeouts struct {
	// Connect runs from the request's start until a connection is ready:
	// the dial and the TLS handshake, and for a websocket its handshake.
	Connect time.Duration
	// FirstByte runs from the connection until the first byte of the
	// answer's body, or the first message a websocket request waits for
	// (each client documents which).
	FirstByte time.Duration
	// Idle runs while the client waits for more: from each read that asks
	// the service for the next bytes (or message) until they come. Time
	// the caller spends between reads does not count.
	Idle time.Duration
}

// The default bounds. Every client takes one of two sets: [LLMTimeouts]
// or [SpeechTimeouts].
const (
	// DefaultConnectTimeout bounds the dial and the TLS handshake (for a
	// websocket, the whole handshake).
	DefaultConnectTimeout = 10 * time.Second
	// DefaultFirstByteTimeout bounds a language model's wait from the
	// connection to the stream's first byte: long enough for a large
	// prompt, short enough that a service that accepted and went silent
	// is noticed.
	DefaultFirstByteTimeout = 30 * time.Second
	// DefaultIdleTimeout bounds a language model's silence while the
	// client waits for the rest of the stream.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultSpeechFirstByteTimeout bounds the wait for the first audio
	// of a synthesis or the first answer of a transcription.
	DefaultSpeechFirstByteTimeout = 10 * time.Second
	// DefaultSpeechIdleTimeout bounds the silence between two chunks of
	// audio or two messages of a live transcription.
	DefaultSpeechIdleTimeout = 20 * time.Second
)

// LLMTimeouts returns the default bounds of a language model's stream:
// connect 10s, first byte 30s, idle 30s.
func LLMTimeouts() Timeouts {
	return Timeouts{Connect: DefaultConnectTimeout, FirstByte: DefaultFirstByteTimeout, Idle: DefaultIdleTimeout}
}

// SpeechTimeouts returns the default bounds of a TTS or STT service,
// which answers sooner than a model thinks: connect 10s, first byte 10s,
// idle 20s.
func SpeechTimeouts() Timeouts {
	return Timeouts{Connect: DefaultConnectTimeout, FirstByte: DefaultSpeechFirstByteTimeout, Idle: DefaultSpeechIdleTimeout}
}

// Or returns t with each zero field taken from d; negative fields (no
// bound) stay as they are.
func (t Timeouts) Or(d Timeouts) Timeouts {
	if t.Connect == 0 {
		t.Connect = d.Connect
	}
	if t.FirstByte == 0 {
		t.FirstByte = d.FirstByte
	}
	if t.Idle == 0 {
		t.Idle = d.Idle
	}
	return t
}

// Bound returns the bound of phase p; zero or less means none.
func (t Timeouts) Bound(p Phase) time.Duration {
	switch p {
	case PhaseConnect:
		return t.Connect
	case PhaseFirstByte:
		return t.FirstByte
	case PhaseIdle:
		return t.Idle
	}
	return 0
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

// TimeoutError reports that a service did not answer within a bound. It
// is what every client returns for a bound that ran out, so the pipeline
// and the logs see one kind of error with one kind of text.
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
		return fmt.Sprintf("%s: no first byte within %v", e.Provider, e.After)
	}
	return fmt.Sprintf("%s: the stream stalled: nothing received for %v", e.Provider, e.After)
}

// Timeout reports true, as net.Error timeouts do.
func (e *TimeoutError) Timeout() bool { return true }

// Category implements [frames.Categorizer]: a timeout is worth a retry.
func (e *TimeoutError) Category() frames.ErrorCategory { return frames.ErrorTransient }
