package webrtc

import (
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/processors/rtvi/wire"
)

// InboundLimits bound what one client may send on its data channel. A
// pipeline handles client messages one at a time (an RTVI send-text waits
// for the pipeline to flush), so a client that sends faster than that
// builds a backlog that delays its own next message, and every message
// queued holds its bytes. The limits keep that backlog short: messages
// past the rate are dropped on arrival, before any work, and the client is
// told with an RTVI error (fatal: false) at most once per ErrorInterval.
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
}

func newInboundLimiter(lim InboundLimits, now time.Time) *inboundLimiter {
	return &inboundLimiter{lim: lim, msgs: float64(lim.MessageBurst), bytes: float64(lim.ByteBurst), last: now}
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

// tooFastMessage is the RTVI error that tells the client n of its
// messages were dropped for the rate.
func (l *inboundLimiter) tooFastMessage(n uint64) []byte {
	text := fmt.Sprintf("too many messages: %d dropped; the limit is %g messages and %d bytes per second",
		n, l.lim.MessagesPerSecond, l.lim.BytesPerSecond)
	return wire.Message{Type: wire.TypeError, Data: wire.Error{Error: text}}.Encode()
}

// Sampling of the per-message log lines: the first few of each message
// text every second, then one in many.
const (
	sampleTick       = time.Second
	sampleFirst      = 5
	sampleThereafter = 100
)

// messageLog returns the session's logger for lines a client message can
// cause (bad JSON, unknown signalling, dropped for the rate): zap's
// sampler over the session's logger, made on first use (its counters take
// some memory, which only a session that logs such lines needs).
func (s *Session) messageLog() *zap.Logger {
	s.msgLogOnce.Do(func() {
		if !s.log.Core().Enabled(zapcore.WarnLevel) { // a Nop logger: nothing to sample
			s.msgLog = s.log
			return
		}
		s.msgLog = s.log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
			return zapcore.NewSamplerWithOptions(c, sampleTick, sampleFirst, sampleThereafter)
		}))
	})
	return s.msgLog
}

// inboundLimits returns the server's inbound limits with their defaults.
func (s *Server) inboundLimits() InboundLimits {
	return s.opts.Inbound.withDefaults(s.opts.MaxMessageBytes)
}
