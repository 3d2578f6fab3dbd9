package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A handful of WebSocket sessions on a quiet machine: the clients stream
// both ways, the outputs keep time, and every client gets the 50 frames a
// second the echo plays back, without a gap.
func TestWebSocketModeStreamsAHandfulOfSessionsBothWays(t *testing.T) {
	if testing.Short() {
		t.Skip("streams for 3 s")
	}
	var out bytes.Buffer
	results, err := runWebSocket(context.Background(), config{ns: "4", warmup: time.Second, duration: 2 * time.Second}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("%d results, want 1", len(results))
	}
	r := results[0]
	if r.Transport != "websocket" || r.Kind != "run" || r.N != 4 || r.Sessions != 4 {
		t.Errorf("labelled %q %q, %d of %d sessions; want a websocket run of 4 of 4", r.Transport, r.Kind, r.Sessions, r.N)
	}
	if r.Lost != 0 || r.InGaps != 0 {
		t.Errorf("%d sessions lost, %d inbound gaps; want none", r.Lost, r.InGaps)
	}
	// A neighbour on a shared machine can hold the output's clock past a
	// frame now and then: a late frame in a hundred is let pass (three
	// under the race detector, which slows the server tenfold).
	if limit := tolerated(r); r.Underruns > limit {
		t.Errorf("%d underruns, want at most %d", r.Underruns, limit)
	}
	// The window's edges fall anywhere in a frame: a frame either way.
	if r.ClientInRatio < 0.97 || r.ClientInRatio > 1.03 {
		t.Errorf("the clients got %.3f of the expected frames (%.1f a second of %.0f)", r.ClientInRatio, r.ClientInFPS, r.ExpectedFPS)
	}
	if r.ClientOutFPS < 60 || r.ClientOutFPS > 65 {
		t.Errorf("the clients sent %.1f frames a second, want 62.5 (512 bytes every 16 ms)", r.ClientOutFPS)
	}
	if r.InFPS < 48 || r.InFPS > 52 {
		t.Errorf("the inputs pushed %.1f frames a second, want 50", r.InFPS)
	}
	if r.OK != (r.Underruns == 0) || !r.ClientsOK || r.CPUUsPerFrame <= 0 {
		t.Errorf("ok %v with %d underruns, clients_ok %v, CPU %.0f µs a frame", r.OK, r.Underruns, r.ClientsOK, r.CPUUsPerFrame)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("output %q, want a run line and a summary", out.String())
	}
	var summary struct {
		Kind      string `json:"kind"`
		Transport string `json:"transport"`
		Largest   int    `json:"largest_n_without_underruns"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &summary); err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{true: 4, false: 0}[r.OK]; summary.Kind != "summary" || summary.Transport != "websocket" || summary.Largest != want {
		t.Errorf("summary %+v, want websocket's with %d held", summary, want)
	}
}

// tolerated is how many underruns the test lets pass in r's window.
func tolerated(r wsResult) uint64 {
	frames := r.OutFPS * r.WindowS * float64(r.N)
	if raceEnabled {
		return uint64(frames * 3 / 100)
	}
	return uint64(frames / 100)
}

func TestWebSocketIdleSessionsExpectNoAudio(t *testing.T) {
	r := wsReport(config{idle: true}, 3, 3, 2, 0.1, wsTotals{}, wsTotals{sent: 300}, wsSeen{Clients: 3, Gaps: 3, GapClients: 3, GapMaxMS: 2000})
	if r.ExpectedFPS != 0 || r.InGaps != 0 || !r.OK || !r.ClientsOK {
		t.Errorf("idle: expected %.0f frames a second, %d gaps, ok %v, clients_ok %v; want 0, 0, true, true", r.ExpectedFPS, r.InGaps, r.OK, r.ClientsOK)
	}
	r = wsReport(config{}, 3, 3, 2, 0.1, wsTotals{}, wsTotals{sent: 300}, wsSeen{Clients: 3, FramesIn: 280})
	if r.ClientsOK {
		t.Errorf("streaming: %.3f of the expected frames passed", r.ClientInRatio)
	}
}

func TestBusyIsTheCPULineLessIdleIowaitAndSteal(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	stat := "cpu  100 20 30 4000 50 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"
	if got, want := busyIn(stat), 163*10*time.Millisecond; got != want {
		t.Errorf("busy %v, want %v", got, want)
	}
	if got := busyIn("intr 1 2 3"); got != 0 {
		t.Errorf("busy of no cpu line = %v, want 0", got)
	}
}
