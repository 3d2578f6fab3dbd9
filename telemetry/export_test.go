package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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

// Telemetry off (no providers, which is what otelsetup gives with nothing
// configured, as its tests check): no session, no observer, nothing on the
// frame path.
func TestOffAddsNoObserver(t *testing.T) {
	tel, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
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
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}
