package webrtc

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

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

// queueBuckets are the bounds of framewire.queue.high_water, in frames
// (the same as telemetry's, so the series of the pipeline's queue and the
// transport's merge).
var queueBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}

// instruments are the transport's metrics, created from
// Options.MeterProvider; without one they are no-ops that cost a method
// call and nothing else, so the frame path needs no checks.
type instruments struct {
	lateFrames     metric.Int64Counter
	underruns      metric.Int64Counter
	opusComplexity metric.Int64Gauge
	queueHighWater metric.Int64Histogram
	signal         *signalmetrics.Instruments

	queueOutputAudio, queueOutbound []metric.RecordOption
	// transport is the attribute the output's series carry,
	// transport="webrtc", as every transport's do.
	transport []metric.AddOption
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
	if in.lateFrames, err = m.Int64Counter("framewire.output.late_frames", metric.WithUnit("{frame}"),
		metric.WithDescription("Output audio frames sent later than their deadline.")); err != nil {
		return nil, wrap(err)
	}
	if in.underruns, err = m.Int64Counter("framewire.output.underruns", metric.WithUnit("{underrun}"),
		metric.WithDescription("Times the output had no audio ready while the bot was speaking.")); err != nil {
		return nil, wrap(err)
	}
	if in.opusComplexity, err = m.Int64Gauge("framewire.opus.complexity", metric.WithUnit("{level}"),
		metric.WithDescription("The Opus encoder complexity level now in force (0-10).")); err != nil {
		return nil, wrap(err)
	}
	if in.queueHighWater, err = m.Int64Histogram("framewire.queue.high_water", metric.WithUnit("{frame}"),
		metric.WithDescription("The deepest a queue got during a session, by queue."),
		metric.WithExplicitBucketBoundaries(queueBuckets...)); err != nil {
		return nil, wrap(err)
	}
	if in.signal, err = signalmetrics.New(m); err != nil {
		return nil, wrap(err)
	}
	in.queueOutputAudio = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("queue", queueOutputAudio)))}
	in.transport = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("transport", "webrtc")))}
	in.queueOutbound = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("queue", queueOutbound)))}
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
	m.lateFrames.Add(ctx, 0, m.transport...)
	m.underruns.Add(ctx, 0, m.transport...)
	if st.OpusComplexity >= 0 {
		m.opusComplexity.Record(ctx, int64(st.OpusComplexity))
	}
	m.queueHighWater.Record(ctx, int64(st.QueueHighWater), m.queueOutputAudio...)
	s.mu.Lock()
	outbound := s.ob.HighWater()
	s.mu.Unlock()
	m.queueHighWater.Record(ctx, int64(outbound), m.queueOutbound...)
}
