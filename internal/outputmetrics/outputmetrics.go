// Package outputmetrics holds the instruments every transport's output
// owns: framewire.output.late_frames, framewire.output.underruns,
// framewire.output.dropped_frames and framewire.queue.high_water, each
// output series carrying the transport's name. The WebRTC and WebSocket
// transports both count into them, so each metric has one definition.
package outputmetrics

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// QueueBuckets are the bounds of framewire.queue.high_water, in frames
// (the same as telemetry's, so the series of the pipeline's queue and the
// transports' merge).
var QueueBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}

// Instruments count one transport's output. Counting allocates nothing:
// the attribute sets are built once.
type Instruments struct {
	lateFrames     metric.Int64Counter
	underruns      metric.Int64Counter
	droppedFrames  metric.Int64Counter
	queueHighWater metric.Int64Histogram
	transport      []metric.AddOption
}

// New creates the instruments of the transport named transport
// ("webrtc", "websocket") on m; a nil m makes no-op ones.
func New(m metric.Meter, transport string) (*Instruments, error) {
	if m == nil {
		m = noop.Meter{}
	}
	var (
		in  Instruments
		err error
	)
	if in.lateFrames, err = m.Int64Counter("framewire.output.late_frames", metric.WithUnit("{frame}"),
		metric.WithDescription("Output audio frames sent later than their deadline.")); err != nil {
		return nil, err
	}
	if in.underruns, err = m.Int64Counter("framewire.output.underruns", metric.WithUnit("{underrun}"),
		metric.WithDescription("Times the output had no audio ready while the bot was speaking.")); err != nil {
		return nil, err
	}
	if in.droppedFrames, err = m.Int64Counter("framewire.output.dropped_frames", metric.WithUnit("{frame}"),
		metric.WithDescription("Output audio frames dropped because the client was not reading.")); err != nil {
		return nil, err
	}
	if in.queueHighWater, err = m.Int64Histogram("framewire.queue.high_water", metric.WithUnit("{frame}"),
		metric.WithDescription("The deepest a queue got during a session, by queue."),
		metric.WithExplicitBucketBoundaries(QueueBuckets...)); err != nil {
		return nil, err
	}
	in.transport = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("transport", transport)))}
	return &in, nil
}

// LateFrames counts frames another goroutine sent because the output's
// own had not run in time.
func (in *Instruments) LateFrames(ctx context.Context, n int64) {
	in.lateFrames.Add(ctx, n, in.transport...)
}

// Underruns counts frames the client may have heard as a gap.
func (in *Instruments) Underruns(ctx context.Context, n int64) {
	in.underruns.Add(ctx, n, in.transport...)
}

// DroppedFrames counts audio frames dropped for a client not reading.
func (in *Instruments) DroppedFrames(ctx context.Context, n int64) {
	in.droppedFrames.Add(ctx, n, in.transport...)
}

// Queue returns the option that names a queue of framewire.queue.high_water,
// to build once and pass to HighWater.
func Queue(name string) []metric.RecordOption {
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("queue", name)))}
}

// HighWater records a session's deepest queue at its end.
func (in *Instruments) HighWater(ctx context.Context, frames int64, queue []metric.RecordOption) {
	in.queueHighWater.Record(ctx, frames, queue...)
}

// SessionEnded makes the output's counters exist at zero from the first
// session on, so that a dashboard sees "none" rather than "no data".
func (in *Instruments) SessionEnded(ctx context.Context) {
	in.lateFrames.Add(ctx, 0, in.transport...)
	in.underruns.Add(ctx, 0, in.transport...)
}
