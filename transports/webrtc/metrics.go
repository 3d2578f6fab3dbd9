package webrtc

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/framewire/framewire/internal/outputmetrics"
	"github.com/framewire/framewire/internal/signalmetrics"
)

// ScopeName is the instrumentation scope of the transport's meter.
const ScopeName = "github.com/framewire/framewire/transports/webrtc"

// Queue names of framewire.queue.high_water.
const (
	queueOutputAudio = "webrtc.output.audio"
	queueOutbound    = "webrtc.outbound"
)

// Limit names of framewire.limits.refused.
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

// instruments are the transport's metrics, created from
// Options.MeterProvider; without one they are no-ops that cost a method
// call and nothing else, so the frame path needs no checks.
type instruments struct {
	output         *outputmetrics.Instruments
	opusComplexity metric.Int64Gauge
	signal         *signalmetrics.Instruments

	queueOutputAudio, queueOutbound []metric.RecordOption
}

func newInstruments(mp metric.MeterProvider) (*instruments, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(ScopeName)
	var (
		in  instruments
		err error
	)
	wrap := func(err error) error { return fmt.Errorf("webrtc: instruments: %w", err) }
	if in.output, err = outputmetrics.New(m, "webrtc"); err != nil {
		return nil, wrap(err)
	}
	if in.opusComplexity, err = m.Int64Gauge("framewire.opus.complexity", metric.WithUnit("{level}"),
		metric.WithDescription("The Opus encoder complexity level now in force (0-10).")); err != nil {
		return nil, wrap(err)
	}
	if in.signal, err = signalmetrics.New(m); err != nil {
		return nil, wrap(err)
	}
	in.queueOutputAudio = outputmetrics.Queue(queueOutputAudio)
	in.queueOutbound = outputmetrics.Queue(queueOutbound)
	return &in, nil
}

// reportOutput reports what a session's output counted, at its end.
func (s *Session) reportOutput() {
	m := s.srv.metrics
	st := s.out.Stats()
	ctx := context.WithoutCancel(s.ctx) // the session's, ended by now
	// Late frames and underruns were counted as they happened; zero
	// makes their series exist from the first session on, so a
	// dashboard sees "none" rather than "no data".
	m.output.SessionEnded(ctx)
	if st.OpusComplexity >= 0 {
		m.opusComplexity.Record(ctx, int64(st.OpusComplexity))
	}
	m.output.HighWater(ctx, int64(st.QueueHighWater), m.queueOutputAudio)
	s.mu.Lock()
	outbound := s.ob.HighWater()
	s.mu.Unlock()
	m.output.HighWater(ctx, int64(outbound), m.queueOutbound)
}
