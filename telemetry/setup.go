package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// EnvMetricsAddr names the environment variable that, when set (for example
// to 127.0.0.1:9464), turns on the Prometheus exporter; serve it with
// [Telemetry.ServeMetrics].
const EnvMetricsAddr = "FRAMEWIRE_METRICS_ADDR"

// Options configure [Setup]. The zero value reads everything from the
// environment: traces go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set and OTEL_TRACES_EXPORTER is
// not "none"; metrics go over OTLP on the same terms
// (OTEL_METRICS_EXPORTER), and to Prometheus when FRAMEWIRE_METRICS_ADDR is
// set or OTEL_METRICS_EXPORTER names "prometheus".
type Options struct {
	// ServiceName is service.name when OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES do not set one. Default: "framewire".
	ServiceName string
	// Attributes are added to the resource; the environment overrides them.
	Attributes []attribute.KeyValue

	// TracerProvider, when set, is used instead of one built from the
	// environment (tests pass one with a span recorder). Setup does not
	// shut it down.
	TracerProvider trace.TracerProvider
	// MeterProvider, when set, is used instead of one built from the
	// environment. Setup does not shut it down.
	MeterProvider metric.MeterProvider
	// Prometheus turns the Prometheus exporter on whatever the environment
	// says (MetricsHandler serves it).
	Prometheus bool
	// NoEnv reads nothing from the environment: only the providers given
	// here are used (tests and the inspector set it).
	NoEnv bool
	// MetricsAddr is where ServeMetrics listens when it is given no
	// address. Default: $FRAMEWIRE_METRICS_ADDR.
	MetricsAddr string

	// LLMSystem is gen_ai.system for LLM services that do not name their
	// own (see [GenAISystemer]). Default: "_OTHER", as the conventions say.
	LLMSystem string
	// TurnGrace is how long a turn stays open after the bot has finished,
	// so that an inference a tool result runs belongs to the same turn.
	// Default: 1.5s.
	TurnGrace time.Duration
}

// Telemetry is the configured telemetry of one process: a tracer, the
// instruments and their exporters. The zero value and a nil *Telemetry are
// off. It is safe for concurrent use.
type Telemetry struct {
	opts     Options
	tracer   trace.Tracer         // nil when tracing is off
	metrics  *Metrics             // nil when metrics are off
	mp       metric.MeterProvider // nil when metrics are off
	handler  http.Handler         // the Prometheus endpoint, or nil
	shutdown []func(context.Context) error

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
}

// Setup configures telemetry from opts and the standard OTEL_* variables:
// the OTLP exporters read OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT,
// _INSECURE and their per-signal variants themselves, and the resource
// reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. The protocol is
// OTEL_EXPORTER_OTLP_PROTOCOL (or the per-signal one): "http/protobuf",
// the default, or "grpc". Call Shutdown when done: it flushes what is
// buffered.
func Setup(ctx context.Context, opts Options) (*Telemetry, error) {
	t := &Telemetry{opts: opts, sessions: map[*Session]struct{}{}}
	if t.opts.MetricsAddr == "" && !opts.NoEnv {
		t.opts.MetricsAddr = os.Getenv(EnvMetricsAddr)
	}
	var (
		res     *resource.Resource
		resOnce bool
	)
	getResource := func() (*resource.Resource, error) {
		if resOnce {
			return res, nil
		}
		resOnce = true
		name := opts.ServiceName
		if name == "" {
			name = "framewire"
		}
		attrs := append([]attribute.KeyValue{attribute.String("service.name", name)}, opts.Attributes...)
		var err error
		// Later detectors win: the environment overrides the defaults.
		res, err = resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithFromEnv())
		if err != nil && !errors.Is(err, resource.ErrPartialResource) {
			return nil, fmt.Errorf("telemetry: resource: %w", err)
		}
		return res, nil
	}

	fail := func(err error) (*Telemetry, error) {
		_ = t.Shutdown(ctx)
		return nil, err
	}

	// Traces.
	switch {
	case opts.TracerProvider != nil:
		t.tracer = opts.TracerProvider.Tracer(ScopeName)
	case !opts.NoEnv:
		on, err := exporterOn("OTEL_TRACES_EXPORTER", "TRACES")
		if err != nil {
			return fail(err)
		}
		if on {
			exp, err := newTraceExporter(ctx)
			if err != nil {
				return fail(err)
			}
			r, err := getResource()
			if err != nil {
				return fail(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(r))
			t.shutdown = append(t.shutdown, tp.Shutdown)
			t.tracer = tp.Tracer(ScopeName)
		}
	}

	// Metrics.
	mp := opts.MeterProvider
	if mp == nil && (!opts.NoEnv || opts.Prometheus) {
		var readers []sdkmetric.Option
		otlpOn, err := false, error(nil)
		if !opts.NoEnv {
			otlpOn, err = exporterOn("OTEL_METRICS_EXPORTER", "METRICS")
			if err != nil {
				return fail(err)
			}
		}
		if otlpOn {
			exp, err := newMetricExporter(ctx)
			if err != nil {
				return fail(err)
			}
			readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
		}
		if opts.Prometheus || t.opts.MetricsAddr != "" || (!opts.NoEnv && envListHas("OTEL_METRICS_EXPORTER", "prometheus")) {
			reg := promclient.NewRegistry()
			exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
			if err != nil {
				return fail(fmt.Errorf("telemetry: prometheus exporter: %w", err))
			}
			readers = append(readers, sdkmetric.WithReader(exp))
			t.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
		}
		if len(readers) > 0 {
			r, err := getResource()
			if err != nil {
				return fail(err)
			}
			p := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(r))...)
			t.shutdown = append(t.shutdown, p.Shutdown)
			mp = p
		}
	}
	if mp != nil {
		m, err := NewMetrics(mp)
		if err != nil {
			return fail(fmt.Errorf("telemetry: instruments: %w", err))
		}
		t.metrics = m
		t.mp = mp
	}
	return t, nil
}

// exporterOn reports whether the OTLP exporter of a signal is on: the
// variable (OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER) is unset or
// names "otlp", and an OTLP endpoint is configured.
func exporterOn(variable, signal string) (bool, error) {
	v := strings.TrimSpace(os.Getenv(variable))
	if v != "" {
		for _, name := range strings.Split(v, ",") {
			switch strings.TrimSpace(name) {
			case "otlp", "none", "prometheus":
			default:
				return false, fmt.Errorf("telemetry: %s=%q: framewire supports otlp, prometheus (metrics) and none", variable, v)
			}
		}
		if !envListHas(variable, "otlp") {
			return false, nil
		}
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != "", nil
}

func envListHas(variable, name string) bool {
	for _, v := range strings.Split(os.Getenv(variable), ",") {
		if strings.TrimSpace(v) == name {
			return true
		}
	}
	return false
}

// protocol returns the OTLP protocol of a signal, as the specification
// says: the per-signal variable, then the general one, then http/protobuf.
func protocol(signal string) (string, error) {
	p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if p == "" {
		p = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("telemetry: OTLP protocol %q is not supported (http/protobuf or grpc)", p)
}

func newTraceExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	p, err := protocol("TRACES")
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	if p == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP trace exporter (%s): %w", p, err)
	}
	return exp, nil
}

func newMetricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	p, err := protocol("METRICS")
	if err != nil {
		return nil, err
	}
	var exp sdkmetric.Exporter
	if p == "grpc" {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP metric exporter (%s): %w", p, err)
	}
	return exp, nil
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
// metrics are off. Give it to the packages that own instruments of their
// own (webrtc.Options.MeterProvider, cluster.FrontDoorOptions and the
// worker's webrtc.Options), so their metrics go to the same exporters.
func (t *Telemetry) MeterProvider() metric.MeterProvider {
	if t == nil || t.mp == nil {
		return nil
	}
	return t.mp
}

// MetricsHandler returns the Prometheus endpoint's handler, or nil when the
// Prometheus exporter is off.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t == nil {
		return nil
	}
	return t.handler
}

// ServeMetricsWhile runs serve, the program's own server, with the metrics
// endpoint ([Telemetry.ServeMetrics] at its configured address) alongside
// it: when serve returns, the endpoint is stopped and waited for, so the
// program owns both. A failing endpoint does not stop serve: its error is
// given to onErr (which may be nil). It returns serve's error.
func (t *Telemetry) ServeMetricsWhile(ctx context.Context, serve func(ctx context.Context) error, onErr func(error)) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := t.ServeMetrics(ctx, ""); err != nil && onErr != nil {
			onErr(err)
		}
	})
	err := serve(ctx)
	stop()
	wg.Wait()
	return err
}

// ServeMetrics serves MetricsHandler at /metrics on its own listener at
// addr (Options.MetricsAddr, $FRAMEWIRE_METRICS_ADDR, when addr is empty)
// until ctx ends, then shuts the server down and returns nil. With no
// address or no Prometheus exporter it returns nil at once. It returns
// when the listener fails, with the error.
func (t *Telemetry) ServeMetrics(ctx context.Context, addr string) error {
	if addr == "" && t != nil {
		addr = t.opts.MetricsAddr
	}
	h := t.MetricsHandler()
	if addr == "" || h == nil {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("telemetry: metrics listener: %w", err)
	}
	return ServeMetricsOn(ctx, ln, h)
}

// ServeMetricsOn serves h at /metrics on ln until ctx ends. It closes ln.
func ServeMetricsOn(ctx context.Context, ln net.Listener, h http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("telemetry: metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("telemetry: metrics server: %w", err)
	}
	return nil
}

// Shutdown ends the sessions still open (reason "shutdown"), then flushes
// and stops the exporters Setup made, bounded by ctx.
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
	var errs []error
	for _, fn := range t.shutdown {
		if err := fn(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	t.shutdown = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}
