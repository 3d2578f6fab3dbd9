package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/internal/natstest"
	"github.com/framewire/framewire/transports/webrtc"
)

// Sixteen clients that send an offer's headers and then drip its body
// used to hold the sixteen MaxInFlight slots, so that every other request
// got a 503 "busy": the slot was taken before the body was read. Now the
// body is read first, under its own deadline, and the drippers get a 408.
func TestClientsDrippingBodiesDoNotLockOthersOut(t *testing.T) {
	url := natstest.Embedded(t)
	startWorker(t, url, "a", 10)
	nc := natstest.Connect(t, url)
	fd, err := NewFrontDoor(nc, FrontDoorOptions{Logger: testLogger(t), MaxInFlight: 16, BodyTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fd.Close() })
	var entered atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		fd.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	deadline := time.Now().Add(wait)
	for fd.liveCount() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the front door does not see the worker")
		}
		time.Sleep(10 * time.Millisecond)
	}

	const drippers = 16
	conns := make([]net.Conn, drippers)
	for i := range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		fmt.Fprintf(c, "POST /api/offer HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"sdp\":", srv.Listener.Addr())
		conns[i] = c
	}
	for entered.Load() < drippers {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d dripping requests reached the handler", entered.Load(), drippers)
		}
		time.Sleep(10 * time.Millisecond)
	}
	status, raw := do(t, http.MethodPost, srv.URL+"/start", map[string]any{})
	if status != http.StatusOK {
		t.Errorf("POST /start while %d clients drip their bodies: %d %s, want 200", drippers, status, raw)
	}
	// The drippers are answered once their body's time is up.
	_ = conns[0].SetReadDeadline(time.Now().Add(wait))
	res, err := http.ReadResponse(bufio.NewReader(conns[0]), nil)
	if err != nil {
		t.Fatalf("a dripping client got no answer: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a dripping client: %d, want 408", res.StatusCode)
	}
}

// sniffer counts the requests a front door sends the workers (not the
// workers' heartbeats).
type sniffer struct {
	t     *testing.T
	nc    *nats.Conn
	count atomic.Int32
	seen  chan struct{}
}

func sniff(t *testing.T, url string) *sniffer {
	s := &sniffer{t: t, nc: natstest.Connect(t, url), seen: make(chan struct{}, 16)}
	subj := subjects{DefaultPrefix}
	for _, subject := range []string{subj.newSession(), subj.who(), subj.announce(), subj.worker(">")} {
		if _, err := s.nc.Subscribe(subject, func(*nats.Msg) { s.count.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.nc.Subscribe("sentinel", func(*nats.Msg) { s.seen <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	if err := s.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

// messagesFrom returns the cluster messages counted once everything nc
// published so far has arrived (NATS keeps one connection's order).
func (s *sniffer) messagesFrom(nc *nats.Conn) int {
	s.t.Helper()
	if err := nc.Publish("sentinel", nil); err != nil {
		s.t.Fatal(err)
	}
	select {
	case <-s.seen:
	case <-time.After(wait):
		s.t.Fatal("the sentinel did not arrive")
	}
	return int(s.count.Load())
}

// A request the front door's Authorize refuses gets its 401 or 403 before
// any NATS traffic: no worker is asked to take it, nor is every worker
// asked who owns its pc_id or sessionId.
func TestAuthorizeRunsBeforeAnyNATSTraffic(t *testing.T) {
	url := natstest.Embedded(t)
	fd := startFrontDoorWith(t, url, FrontDoorOptions{Authorize: func(r *http.Request) error {
		switch r.Header.Get("Authorization") {
		case "Bearer ok":
			return nil
		case "Bearer banned":
			return fmt.Errorf("user banned: %w", webrtc.ErrForbidden)
		}
		return errors.New("no token")
	}})
	s := sniff(t, url)
	requests := []struct{ method, path string }{
		{http.MethodPost, "/start"},
		{http.MethodPost, "/api/offer"},
		{http.MethodPatch, "/api/offer"},
		{http.MethodPost, "/sessions/some-id/api/offer"},
		{http.MethodPatch, "/sessions/some-id/api/offer"},
	}
	for _, token := range []string{"", "banned"} {
		want := http.StatusUnauthorized
		if token == "banned" {
			want = http.StatusForbidden
		}
		for _, rq := range requests {
			req, _ := http.NewRequest(rq.method, fd.url(rq.path), strings.NewReader(`{"pc_id":"some-pc","sdp":"v=0","type":"offer"}`))
			req.Header.Set("Content-Type", "application/json")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := httpClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Errorf("%s %s with token %q: %d, want %d", rq.method, rq.path, token, res.StatusCode, want)
			}
		}
	}
	if n := s.messagesFrom(fd.nc); n != 0 {
		t.Errorf("refused requests sent %d NATS messages, want none", n)
	}
	// An admitted one reaches the cluster (here: the who question).
	req, _ := http.NewRequest(http.MethodPatch, fd.url("/api/offer"), strings.NewReader(`{"pc_id":"some-pc"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer ok")
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("an admitted PATCH for an unknown pc_id: %d, want 404", res.StatusCode)
	}
	if n := s.messagesFrom(fd.nc); n == 0 {
		t.Error("an admitted request sent no NATS message")
	}
}

// Whoever can answer on the cluster's subjects (a NATS without auth, a
// compromised worker) could set any header on the front door's origin: a
// Set-Cookie, a Location. Only the headers of a signalling answer are
// relayed.
func TestOnlyTheHeadersOfASignallingAnswerAreRelayed(t *testing.T) {
	url := natstest.Embedded(t)
	fd := startFrontDoor(t, url)
	rogue := natstest.Connect(t, url)
	if _, err := rogue.QueueSubscribe(fd.subj.newSession(), queueGroup, func(m *nats.Msg) {
		b, _ := json.Marshal(reply{V: Version, Worker: "rogue", Status: http.StatusOK, Body: []byte(`{"sessionId":"x"}`),
			Header: http.Header{
				"Content-Type":                {"application/json"},
				"Access-Control-Allow-Origin": {"https://app.example"},
				"Set-Cookie":                  {"session=stolen; Path=/"},
				"Location":                    {"https://attacker.example/"},
				"X-Anything":                  {"1"},
				"Content-Security-Policy":     {"script-src *"},
			}})
		_ = m.Respond(b)
	}); err != nil {
		t.Fatal(err)
	}
	if err := rogue.Flush(); err != nil {
		t.Fatal(err)
	}
	status, _, h, err := doHeader(http.MethodPost, fd.url("/start"), map[string]any{})
	if err != nil || status != http.StatusOK {
		t.Fatalf("POST /start: %d %v", status, err)
	}
	for _, name := range []string{"Set-Cookie", "Location", "X-Anything", "Content-Security-Policy"} {
		if v := h.Get(name); v != "" {
			t.Errorf("the responder's %s: %q was relayed", name, v)
		}
	}
	if h.Get("Content-Type") != "application/json" || h.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("the answer's own headers were not relayed: %v", h)
	}
}

// A /start flow's offer is routed to the worker that issued the
// sessionId, and creates a session there: it goes through the worker's
// capacity, the Server's MaxSessions, like any new session (it once
// skipped the worker's own count, which mirrored the Server's).
func TestAStartFlowsOfferGoesThroughTheWorkersCapacity(t *testing.T) {
	url := natstest.Embedded(t)
	w := startWorker(t, url, "a", 1)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a")
	status, raw := do(t, http.MethodPost, fd.url("/start"), map[string]any{})
	var start struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &start); status != http.StatusOK || err != nil || start.SessionID == "" {
		t.Fatalf("POST /start: %d %s", status, raw)
	}
	dial(t, fd.url("/api/offer")) // the worker is full now
	_, sdp := newClient(t)
	status, _, h, err := doHeader(http.MethodPost, fd.url("/sessions/"+start.SessionID+"/api/offer"), offerBody{SDP: sdp, Type: "offer"})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("an offer of the /start flow to a full worker: %d (Retry-After %q), want 503 with Retry-After", status, h.Get("Retry-After"))
	}
	if n := w.srv.SessionCount(); n != 1 {
		t.Errorf("the worker of capacity 1 holds %d sessions", n)
	}
}

// A page on a site that rebinds its DNS to the front door's address
// sends its own name in Host: refused, before any NATS traffic. The names
// in AllowHosts, localhost names and IP literals are served.
func TestTheFrontDoorRefusesAForeignHost(t *testing.T) {
	url := natstest.Embedded(t)
	startWorker(t, url, "a", 10)
	fd := startFrontDoorWith(t, url, FrontDoorOptions{AllowHosts: []string{"voice.example.com"}})
	fd.waitWorkers(t, "a")
	s := sniff(t, url)
	for host, want := range map[string]int{
		"rebind.attacker.example": http.StatusForbidden,
		"voice.example.com":       http.StatusOK,
		"localhost":               http.StatusOK,
		"127.0.0.1":               http.StatusOK,
	} {
		req, _ := http.NewRequest(http.MethodPost, fd.url("/start"), strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.Host = host
		before := s.messagesFrom(fd.nc)
		res, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("POST /start with Host %s: %d, want %d", host, res.StatusCode, want)
		}
		if host == "rebind.attacker.example" {
			if n := s.messagesFrom(fd.nc); n != before {
				t.Errorf("a foreign Host sent %d NATS messages", n-before)
			}
		}
	}
}

// A client that floods the front door with refused requests writes a few
// log lines a second, not one per request.
func TestRefusedRequestsAreLoggedSampled(t *testing.T) {
	url := natstest.Embedded(t)
	core, logs := observer.New(zap.InfoLevel)
	nc := natstest.Connect(t, url)
	fd, err := NewFrontDoor(nc, FrontDoorOptions{Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fd.Close() })
	for range 200 {
		r := httptest.NewRequest(http.MethodPost, "/start", strings.NewReader("{}"))
		r.Host = "rebind.attacker.example"
		w := httptest.NewRecorder()
		fd.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden {
			t.Fatalf("a foreign Host: %d", w.Code)
		}
	}
	// 5 a second, then every 100th: 200 requests within a few seconds
	// write at most 5 + 2 per second that passed.
	if n := logs.FilterMessage("refused a request for a foreign host").Len(); n == 0 || n > 12 {
		t.Errorf("200 refused requests wrote %d log lines, want a few", n)
	}
}
