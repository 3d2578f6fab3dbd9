package webrtc

import (
	"context"
)

// Metrics receives the transport's counters for an operator's dashboards.
// telemetry.Metrics implements it (a nil *telemetry.Metrics, telemetry
// off, ignores every call), so a program passes tel.Metrics() as
// Options.Metrics; the transport does not depend on telemetry. Calls are
// made from the server's goroutines and must be quick.
type Metrics interface {
	// LateFrames counts 20 ms output frames that another goroutine sent
	// because the output's own had not run in time, as they are sent (and
	// 0 at each session's end, so the series exists).
	LateFrames(ctx context.Context, n int64)
	// Underruns counts output frames sent late enough for a client to
	// hear a gap, and frames skipped after a stall, as they happen (and 0
	// at each session's end).
	Underruns(ctx context.Context, n int64)
	// OpusComplexity records the Opus complexity a session's encoder
	// ended at.
	OpusComplexity(ctx context.Context, level int)
	// SignallingResponse counts one signalling response by status code.
	SignallingResponse(ctx context.Context, status int)
	// LimitRefused counts one request or message refused by a limit
	// (see the limit names in [Options.Metrics]).
	LimitRefused(ctx context.Context, limit string)
	// QueueHighWater records the deepest one of a session's queues got,
	// at the session's end: "webrtc.output.audio" (frames waiting to be
	// played) and "webrtc.outbound" (messages waiting for the data
	// channel).
	QueueHighWater(ctx context.Context, queue string, depth int)
}

// Queue names reported to Metrics.QueueHighWater.
const (
	queueOutputAudio = "webrtc.output.audio"
	queueOutbound    = "webrtc.outbound"
)

// Limit names reported to Metrics.LimitRefused.
const (
	limitSessions        = "sessions"            // Options.MaxSessions
	limitPendingSessions = "pending_sessions"    // Options.MaxPendingSessions
	limitEvictedPending  = "evicted_pending"     // a pending session made room for another address's
	limitIPSessions      = "ip_sessions"         // IPLimits.MaxSessions
	limitIPPending       = "ip_pending_sessions" // IPLimits.MaxPendingSessions
	limitIPRate          = "ip_rate"             // IPLimits.Rate
	limitInboundRate     = "inbound_rate"        // InboundLimits
	limitHost            = "host"                // Options.AllowHosts
	limitAdmit           = "admit"               // Options.Admit
)

// nopMetrics is the Metrics of a server without one.
type nopMetrics struct{}

func (nopMetrics) LateFrames(context.Context, int64)           {}
func (nopMetrics) Underruns(context.Context, int64)            {}
func (nopMetrics) OpusComplexity(context.Context, int)         {}
func (nopMetrics) SignallingResponse(context.Context, int)     {}
func (nopMetrics) LimitRefused(context.Context, string)        {}
func (nopMetrics) QueueHighWater(context.Context, string, int) {}

// reportOutput reports what a session's output counted, at its end.
func (s *Session) reportOutput() {
	m := s.srv.opts.Metrics
	st := s.out.Stats()
	ctx := context.WithoutCancel(s.ctx) // the session's, ended by now
	// Late frames and underruns were counted as they happened; zero
	// makes their series exist from the first session on.
	m.LateFrames(ctx, 0)
	m.Underruns(ctx, 0)
	if st.OpusComplexity >= 0 {
		m.OpusComplexity(ctx, st.OpusComplexity)
	}
	m.QueueHighWater(ctx, queueOutputAudio, st.QueueHighWater)
	s.mu.Lock()
	outbound := s.ob.high
	s.mu.Unlock()
	m.QueueHighWater(ctx, queueOutbound, outbound)
}
