package webrtc

import (
	"fmt"
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/logsample"
	"go.uber.org/zap"
)

// InboundLimits bound what one client may send on its data channel. A
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
// Pings ("ping: <ms>") are never limited: they keep the session alive.
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
	// ByteBurst is how many bytes may arrive at once; it is raised to
	// Options.MaxMessageBytes, so that one message of the largest size
	// always passes. Default: 1 MiB.
	ByteBurst int
	// MaxQueuedBytes bounds the bytes of the messages held while the
	// pipeline is not set up yet (their number is bounded by
	// Options.MaxPendingMessages); more are dropped and counted.
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

func (l InboundLimits) withDefaults(maxMessage int) InboundLimits {
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

// inboundLimiter is a session's token bucket over its client's messages,
// in messages and bytes. Its methods are safe for concurrent use (the old
// and new peer connections of a restart may both deliver for a moment).
type inboundLimiter struct {
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

func newInboundLimiter(lim InboundLimits, now time.Time) *inboundLimiter {
	return &inboundLimiter{
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
func (l *inboundLimiter) refuse(msg []byte, now time.Time) refusal {
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

// refusalText is the answer to a refused request.
func (l *inboundLimiter) refusalText() string {
	return fmt.Sprintf("rate limit: at most %g messages and %d bytes per second (bursts of %d); this request was refused, send it again later",
		l.lim.MessagesPerSecond, l.lim.BytesPerSecond, l.lim.MessageBurst)
}

func (l *inboundLimiter) exhaust() refusal {
	l.exhausted = true
	return refusal{end: fmt.Sprintf("the client stayed far over the message rate limit (%g messages and %d bytes per second) for too long",
		l.lim.MessagesPerSecond, l.lim.BytesPerSecond)}
}

// refuseEndBound is how long a session that ends for its refusals waits
// for its pipeline to tell the client why (the refusal frame reaching the
// output) before it ends anyway.
const refuseEndBound = 2 * time.Second

// refused handles a client message the limiter refused (report as admit
// returned it): it passes it to the pipeline, whose message processor
// answers the request by its id and tells the client about the drops
// (at most once per ErrorInterval), or ends the session when the client
// stays far over the limit. The transport writes no message itself.
func (s *Session) refused(msg []byte, report uint64) {
	s.srv.metrics.signal.Refused(s.ctx, limitInboundRate)
	r := s.limiter.refuse(msg, time.Now())
	f := &frames.InputTransportRefused{End: r.end}
	n := 0
	if r.pass {
		f.Message, f.Answer, n = msg, s.limiter.refusalText(), len(msg)
	}
	if report > 0 {
		f.Notice = s.limiter.tooFastText(report)
		s.messageLog().Warn("the client sends too fast; dropping its messages",
			zap.Uint64("dropped", report), zap.Uint64("dropped_total", s.limiter.droppedTotal()))
	}
	if f.Answer == "" && f.Notice == "" && f.End == "" {
		return
	}
	s.mu.Lock()
	delivered := s.deliverLocked(f, n)
	ending := r.end != "" && delivered && !s.closing
	if ending {
		s.bg.Add(1)
	}
	s.mu.Unlock()
	if r.end == "" {
		return
	}
	s.messageLog().Warn("ending the session: the client sends far too fast", zap.String("reason", r.end),
		zap.Uint64("dropped_total", s.limiter.droppedTotal()))
	if !ending {
		s.end(r.end, false)
		return
	}
	go func() { // the output ends the session when the frame reaches it
		defer s.bg.Done()
		t := time.NewTimer(refuseEndBound)
		defer t.Stop()
		select {
		case <-t.C:
			s.end(r.end, false)
		case <-s.ctx.Done():
		}
	}()
}

// admit takes a message of n bytes that arrived at now. When it refuses,
// report is non-zero if the client is due an error: the messages dropped
// since the last one, this one included.
func (l *inboundLimiter) admit(n int, now time.Time) (ok bool, report uint64) {
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

// droppedTotal returns how many messages the limiter refused.
func (l *inboundLimiter) droppedTotal() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// tooFastText tells the client n of its messages were dropped for the
// rate.
func (l *inboundLimiter) tooFastText(n uint64) string {
	return fmt.Sprintf("too many messages: %d dropped; the limit is %g messages and %d bytes per second",
		n, l.lim.MessagesPerSecond, l.lim.BytesPerSecond)
}

// messageLog returns the session's logger for lines a client message can
// cause (bad JSON, unknown signalling, dropped for the rate), sampled as
// every such line is (internal/logsample), made on first use.
func (s *Session) messageLog() *zap.Logger {
	s.msgLogOnce.Do(func() { s.msgLog = logsample.Logger(s.log) })
	return s.msgLog
}

// inboundLimits returns the server's inbound limits with their defaults.
func (s *Server) inboundLimits() InboundLimits {
	return s.opts.Inbound.withDefaults(s.opts.MaxMessageBytes)
}
