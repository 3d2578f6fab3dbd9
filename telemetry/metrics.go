package telemetry

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of framewire's tracer and meter.
const ScopeName = "github.com/framewire/framewire/telemetry"

// maxLabelValues bounds the distinct values one label of one instrument
// takes (service names, models, tool names, queue and limit names); past
// it a value is reported as "_OTHER", so a model that invents tool names
// cannot grow the series without bound.
const maxLabelValues = 64

// Metrics holds the instruments of the telemetry observer: the session,
// turn, service, token, tool, interruption, observer-drop and pipeline
// queue metrics that [Session] records from the frames it sees. The
// packages that know something frames do not say own their instruments
// and take a MeterProvider (transports/webrtc's late frames, underruns,
// Opus complexity, signalling responses and refusals; the cluster's front
// door). A nil *Metrics (telemetry off) ignores every call, so callers
// need no checks. Methods are safe for concurrent use and cheap: a
// counter add with a label set built once.
type Metrics struct {
	sessionsActive  metric.Int64UpDownCounter
	sessionsStarted metric.Int64Counter
	sessionsEnded   metric.Int64Counter
	turns           metric.Int64Counter
	turnLatency     metric.Float64Histogram
	ttfb            metric.Float64Histogram
	tokens          metric.Int64Histogram
	toolCalls       metric.Int64Counter
	interruptions   metric.Int64Counter
	observerDrops   metric.Int64Counter
	queueHighWater  metric.Int64Histogram

	labels labelSets
}

// latencyBuckets are the histogram bounds for latencies, in seconds: voice
// agents live between 100 ms and a few seconds.
var latencyBuckets = []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10}

// tokenBuckets follow the GenAI conventions' advice for token usage.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}

// queueBuckets are the bounds for queue high-water marks, in frames.
var queueBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}

// NewMetrics creates the instruments on mp's meter. Setup calls it; call
// it yourself only with a MeterProvider of your own.
func NewMetrics(mp metric.MeterProvider) (*Metrics, error) {
	m := mp.Meter(ScopeName)
	var (
		x    Metrics
		errs []error
	)
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	x.sessionsActive, err = m.Int64UpDownCounter("framewire.sessions.active", metric.WithUnit("{session}"),
		metric.WithDescription("Sessions running now."))
	check(err)
	x.sessionsStarted, err = m.Int64Counter("framewire.sessions.started", metric.WithUnit("{session}"),
		metric.WithDescription("Sessions started."))
	check(err)
	x.sessionsEnded, err = m.Int64Counter("framewire.sessions.ended", metric.WithUnit("{session}"),
		metric.WithDescription("Sessions ended, by reason (ended, cancelled, error, context_done, setup_failed, start_timeout, shutdown, other)."))
	check(err)
	x.turns, err = m.Int64Counter("framewire.turns", metric.WithUnit("{turn}"),
		metric.WithDescription("Conversation turns ended, by kind (voice, text, bot) and whether they were interrupted."))
	check(err)
	x.turnLatency, err = m.Float64Histogram("framewire.turn.latency", metric.WithUnit("s"),
		metric.WithDescription("From the end of user speech (or the user's text) to the bot's first audio (or text)."),
		metric.WithExplicitBucketBoundaries(latencyBuckets...))
	check(err)
	x.ttfb, err = m.Float64Histogram("framewire.service.ttfb", metric.WithUnit("s"),
		metric.WithDescription("Service time to first byte, by service kind (stt, llm, tts), service and model."),
		metric.WithExplicitBucketBoundaries(latencyBuckets...))
	check(err)
	x.tokens, err = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens used per LLM inference, by gen_ai.token.type (input, output) and model."),
		metric.WithExplicitBucketBoundaries(tokenBuckets...))
	check(err)
	x.toolCalls, err = m.Int64Counter("framewire.tool.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Tool (function) calls settled, by tool name and outcome (ok, error, cancelled)."))
	check(err)
	x.interruptions, err = m.Int64Counter("framewire.interruptions", metric.WithUnit("{interruption}"),
		metric.WithDescription("Interruptions that cut the bot off."))
	check(err)
	x.observerDrops, err = m.Int64Counter("framewire.observer.drops", metric.WithUnit("{event}"),
		metric.WithDescription("Observer events dropped because an observer fell behind."))
	check(err)
	x.queueHighWater, err = m.Int64Histogram("framewire.queue.high_water", metric.WithUnit("{frame}"),
		metric.WithDescription("The deepest a queue got during a session, by queue."),
		metric.WithExplicitBucketBoundaries(queueBuckets...))
	check(err)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return &x, nil
}

// ObserverDrops counts n observer events dropped. [Session.Attach] reports
// a task's drops when it finishes (zero too, so the series exists); call
// it for tasks you run without one.
func (m *Metrics) ObserverDrops(ctx context.Context, n uint64) {
	if m == nil {
		return
	}
	m.observerDrops.Add(ctx, int64(n))
}

// Queue names reported to [Metrics.QueueHighWater]. The WebRTC
// transport records its own queues ("webrtc.output.audio",
// "webrtc.outbound") into framewire.queue.high_water itself.
const (
	// QueuePipeline is the deepest inbox of a task's processors
	// ([pipeline.Task.QueueHighWater]); [Session.Attach] reports it.
	QueuePipeline = "pipeline"
)

// QueueHighWater records the deepest a queue got during a session (call it
// once per queue when the session ends, with a fixed queue name such as
// [QueueOutputAudio], never an id).
func (m *Metrics) QueueHighWater(ctx context.Context, queue string, depth int) {
	if m == nil {
		return
	}
	m.queueHighWater.Record(ctx, int64(depth), m.labels.get(KeyQueue, queue))
}

// sessionStarted and sessionEnded keep the session counters.
func (m *Metrics) sessionStarted(ctx context.Context) {
	m.sessionsActive.Add(ctx, 1)
	m.sessionsStarted.Add(ctx, 1)
}

func (m *Metrics) sessionEnded(ctx context.Context, reason string) {
	m.sessionsActive.Add(ctx, -1)
	m.sessionsEnded.Add(ctx, 1, m.labels.get(KeyReason, reason))
}

func (m *Metrics) turnEnded(ctx context.Context, kind string, interrupted bool) {
	m.turns.Add(ctx, 1, m.labels.turn(kind, interrupted))
}

func (m *Metrics) latency(ctx context.Context, kind string, d time.Duration) {
	m.turnLatency.Record(ctx, d.Seconds(), m.labels.get(KeyKind, kind))
}

func (m *Metrics) serviceTTFB(ctx context.Context, kind, service, model string, d time.Duration) {
	m.ttfb.Record(ctx, d.Seconds(), m.labels.service(kind, service, model))
}

func (m *Metrics) tokenUsage(ctx context.Context, model string, input, output int) {
	if input > 0 {
		m.tokens.Record(ctx, int64(input), m.labels.tokens("input", model))
	}
	if output > 0 {
		m.tokens.Record(ctx, int64(output), m.labels.tokens("output", model))
	}
}

func (m *Metrics) toolCall(ctx context.Context, name, outcome string) {
	m.toolCalls.Add(ctx, 1, m.labels.tool(name, outcome))
}

func (m *Metrics) interruption(ctx context.Context) { m.interruptions.Add(ctx, 1) }

// labelSets builds each label set once and hands out the same option, so
// recording allocates nothing after the first time, and bounds the values
// of every label.
type labelSets struct {
	mu     sync.Mutex
	sets   map[labelKey]metric.MeasurementOption
	values map[attribute.Key]map[string]bool
}

type labelKey struct {
	a, b, c, d string
}

// bound returns v, or "_OTHER" once k has maxLabelValues other values.
// The caller holds mu.
func (l *labelSets) bound(k attribute.Key, v string) string {
	if l.values == nil {
		l.values = map[attribute.Key]map[string]bool{}
	}
	seen := l.values[k]
	if seen == nil {
		seen = map[string]bool{}
		l.values[k] = seen
	}
	if seen[v] {
		return v
	}
	if len(seen) >= maxLabelValues {
		return "_OTHER"
	}
	seen[v] = true
	return v
}

func (l *labelSets) cached(key labelKey, build func() []attribute.KeyValue) metric.MeasurementOption {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o, ok := l.sets[key]; ok {
		return o
	}
	if l.sets == nil {
		l.sets = map[labelKey]metric.MeasurementOption{}
	}
	o := metric.WithAttributeSet(attribute.NewSet(build()...))
	if len(l.sets) < 4*maxLabelValues*maxLabelValues { // the bounded values keep it far below
		l.sets[key] = o
	}
	return o
}

func (l *labelSets) get(k attribute.Key, v string) metric.MeasurementOption {
	return l.cached(labelKey{a: string(k), b: v}, func() []attribute.KeyValue {
		return []attribute.KeyValue{k.String(l.bound(k, v))}
	})
}

func (l *labelSets) turn(kind string, interrupted bool) metric.MeasurementOption {
	return l.cached(labelKey{a: "turn", b: kind, c: strconv.FormatBool(interrupted)}, func() []attribute.KeyValue {
		return []attribute.KeyValue{KeyKind.String(kind), KeyTurnInterrupted.Bool(interrupted)}
	})
}

func (l *labelSets) service(kind, service, model string) metric.MeasurementOption {
	return l.cached(labelKey{a: "ttfb", b: kind, c: service, d: model}, func() []attribute.KeyValue {
		return []attribute.KeyValue{KeyServiceKind.String(kind), KeyService.String(l.bound(KeyService, service)),
			KeyModel.String(l.bound(KeyModel, model))}
	})
}

func (l *labelSets) tokens(typ, model string) metric.MeasurementOption {
	return l.cached(labelKey{a: "tokens", b: typ, c: model}, func() []attribute.KeyValue {
		return []attribute.KeyValue{KeyGenAIOperationName.String("chat"), KeyGenAITokenType.String(typ),
			KeyGenAIRequestModel.String(l.bound(KeyGenAIRequestModel, model))}
	})
}

func (l *labelSets) tool(name, outcome string) metric.MeasurementOption {
	return l.cached(labelKey{a: "tool", b: name, c: outcome}, func() []attribute.KeyValue {
		return []attribute.KeyValue{KeyGenAIToolName.String(l.bound(KeyGenAIToolName, name)), KeyOutcome.String(outcome)}
	})
}
