package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/otelsetup"
)

// runTextTurn runs one text turn with a tool call through a real pipeline
// with the session attached, and ends it.
func runTextTurn(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}),
			llm.UsageEvent(frames.LLMTokenUsage{PromptTokens: 40, CompletionTokens: 9})},
		[]llm.Event{llm.TextEvent("Sunny."), llm.UsageEvent(frames.LLMTokenUsage{PromptTokens: 60, CompletionTokens: 5})},
	)}
	weather := llm.NewFunction("get_weather", "weather", func(ctx context.Context, call llm.FunctionCallParams, a weatherArgs) error {
		return call.Result("sunny")
	})
	svc := llm.NewService(model, llm.ServiceOptions{Name: "LLM"})
	if err := svc.Register(weather); err != nil {
		t.Fatal(err)
	}
	conv := llm.NewContext()
	conv.SetTools(llm.Tools(weather))
	pair := llm.NewPair(conv, llm.PairOptions{})
	task := pipeline.NewTask(pipeline.New(pair.User(), svc, pair.Assistant()), pipeline.TaskOptions{EnableMetrics: true, EnableUsageMetrics: true})
	sess := tel.StartSession(t.Context(), telemetry.SessionOptions{ID: "s-42"})
	sess.Attach(task)
	task.QueueFrame(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("Weather?")}, RunLLM: true})
	done := make(chan error, 1)
	go func() { done <- task.Run(t.Context()) }()
	deadline := time.Now().Add(5 * time.Second)
	for conv.Len() < 4 && time.Now().Before(deadline) { // user, tool call, tool result, answer
		time.Sleep(2 * time.Millisecond)
	}
	task.EndWhenDone()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// setup builds the providers from opts, as a program does, and the
// observer on them; both are shut down when the test ends, the observer
// first.
func setup(t *testing.T, opts otelsetup.Options) (*otelsetup.Providers, *telemetry.Telemetry) {
	t.Helper()
	otel, err := otelsetup.Setup(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = otel.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return otel, tel
}

// The Prometheus endpoint: names (with unit suffixes), types, units and
// label sets, parsed with the Prometheus text parser; no session id.
func TestPrometheusEndpointNamesTypesUnitsAndLabels(t *testing.T) {
	otel, tel := setup(t, otelsetup.Options{Prometheus: true, NoEnv: true})
	runTextTurn(t, tel)

	srv := httptest.NewServer(otel.MetricsHandler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(body), "s-42") {
		t.Error("the session id is in the metrics")
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	type fam struct {
		Type   dto.MetricType
		Labels []string
	}
	got := map[string]fam{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "framewire_") && !strings.HasPrefix(name, "gen_ai_") {
			continue
		}
		var labels []string
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
		sort.Strings(labels)
		got[name] = fam{f.GetType(), labels}
	}
	want := map[string]fam{
		"framewire_sessions_active":        {dto.MetricType_GAUGE, nil},
		"framewire_sessions_started_total": {dto.MetricType_COUNTER, nil},
		"framewire_sessions_ended_total":   {dto.MetricType_COUNTER, []string{"reason"}},
		"framewire_turns_total":            {dto.MetricType_COUNTER, []string{"framewire_turn_interrupted", "kind"}},
		"framewire_turn_latency_seconds":   {dto.MetricType_HISTOGRAM, []string{"kind"}},
		"framewire_service_ttfb_seconds":   {dto.MetricType_HISTOGRAM, []string{"framewire_service", "framewire_service_kind", "model"}},
		"gen_ai_client_token_usage":        {dto.MetricType_HISTOGRAM, []string{"gen_ai_operation_name", "gen_ai_request_model", "gen_ai_token_type"}},
		"framewire_tool_calls_total":       {dto.MetricType_COUNTER, []string{"framewire_outcome", "gen_ai_tool_name"}},
		"framewire_queue_high_water":       {dto.MetricType_HISTOGRAM, []string{"queue"}},
		"framewire_observer_drops_total":   {dto.MetricType_COUNTER, nil},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("metric families (-want +got):\n%s\n%s", d, body)
	}
	for _, s := range []string{`framewire_sessions_ended_total{reason="ended"} 1`, `framewire_tool_calls_total{framewire_outcome="ok",gen_ai_tool_name="get_weather"} 1`,
		`framewire_queue_high_water_count{queue="pipeline"} 1`, // Session.Attach reports the task's at its end
		`framewire_observer_drops_total 0`,                     // zero is a value: the series exists
	} {
		if !strings.Contains(string(body), s) {
			t.Errorf("missing %s", s)
		}
	}
}

// Traces over the real OTLP/HTTP wire, configured from OTEL_* variables
// alone, decoded by a local receiver.
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
	otel, tel := setup(t, otelsetup.Options{})
	if !tel.Tracing() || tel.Metrics() != nil {
		t.Fatalf("tracing %v, metrics %v: want traces only", tel.Tracing(), tel.Metrics() != nil)
	}
	runTextTurn(t, tel)
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := otel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(names)
	if d := cmp.Diff([]string{"chat", "chat", "execute_tool get_weather", "session", "turn"}, names); d != "" {
		t.Errorf("spans received (-want +got):\n%s", d)
	}
	if svc != "voice-bot" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's voice-bot", svc)
	}
	for _, k := range []string{"gen_ai.operation.name", "gen_ai.system", "gen_ai.usage.input_tokens", "gen_ai.tool.name", "gen_ai.tool.call.id", "framewire.session.id", "framewire.ttfb_ms"} {
		if !attrs[k] {
			t.Errorf("no span carried %s", k)
		}
	}
}

// Telemetry off: no session, no observer, nothing on the frame path.
func TestOffAddsNoObserver(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "")
	t.Setenv(otelsetup.EnvMetricsAddr, "")
	otel, tel := setup(t, otelsetup.Options{})
	if tel.Enabled() {
		t.Fatal("telemetry on with nothing configured")
	}
	sess := tel.StartSession(t.Context(), telemetry.SessionOptions{ID: "x"})
	if sess != nil || sess.Observer() != nil {
		t.Fatal("a session with telemetry off")
	}
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}), pipeline.TaskOptions{})
	sess.Attach(task) // no-op
	sess.End("ended")
	task.QueueFrame(&frames.Text{Text: "a"})
	task.EndWhenDone()
	if err := task.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if otel.MetricsHandler() != nil {
		t.Error("a metrics handler with metrics off")
	}
	if err := otel.ServeMetrics(t.Context(), ""); err != nil {
		t.Error(err)
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
	otel, _ := setup(t, otelsetup.Options{NoEnv: true, Prometheus: true, MetricsAddr: addr})
	get := func() error {
		res, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	err = otel.ServeMetricsWhile(t.Context(), func(context.Context) error {
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
