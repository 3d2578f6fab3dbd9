package telemetry

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Options configure [New]. The zero value is off: a Telemetry without
// providers records nothing and [Telemetry.StartSession] returns nil.
// The program builds the providers (package otelsetup does, from the
// OTEL_* environment); telemetry only creates its tracer and instruments
// on them, as OpenTelemetry-Go asks of instrumented libraries.
type Options struct {
	// TracerProvider is where the session span tree goes. Nil: no spans.
	TracerProvider trace.TracerProvider
	// MeterProvider is where the session metrics go. Nil: no metrics.
	MeterProvider metric.MeterProvider

	// LLMSystem is gen_ai.system for LLM services that do not name their
	// own (see [GenAISystemer]). Default: "_OTHER", as the conventions say.
	LLMSystem string
	// TurnGrace is how long a turn stays open after the bot has finished,
	// so that an inference a tool result runs belongs to the same turn.
	// Default: 1.5s.
	TurnGrace time.Duration
}

// Telemetry is the observer of one process's sessions: a tracer and the
// instruments, on the providers it was given. The zero value and a nil
// *Telemetry are off. It is safe for concurrent use.
type Telemetry struct {
	opts    Options
	tracer  trace.Tracer         // nil when tracing is off
	metrics *Metrics             // nil when metrics are off
	mp      metric.MeterProvider // nil when metrics are off

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
}

// New creates the observer's tracer and instruments on the providers in
// opts. It fails only when an instrument cannot be created.
func New(opts Options) (*Telemetry, error) {
	t := &Telemetry{opts: opts, sessions: map[*Session]struct{}{}}
	if opts.TracerProvider != nil {
		t.tracer = opts.TracerProvider.Tracer(ScopeName)
	}
	if opts.MeterProvider != nil {
		m, err := NewMetrics(opts.MeterProvider)
		if err != nil {
			return nil, fmt.Errorf("telemetry: instruments: %w", err)
		}
		t.metrics, t.mp = m, opts.MeterProvider
	}
	return t, nil
}

// Enabled reports whether tracing or metrics are on.
func (t *Telemetry) Enabled() bool { return t != nil && (t.tracer != nil || t.metrics != nil) }

// Tracing reports whether spans are recorded.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// Metrics returns the instruments, or nil when metrics are off (a nil
// *Metrics ignores every call).
func (t *Telemetry) Metrics() *Metrics {
	if t == nil {
		return nil
	}
	return t.metrics
}

// MeterProvider returns the provider the instruments are on, or nil when
// metrics are off.
func (t *Telemetry) MeterProvider() metric.MeterProvider {
	if t == nil || t.mp == nil {
		return nil
	}
	return t.mp
}

// Shutdown ends the sessions still open (reason "shutdown"), so their
// spans reach the exporters; shut the providers down after it. It
// returns nil; ctx is for symmetry with the SDK's Shutdown.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	t.closed = true
	open := make([]*Session, 0, len(t.sessions))
	for s := range t.sessions {
		open = append(open, s)
	}
	t.mu.Unlock()
	for _, s := range open {
		s.End("shutdown")
	}
	return nil
}
