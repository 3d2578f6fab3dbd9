package otelsetup_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/framewire/framewire/telemetry/otelsetup"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// With nothing configured there are no providers: a library given them
// gets nil and records nothing.
func TestNothingConfiguredGivesNoProviders(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "")
	t.Setenv("OTEL_METRICS_EXPORTER", "")
	t.Setenv(otelsetup.EnvMetricsAddr, "")
	p, err := otelsetup.Setup(t.Context(), otelsetup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	if p.TracerProvider() != nil || p.MeterProvider() != nil || p.MetricsHandler() != nil {
		t.Fatalf("providers with nothing configured: %v %v %v", p.TracerProvider(), p.MeterProvider(), p.MetricsHandler())
	}
	if err := p.ServeMetrics(t.Context(), ""); err != nil {
		t.Errorf("ServeMetrics with metrics off: %v, want nil at once", err)
	}
	var none *otelsetup.Providers
	if none.TracerProvider() != nil || none.MeterProvider() != nil || none.Shutdown(t.Context()) != nil {
		t.Fatal("a nil *Providers is not off")
	}
}

// With Prometheus on, what a library records on the MeterProvider is on
// the handler's page, under the Prometheus name.
func TestPrometheusServesWhatTheMeterProviderRecords(t *testing.T) {
	p, err := otelsetup.Setup(t.Context(), otelsetup.Options{Prometheus: true, NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	c, err := p.MeterProvider().Meter("test").Int64Counter("framewire.test.things")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(t.Context(), 2)
	rec := httptest.NewRecorder()
	p.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "framewire_test_things_total 2") {
		t.Errorf("the counter is not on the page:\n%.2000s", rec.Body.String())
	}
}

// An exporter name framewire does not support fails Setup, naming it.
func TestAnUnknownExporterFailsSetup(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	_, err := otelsetup.Setup(t.Context(), otelsetup.Options{})
	if err == nil || !strings.Contains(err.Error(), "zipkin") {
		t.Fatalf("Setup with OTEL_TRACES_EXPORTER=zipkin: %v, want an error naming it", err)
	}
}

// Traces over the real OTLP/HTTP wire, configured from OTEL_* variables
// alone, decoded by a local receiver: the spans and their attributes
// arrive once Shutdown has flushed them, under OTEL_SERVICE_NAME, and
// OTEL_METRICS_EXPORTER=none leaves metrics off. (What package
// telemetry's observer puts on the TracerProvider is its own tests'.)
func TestOTLPHTTPExportFromEnvironment(t *testing.T) {
	var (
		mu    sync.Mutex
		names []string
		attrs = map[string]bool{}
		svc   string
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					svc = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					names = append(names, s.GetName())
					for _, kv := range s.GetAttributes() {
						attrs[kv.GetKey()] = true
					}
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ = proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	}))
	defer recv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "voice-bot")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv(otelsetup.EnvMetricsAddr, "")
	p, err := otelsetup.Setup(t.Context(), otelsetup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	if p.TracerProvider() == nil || p.MeterProvider() != nil {
		t.Fatalf("tracing %v, metrics %v: want traces only", p.TracerProvider() != nil, p.MeterProvider() != nil)
	}
	tracer := p.TracerProvider().Tracer("test")
	ctx, session := tracer.Start(t.Context(), "session")
	session.SetAttributes(attribute.String("framewire.session.id", "s-42"))
	_, chat := tracer.Start(ctx, "chat")
	chat.SetAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.Int64("gen_ai.usage.input_tokens", 40), attribute.Float64("framewire.ttfb_ms", 12.5))
	chat.End()
	session.End()
	if err := p.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(names)
	if d := cmp.Diff([]string{"chat", "session"}, names); d != "" {
		t.Errorf("spans received (-want +got):\n%s", d)
	}
	if svc != "voice-bot" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's voice-bot", svc)
	}
	for _, k := range []string{"gen_ai.operation.name", "gen_ai.usage.input_tokens", "framewire.session.id", "framewire.ttfb_ms"} {
		if !attrs[k] {
			t.Errorf("no span carried %s", k)
		}
	}
}

// ServeMetricsWhile serves /metrics while the program's server runs and
// stops it when that server returns.
func TestServeMetricsWhileTheServerRuns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err := otelsetup.Setup(t.Context(), otelsetup.Options{NoEnv: true, Prometheus: true, MetricsAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	get := func() error {
		res, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	err = p.ServeMetricsWhile(t.Context(), func(context.Context) error {
		var last error
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if last = get(); last == nil {
				return errors.New("served")
			}
		}
		return last
	}, func(err error) { t.Errorf("the endpoint failed: %v", err) })
	if err == nil || err.Error() != "served" {
		t.Fatalf("while the server ran, /metrics: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
	if get() == nil {
		t.Error("/metrics still answers after the server returned")
	}
}
