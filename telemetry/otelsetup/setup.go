// Package otelsetup sets up OpenTelemetry for a framewire program: the
// SDK's TracerProvider and MeterProvider, the OTLP exporters (HTTP or
// gRPC), the standard OTEL_* environment variables through the SDK's own
// handling, and the Prometheus exporter with its /metrics endpoint
// (FRAMEWIRE_METRICS_ADDR).
//
// It is the program's half of OpenTelemetry-Go's rule for instrumented
// libraries: the libraries (package telemetry's observer,
// transports/webrtc, cluster) take a TracerProvider or MeterProvider and
// own their instruments; the program, and only the program, builds the
// SDK and its exporters, here:
//
//	otel, err := otelsetup.Setup(ctx, otelsetup.Options{ServiceName: "voice-bot"})
//	if err != nil { return err }
//	defer otel.Shutdown(context.WithoutCancel(ctx))
//	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
//	srv, err := webrtc.NewServer(webrtc.Options{MeterProvider: otel.MeterProvider(), ...})
package otelsetup

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
// [Providers.ServeMetrics].
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
	// Prometheus turns the Prometheus exporter on whatever the environment
	// says (MetricsHandler serves it).
	Prometheus bool
	// NoEnv reads nothing from the environment (tests set it).
	NoEnv bool
	// MetricsAddr is where ServeMetrics listens when it is given no
	// address. Default: $FRAMEWIRE_METRICS_ADDR.
	MetricsAddr string
}

// Providers are the SDK providers of one process and their exporters. A
// nil *Providers is off. It is safe for concurrent use.
type Providers struct {
	opts     Options
	tp       trace.TracerProvider // nil when tracing is off
	mp       metric.MeterProvider // nil when metrics are off
	handler  http.Handler         // the Prometheus endpoint, or nil
	shutdown []func(context.Context) error
}

// Setup builds the providers from opts and the standard OTEL_* variables:
// the OTLP exporters read OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT,
// _INSECURE and their per-signal variants themselves, and the resource
// reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. The protocol is
// OTEL_EXPORTER_OTLP_PROTOCOL (or the per-signal one): "http/protobuf",
// the default, or "grpc". Call Shutdown when done: it flushes what is
// buffered.
func Setup(ctx context.Context, opts Options) (*Providers, error) {
	t := &Providers{opts: opts}
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
			return nil, fmt.Errorf("otelsetup: resource: %w", err)
		}
		return res, nil
	}

	fail := func(err error) (*Providers, error) {
		_ = t.Shutdown(ctx)
		return nil, err
	}

	// Traces.
	if !opts.NoEnv {
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
			t.tp = tp
		}
	}

	// Metrics.
	var mp metric.MeterProvider
	if !opts.NoEnv || opts.Prometheus {
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
				return fail(fmt.Errorf("otelsetup: prometheus exporter: %w", err))
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
	t.mp = mp
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
				return false, fmt.Errorf("otelsetup: %s=%q: framewire supports otlp, prometheus (metrics) and none", variable, v)
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
	return "", fmt.Errorf("otelsetup: OTLP protocol %q is not supported (http/protobuf or grpc)", p)
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
		return nil, fmt.Errorf("otelsetup: OTLP trace exporter (%s): %w", p, err)
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
		return nil, fmt.Errorf("otelsetup: OTLP metric exporter (%s): %w", p, err)
	}
	return exp, nil
}

// TracerProvider returns the provider spans go to, or nil when tracing
// is off.
func (t *Providers) TracerProvider() trace.TracerProvider {
	if t == nil || t.tp == nil {
		return nil
	}
	return t.tp
}

// MeterProvider returns the provider metrics go to, or nil when metrics
// are off. Give it to every package that takes one.
func (t *Providers) MeterProvider() metric.MeterProvider {
	if t == nil || t.mp == nil {
		return nil
	}
	return t.mp
}

// MetricsHandler returns the Prometheus endpoint's handler, or nil when the
// Prometheus exporter is off.
func (t *Providers) MetricsHandler() http.Handler {
	if t == nil {
		return nil
	}
	return t.handler
}

// ServeMetricsWhile runs serve, the program's own server, with the metrics
// endpoint ([Providers.ServeMetrics] at its configured address) alongside
// it: when serve returns, the endpoint is stopped and waited for, so the
// program owns both. A failing endpoint does not stop serve: its error is
// given to onErr (which may be nil). It returns serve's error.
func (t *Providers) ServeMetricsWhile(ctx context.Context, serve func(ctx context.Context) error, onErr func(error)) error {
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
func (t *Providers) ServeMetrics(ctx context.Context, addr string) error {
	if addr == "" && t != nil {
		addr = t.opts.MetricsAddr
	}
	h := t.MetricsHandler()
	if addr == "" || h == nil {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("otelsetup: metrics listener: %w", err)
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
		return fmt.Errorf("otelsetup: metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("otelsetup: metrics server: %w", err)
	}
	return nil
}

// Shutdown flushes and stops the exporters Setup made, bounded by ctx.
// End the telemetry observer's sessions first (telemetry.Telemetry's
// Shutdown), so their spans are flushed too.
func (t *Providers) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, fn := range t.shutdown {
		if err := fn(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	t.shutdown = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("otelsetup: shutdown: %w", err)
	}
	return nil
}
