package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/otelsetup"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// TestExternalModeMeasuresAServerItDidNotStart points the external mode at
// a WebRTC server over loopback whose pipeline echoes the clients' audio,
// with its metrics on a Prometheus endpoint: every client connects, each
// offer and trickle PATCH is timed, the echo's packets come back, and the
// server's counters are read once it has counted every session ended.
func TestExternalModeMeasuresAServerItDidNotStart(t *testing.T) {
	if testing.Short() {
		t.Skip("streams WebRTC sessions")
	}
	otel, err := otelsetup.Setup(context.Background(), otelsetup.Options{ServiceName: "loadbench-test", Prometheus: true, NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = otel.Shutdown(context.Background()) }()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	srv, err := webrtc.NewServer(webrtc.Options{
		Logger:          zap.NewNop(),
		Settings:        webrtctest.LoopbackOnly,
		IncludeLoopback: true,
		MeterProvider:   otel.MeterProvider(),
		NewPipeline: func(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			task := pipeline.NewTask(pipeline.New(s.Input(), &echo{}, s.Output()), pipeline.TaskOptions{
				Logger: zap.NewNop(), AudioOutSampleRate: 16000, IdleTimeout: -1,
			})
			tel.StartSession(ctx, telemetry.SessionOptions{ID: s.ID()}).Attach(task)
			return task, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	signalling := httptest.NewServer(srv)
	defer signalling.Close()
	metrics := httptest.NewServer(otel.MetricsHandler())
	defer metrics.Close()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()

	offerURL, err := offerURLOf(signalling.URL)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	results, err := runExternal(context.Background(), externalConfig{
		offerURL: offerURL, scrape: []string{metrics.URL}, counts: []int{3},
		duration: 1500 * time.Millisecond, warmup: 500 * time.Millisecond, settle: 20 * time.Second,
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("%d results, want 1", len(results))
	}
	r := results[0]
	type shape struct {
		Connected, ConnectFailed, Offers, OfferErrors int
		Patched, Settled, Started, Ended              bool
		Echoed                                        bool
		Lost                                          int
	}
	got := shape{
		Connected: r.Connected, ConnectFailed: r.ConnectFailed, Offers: r.Offer.Count, OfferErrors: r.Offer.Errors,
		Patched: r.Patch.Count > 0 && r.Patch.Errors == 0, Settled: r.Settled && r.ScrapeError == "",
		Started: r.Started == 3, Ended: r.Ended == 3,
		// The echo sends 50 packets a second; anything near it shows the
		// audio came back through the server.
		Echoed: r.ClientInPPS > 25 && r.ClientOutPPS > 25 && r.ClientInMin > 10,
		Lost:   r.Dropped,
	}
	want := shape{Connected: 3, Offers: 3, Patched: true, Settled: true, Started: true, Ended: true, Echoed: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the external run (-want +got):\n%s\nresult: %s", d, out.String())
	}
	if r.Offer.P50MS <= 0 || r.Offer.P50MS > r.Offer.P99MS || r.Offer.P99MS > r.Offer.MaxMS || r.ConnectP50MS <= 0 {
		t.Errorf("latencies out of order: offer %+v, connect p50 %v ms", r.Offer, r.ConnectP50MS)
	}
	if len(r.PerServer) != 1 || r.PerServer[0].URL != metrics.URL || r.PerServer[0].Ended != 3 {
		t.Errorf("per server: %+v", r.PerServer)
	}

	// The output is JSON lines: the run, then the summary.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out.String())
	}
	var line struct {
		Kind   string  `json:"kind"`
		N      int     `json:"n"`
		Offer  latency `json:"offer"`
		Target string  `json:"target"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil || line.Kind != "external" || line.N != 3 || line.Offer.Count != 3 || line.Target != offerURL {
		t.Errorf("the run's line %s: %+v %v", lines[0], line, err)
	}
	if !strings.Contains(lines[1], `"kind":"summary"`) {
		t.Errorf("the last line is not the summary: %s", lines[1])
	}
}

func TestScrapeSumsACounterOverItsLabelSetsAndTakesAnAbsentOneAsZero(t *testing.T) {
	text := `# TYPE framewire_output_underruns_total counter
framewire_output_underruns_total{otel_scope_name="a"} 2
framewire_output_underruns_total{otel_scope_name="b"} 3
# TYPE framewire_sessions_ended_total counter
framewire_sessions_ended_total{reason="ended"} 4
framewire_sessions_ended_total{reason="cancelled"} 1
# TYPE framewire_output_late_frames_total gauge
framewire_output_late_frames_total 9
`
	fams, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	got := []float64{counterSum(fams, metricUnderruns), counterSum(fams, metricEnded), counterSum(fams, metricStarted), counterSum(fams, metricLateFrames)}
	// started is absent; late frames is not a counter here.
	if d := cmp.Diff([]float64{5, 5, 0, 0}, got); d != "" {
		t.Errorf("sums (-want +got):\n%s", d)
	}
	if _, err := parseMetrics(strings.NewReader("framewire_x{ 1\n")); err == nil {
		t.Error("a malformed exposition parsed")
	}
}

func TestPercentileIsTheNearestRank(t *testing.T) {
	d := func(ms ...int) []time.Duration {
		out := make([]time.Duration, len(ms))
		for i, m := range ms {
			out[i] = time.Duration(m) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i
	}
	for _, tc := range []struct {
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{d(7), 0.99, 7 * time.Millisecond},
		{d(3, 1, 2), 0.5, 2 * time.Millisecond},
		{d(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		{d(hundred...), 0.99, 99 * time.Millisecond},
		{d(hundred...), 1, 100 * time.Millisecond},
	} {
		if got := percentile(tc.in, tc.q); got != tc.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.in, tc.q, got, tc.want)
		}
	}
}

func TestOfferURLOfAddsTheOfferRouteToABaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:7861":                "http://127.0.0.1:7861/api/offer",
		"http://127.0.0.1:7861/":               "http://127.0.0.1:7861/api/offer",
		"http://127.0.0.1:7861/api/offer":      "http://127.0.0.1:7861/api/offer",
		"https://bot.example/prefix/api/offer": "https://bot.example/prefix/api/offer",
	} {
		if got, err := offerURLOf(in); err != nil || got != want {
			t.Errorf("offerURLOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:7861", "ftp://x/", "http://"} {
		if _, err := offerURLOf(bad); err == nil {
			t.Errorf("offerURLOf(%q) accepted", bad)
		}
	}
}
