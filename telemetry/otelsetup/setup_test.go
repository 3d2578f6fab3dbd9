package otelsetup_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

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
