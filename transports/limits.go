package transports

import (
	"fmt"
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
)

// InboundLimits bound the messages one client may send (on a WebRTC data
// channel, a WebSocket): a transport applies them with a MessageLimiter. A
// pipeline handles client messages one at a time (an RTVI send-text waits
// for the pipeline to flush), so a client that sends faster than that
// builds a backlog that delays its own next message, and every message
// queued holds its bytes. The limits keep that backlog short: messages
// past the rate are refused on arrival. A refused message goes to the
// pipeline as a frames.InputTransportRefused, where the RTVI processor
// answers a request (a message with an id) with an error-response naming
// the limit, so the client's promise settles; the client is also told
// with an RTVI error (fatal: false) at most once per ErrorInterval.
// Passing refusals on is itself bounded (RefusalBurst, RefusalsPerSecond,
// RefusalBytesPerSecond): a client that stays that far over the limit, for
// seconds at the defaults, has its session ended with a fatal RTVI error
// saying why. Nothing with an id is dropped silently.
// A transport may leave its own keep-alives out of the count (WebRTC's
// "ping: <ms>" messages are never limited).
//
// The zero value is the default: 20 messages and 512 KiB per second, with
// bursts of 40 messages and 1 MiB, which holds an RTVI client's handshake,
// UI snapshots and typing several times over, and keeps what one session
// can queue under a second of a send-text's handling.
type InboundLimits struct {
	// MessagesPerSecond is the sustained rate of client messages.
	// Default: 20; negative: no rate limit (messages nor bytes).
	MessagesPerSecond float64
	// MessageBurst is how many messages may arrive at once after a quiet
	// time. Default: twice MessagesPerSecond (at least 1).
	MessageBurst int
	// BytesPerSecond is the sustained rate of message bytes.
	// Default: 512 KiB.
	BytesPerSecond int
	// ByteBurst is how many bytes may arrive at once; it is raised to the
	// transport's largest message, so that one message of the largest
	// size always passes. Default: 1 MiB.
	ByteBurst int
	// MaxQueuedBytes bounds the bytes of the messages held while the
	// pipeline is not set up yet (their number is bounded by the
	// transport's own option); more are dropped and counted.
	// Default: 1 MiB.
	MaxQueuedBytes int
	// ErrorInterval is the least time between two RTVI errors telling the
	// client its messages were dropped. Default: 1s.
	ErrorInterval time.Duration
	// RefusalBurst is how many refused messages are passed on to be
	// answered at once (an answer is an error-response of about 200
	// bytes). Default: 4096, which answers 2,000 requests sent back to
	// back.
	RefusalBurst int
	// RefusalsPerSecond is the sustained rate of refusals passed on.
	// Default: 10 times MessagesPerSecond.
	RefusalsPerSecond float64
	// RefusalBytesPerSecond bounds the bytes of refused messages passed
	// on (the processor reads them for their id), with bursts of 4 times
	// as much. Default: 4 times BytesPerSecond (2 MiB).
	RefusalBytesPerSecond int
}

// WithDefaults returns the limits with their defaults filled in, for a
// transport whose largest message is maxMessage bytes.
func (l InboundLimits) WithDefaults(maxMessage int) InboundLimits {
	if l.MessagesPerSecond == 0 {
		l.MessagesPerSecond = 20
	}
	if l.MessageBurst <= 0 {
		l.MessageBurst = max(1, int(2*l.MessagesPerSecond))
	}
	if l.BytesPerSecond <= 0 {
		l.BytesPerSecond = 512 << 10
	}
	if l.ByteBurst <= 0 {
		l.ByteBurst = 1 << 20
	}
	l.ByteBurst = max(l.ByteBurst, maxMessage)
	if l.MaxQueuedBytes <= 0 {
		l.MaxQueuedBytes = 1 << 20
	}
	if l.ErrorInterval <= 0 {
		l.ErrorInterval = time.Second
	}
	if l.RefusalBurst <= 0 {
		l.RefusalBurst = 4096
	}
	if l.RefusalsPerSecond <= 0 {
		l.RefusalsPerSecond = 10 * max(1, l.MessagesPerSecond)
	}
	if l.RefusalBytesPerSecond <= 0 {
		l.RefusalBytesPerSecond = 4 * l.BytesPerSecond
	}
	return l
}

// A MessageLimiter is a session's token bucket over its client's messages,
// in messages and bytes, with the budget of refusals it passes on. Its
// methods are safe for concurrent use (the old and new connections of a
// WebRTC restart may both deliver for a moment).
type MessageLimiter struct {
	lim InboundLimits

	mu       sync.Mutex
	msgs     float64 // tokens
	bytes    float64
	last     time.Time // of the last refill
	dropped  uint64    // since the last error to the client
	total    uint64
	lastSent time.Time // of the last error to the client

	// The budget of refusals passed on: messages, and their bytes.
	answers, peeked float64
	refusedAt       time.Time // of the last refill of the two
	exhausted       bool      // the budget ran out: the session is ending
}

// NewMessageLimiter returns a limiter of lim, with its defaults for a
// transport whose largest message is maxMessage bytes (see
// InboundLimits.WithDefaults), whose buckets are full at now.
func NewMessageLimiter(lim InboundLimits, maxMessage int, now time.Time) *MessageLimiter {
	lim = lim.WithDefaults(maxMessage)
	return &MessageLimiter{
		lim: lim, msgs: float64(lim.MessageBurst), bytes: float64(lim.ByteBurst), last: now,
		answers: float64(lim.RefusalBurst), peeked: 4 * float64(lim.RefusalBytesPerSecond), refusedAt: now,
	}
}

// refusal is what becomes of a message the limiter refused.
type refusal struct {
	// pass says to pass the message on, for an answer to its sender.
	pass bool
	// end is non-empty when the refusal budget ran out: the session ends
	// with this reason.
	end string
}

// refuse decides what becomes of msg, refused at now: passed on to be
// answered within the refusal budget, or, past it, the end of the session.
// Once it has said to end, it says nothing more.
func (l *MessageLimiter) refuse(msg []byte, now time.Time) refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exhausted {
		return refusal{}
	}
	if dt := now.Sub(l.refusedAt).Seconds(); dt > 0 {
		l.answers = min(float64(l.lim.RefusalBurst), l.answers+dt*l.lim.RefusalsPerSecond)
		l.peeked = min(4*float64(l.lim.RefusalBytesPerSecond), l.peeked+dt*float64(l.lim.RefusalBytesPerSecond))
		l.refusedAt = now
	}
	if l.peeked < float64(len(msg)) || l.answers < 1 {
		return l.exhaust()
	}
	l.peeked -= float64(len(msg))
	l.answers--
	return refusal{pass: true}
}

// Refuse decides what becomes of msg, which Admit refused at now with
// report: it returns the frame the transport pushes into its pipeline
// (see frames.InputTransportRefused), or nil when there is nothing to
// say. The frame carries msg for an answer while the refusal budget
// lasts; past it, End says why the session must end, once.
func (l *MessageLimiter) Refuse(msg []byte, report uint64, now time.Time) *frames.InputTransportRefused {
	r := l.refuse(msg, now)
	f := &frames.InputTransportRefused{End: r.end}
	if r.pass {
		f.Message, f.Answer = msg, l.refusalText()
	}
	if report > 0 {
		f.Notice = l.tooFastText(report)
	}
	if f.Answer == "" && f.Notice == "" && f.End == "" {
		return nil
	}
	return f
}

// refusalText is the answer to a refused request.
func (l *MessageLimiter) refusalText() string {
	return fmt.Sprintf("rate limit: at most %g messages and %d bytes per second (bursts of %d); this request was refused, send it again later",
		l.lim.MessagesPerSecond, l.lim.BytesPerSecond, l.lim.MessageBurst)
}

func (l *MessageLimiter) exhaust() refusal {
	l.exhausted = true
	return refusal{end: fmt.Sprintf("the client stayed far over the message rate limit (%g messages and %d bytes per second) for too long",
		l.lim.MessagesPerSecond, l.lim.BytesPerSecond)}
}

// Admit takes a message of n bytes that arrived at now. When it refuses,
// report is non-zero if the client is due an error: the messages dropped
// since the last one, this one included.
func (l *MessageLimiter) Admit(n int, now time.Time) (ok bool, report uint64) {
	if l.lim.MessagesPerSecond < 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if dt := now.Sub(l.last).Seconds(); dt > 0 {
		l.msgs = min(float64(l.lim.MessageBurst), l.msgs+dt*l.lim.MessagesPerSecond)
		l.bytes = min(float64(l.lim.ByteBurst), l.bytes+dt*float64(l.lim.BytesPerSecond))
		l.last = now
	}
	if l.msgs >= 1 && l.bytes >= float64(n) {
		l.msgs--
		l.bytes -= float64(n)
		return true, 0
	}
	l.dropped++
	l.total++
	if !l.lastSent.IsZero() && now.Sub(l.lastSent) < l.lim.ErrorInterval {
		return false, 0
	}
	report, l.dropped, l.lastSent = l.dropped, 0, now
	return false, report
}

// Dropped returns how many messages the limiter refused.
func (l *MessageLimiter) Dropped() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// tooFastText tells the client n of its messages were dropped for the
// rate.
func (l *MessageLimiter) tooFastText(n uint64) string {
	return fmt.Sprintf("too many messages: %d dropped; the limit is %g messages and %d bytes per second",
		n, l.lim.MessagesPerSecond, l.lim.BytesPerSecond)
}

// Limits returns the limiter's limits.
func (l *MessageLimiter) Limits() InboundLimits { return l.lim }
