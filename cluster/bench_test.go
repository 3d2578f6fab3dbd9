package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/natstest"
)

// BenchmarkOffer measures the signalling latency the front door adds: the
// round trip of POST /api/offer (a new session, answered once the
// worker's ICE gathering is done) straight to the worker's webrtc.Server
// and through a front door and NATS, on loopback. It reports the p50 and
// p99 of the round trip; the client's own gathering and connecting are
// outside the measurement.
func BenchmarkOffer(b *testing.B) {
	direct, fd := benchCluster(b)
	for _, tc := range []struct{ name, url string }{
		{"direct", direct + "/api/offer"},
		{"frontdoor", fd + "/api/offer"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.StopTimer()
			for range b.N {
				c, sdp := newClient(b)
				b.StartTimer()
				start := time.Now()
				status, ans := post(b, tc.url, offerBody{SDP: sdp})
				lat = append(lat, time.Since(start))
				b.StopTimer()
				if status != http.StatusOK {
					b.Fatalf("POST: %d", status)
				}
				c.apply(ans)
				c.waitOpen()
				_ = c.pc.Close()
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkStart isolates what the front door adds, the NATS round trip
// and the two envelopes, on POST /start, which the Server answers without
// ICE work.
func BenchmarkStart(b *testing.B) {
	direct, fd := benchCluster(b)
	for _, tc := range []struct{ name, url string }{
		{"direct", direct + "/start"},
		{"frontdoor", fd + "/start"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for range b.N {
				start := time.Now()
				if status, raw := do(b, http.MethodPost, tc.url, map[string]any{}); status != http.StatusOK {
					b.Fatalf("POST /start: %d %s", status, raw)
				}
				lat = append(lat, time.Since(start))
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkConnect is BenchmarkStart for the WebSocket transport's POST
// /connect: straight to the worker's websocket.Server and through a front
// door, which relays it on the WebSocket queue group. The socket that
// follows goes to the worker either way and is not measured.
func BenchmarkConnect(b *testing.B) {
	url := natstest.Embedded(b)
	w := startWebSocketWorker(b, url, "w", 10, 10)
	direct := httptest.NewServer(w.WebSocketServer())
	b.Cleanup(direct.Close)
	fd := startFrontDoor(b, url)
	fd.waitWorkers(b, "w")
	for _, tc := range []struct{ name, url string }{
		{"direct", direct.URL + "/connect"},
		{"frontdoor", fd.url("/connect")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for range b.N {
				start := time.Now()
				if status, raw := do(b, http.MethodPost, tc.url, map[string]any{}); status != http.StatusOK {
					b.Fatalf("POST /connect: %d %s", status, raw)
				}
				lat = append(lat, time.Since(start))
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
}

// benchCluster runs one worker and a front door; it returns the base URLs
// of the worker's Server, served directly, and of the front door.
func benchCluster(b *testing.B) (string, string) {
	url := natstest.Embedded(b)
	w, err := NewWorker(natstest.Connect(b, url), testServer(10000), WorkerOptions{ID: "w", Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	direct := httptest.NewServer(w.Server())
	b.Cleanup(direct.Close)
	fd := startFrontDoor(b, url)
	fd.waitWorkers(b, "w")

	return direct.URL, fd.url("")
}

// offerEnvelope is a request as a front door sends it for a browser's
// offer of about 4 KB.
func offerEnvelope(b *testing.B) []byte {
	sdp := strings.Repeat("a=candidate:1 1 udp 2130706431 192.0.2.1 50000 typ host\r\n", 70)
	body, _ := json.Marshal(map[string]any{"sdp": sdp, "type": "offer", "pc_id": nil, "restart_pc": false})
	data, err := json.Marshal(request{V: Version, Kind: kindNew, Method: http.MethodPost, Path: "/api/offer",
		Header: http.Header{"Content-Type": {"application/json"}}, Remote: "192.0.2.1:5000", Body: body})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkDecodeRequest is the worker's parse of an offer's envelope.
func BenchmarkDecodeRequest(b *testing.B) {
	data := offerEnvelope(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRequest(data, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeReply is the front door's parse of an answer's reply.
func BenchmarkDecodeReply(b *testing.B) {
	data, err := json.Marshal(reply{V: Version, Worker: "w1", Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: offerEnvelope(b), PCID: "6f1c1f5e-6a55-4b43-9a43-0d3c3f7b6b1e"})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeReply(data, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPCIDOf is the front door's look at a client body for its
// pc_id.
func BenchmarkPCIDOf(b *testing.B) {
	var r request
	if err := json.Unmarshal(offerEnvelope(b), &r); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(r.Body)))
	b.ReportAllocs()
	for b.Loop() {
		_ = pcIDOf(r.Body)
	}
}
