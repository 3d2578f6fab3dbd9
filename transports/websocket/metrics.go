package websocket

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/framewire/framewire/internal/signalmetrics"
)

// ScopeName is the instrumentation scope of the transport's meter.
const ScopeName = "github.com/framewire/framewire/transports/websocket"

// Limit names of framewire.limits.refused.
const (
	limitSessions    = "sessions"     // Options.MaxSessions
	limitInboundRate = "inbound_rate" // Options.Inbound
	limitHost        = "host"         // Options.AllowHosts
	limitOrigin      = "origin"       // Options.AllowOrigins
	limitAdmit       = "admit"        // Options.Admit
)

// instruments are the transport's metrics, made from
// Options.MeterProvider; without one they are no-ops. The output's series
// carry transport="websocket", so that they sit beside WebRTC's under the
// same names.
type instruments struct {
	lateFrames     metric.Int64Counter
	underruns      metric.Int64Counter
	droppedAudio   metric.Int64Counter
	queueHighWater metric.Int64Histogram
	signal         *signalmetrics.Instruments

	transport []metric.AddOption
	outbound  []metric.RecordOption
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
	wrap := func(err error) error { return fmt.Errorf("websocket: instruments: %w", err) }
	if in.lateFrames, err = m.Int64Counter("framewire.output.late_frames", metric.WithUnit("{frame}"),
		metric.WithDescription("Output audio frames sent later than their deadline.")); err != nil {
		return nil, wrap(err)
	}
	if in.underruns, err = m.Int64Counter("framewire.output.underruns", metric.WithUnit("{underrun}"),
		metric.WithDescription("Times the output had no audio ready while the bot was speaking.")); err != nil {
		return nil, wrap(err)
	}
	if in.droppedAudio, err = m.Int64Counter("framewire.output.dropped_frames", metric.WithUnit("{frame}"),
		metric.WithDescription("Output audio frames dropped because the client was not reading.")); err != nil {
		return nil, wrap(err)
	}
	if in.queueHighWater, err = m.Int64Histogram("framewire.queue.high_water", metric.WithUnit("{frame}"),
		metric.WithDescription("The deepest a queue got during a session, by queue."),
		metric.WithExplicitBucketBoundaries(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096)); err != nil {
		return nil, wrap(err)
	}
	if in.signal, err = signalmetrics.New(m); err != nil {
		return nil, wrap(err)
	}
	in.transport = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("transport", "websocket")))}
	in.outbound = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("queue", "websocket.outbound")))}
	return &in, nil
}

// refused counts a request or message a limit refused.
func (in *instruments) refused(ctx context.Context, limit string) { in.signal.Refused(ctx, limit) }
