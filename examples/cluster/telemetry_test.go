package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pion "github.com/pion/webrtc/v4"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/framewire/framewire/internal/natstest"
)

// TestWorkerServesTheTransportsMetrics runs the worker command with
// -metrics-addr: it announces its metrics endpoint, and a session's
// signalling and end show up there as the transport's and the session's
// metrics, in the Prometheus text format.
func TestWorkerServesTheTransportsMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server and a WebRTC session")
	}
	metricsURL, base := runWorker(t, "m1", "-capacity", "2")

	client := &http.Client{Timeout: 20 * time.Second}
	pc, _ := connect(t, client, base)
	if got := scrape(t, client, metricsURL); got["framewire_sessions_active"] != 1 {
		t.Errorf("framewire_sessions_active = %v while the session runs, want 1", got["framewire_sessions_active"])
	}
	_ = pc.Close()

	// The transport reports a session's output counters when it ends.
	want := map[string]float64{
		`framewire_signalling_responses_total{http_response_status_code="200"}`: 1,
		"framewire_sessions_started_total":                                      1,
		"framewire_sessions_active":                                             0,
	}
	// The session ends when the server sees the client's close; should
	// that be lost on a loaded machine, when ICE gives up on the client:
	// the bound covers both.
	var got map[string]float64
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = scrape(t, client, metricsURL)
		// The session's output counters come with its end; zero
		// underruns make their series.
		if _, ok := got["framewire_output_underruns_total"]; ok && got["framewire_sessions_active"] == 0 {
			break
		}
	}
	picked := map[string]float64{}
	for k := range want {
		if v, ok := got[k]; ok {
			picked[k] = v
		}
	}
	if d := cmp.Diff(want, picked); d != "" {
		t.Errorf("the worker's metrics after one session (-want +got):\n%s", d)
	}
	// The level the load governor left, 0 to 10; a build without Opus
	// (PCMU) has none.
	if c, ok := got["framewire_opus_complexity"]; !haveOpus && ok {
		t.Errorf("framewire_opus_complexity = %v in a build without Opus", c)
	} else if haveOpus && (!ok || c < 0 || c > 10) {
		t.Errorf("framewire_opus_complexity = %v (present: %v) after the session ended, want a level 0 to 10", c, ok)
	}
}

// runWorker runs the worker command in this process with id, its own
// embedded NATS server, loopback ICE, and signalling and metrics on free
// ports, plus args; it returns the metrics URL and the signalling base
// URL. The worker is stopped, and its error checked, when the test ends.
func runWorker(t *testing.T, id string, args ...string) (metricsURL, base string) {
	t.Helper()
	url := natstest.Embedded(t)
	a := runCommand(t, workerCommand, append([]string{"-nats", url, "-id", id, "-loopback-only",
		"-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0"}, args...),
		"worker "+id+" metrics on ", "worker "+id+" signalling on ")
	return a[0], a[1]
}

// runCommand runs command in this process with args until the test ends,
// then checks its error, and returns what it announced after each of
// prefixes on its stdout (see announced).
func runCommand(t *testing.T, command func(ctx context.Context, args []string, stdout, stderr io.Writer) error, args []string, prefixes ...string) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- command(ctx, args, pw, io.Discard)
		_ = pw.Close()
	}()
	addrs := announced(pr, prefixes...)
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("the command after its context ended: %v", err)
		}
	})
	select {
	case a := <-addrs:
		return a
	case err := <-ran:
		ran <- err
		t.Fatalf("the command exited: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatalf("the command did not announce %q", prefixes)
	}
	return nil
}

// connect makes a session with the worker at base and waits until its
// peer connection and its chat data channel are open.
func connect(t *testing.T, client *http.Client, base string) (*pion.PeerConnection, *pion.DataChannel) {
	t.Helper()
	pc, chat := offererWithChat(t)
	var ans struct {
		SDP  string `json:"sdp"`
		Type string `json:"type"`
	}
	offer := map[string]any{"sdp": pc.LocalDescription().SDP, "type": "offer", "pc_id": nil, "restart_pc": false}
	if status := postJSON(t, client, base+"/api/offer", offer, &ans); status != http.StatusOK || ans.Type != "answer" {
		t.Fatalf("POST /api/offer: %d %+v", status, ans)
	}
	open := make(chan struct{})
	chat.OnOpen(func() { close(open) })
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: ans.SDP}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-open:
	case <-time.After(20 * time.Second):
		t.Fatal("the session's data channel did not open")
	}
	return pc, chat
}

// scrape reads a Prometheus text endpoint into series name{labels} →
// value (counters, gauges; histograms are left out).
func scrape(t *testing.T, c *http.Client, url string) map[string]float64 {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			key := name
			var labels []string
			for _, l := range m.GetLabel() {
				if !strings.HasPrefix(l.GetName(), "otel_scope_") {
					labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
				}
			}
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] += m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] += m.GetGauge().GetValue()
			}
		}
	}
	return out
}

func TestLocalGivesEachChildItsOwnPort(t *testing.T) {
	for _, tc := range []struct {
		base string
		want []string
	}{
		{"", []string{"", "", ""}},
		{"127.0.0.1:9464", []string{"127.0.0.1:9464", "127.0.0.1:9465", "127.0.0.1:9466"}},
		{"127.0.0.1:0", []string{"127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"}},
		{"[::1]:9000", []string{"[::1]:9000", "[::1]:9001", "[::1]:9002"}},
		{":9464", []string{":9464", ":9465", ":9466"}},
	} {
		at, err := portSeries(tc.base, 3)
		if err != nil {
			t.Errorf("%q: %v", tc.base, err)
			continue
		}
		got := []string{at(0), at(1), at(2)}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.base, d)
		}
	}
	for _, bad := range []string{"9464", "host:x", "host:-1", "host:65535"} {
		if _, err := portSeries(bad, 3); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// announced reads a command's stdout from r until it has printed a line
// starting with each of prefixes, and sends what follows each prefix, in
// the order of prefixes. It reads (and discards) the rest until r ends, so
// the command never blocks on its stdout.
func announced(r io.Reader, prefixes ...string) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		got := make([]string, len(prefixes))
		left := len(prefixes)
		sc := bufio.NewScanner(r)
		for left > 0 && sc.Scan() {
			for i, p := range prefixes {
				if v, ok := strings.CutPrefix(sc.Text(), p); ok && got[i] == "" {
					got[i] = v
					left--
				}
			}
		}
		if left == 0 {
			out <- got
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return out
}
