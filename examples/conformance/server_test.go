package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framewire/framewire/internal/metricstest"
)

// These tests run the whole bot over HTTP and WebRTC with an in-process
// pion client (client_test.go): what the browser suite in e2e/ checks
// with the real clients, plus the rows it has no scenario for (5, 7, 8,
// the 60 KB snapshot of 10, and the job-group vocabulary of 13).

// connectWait bounds connecting and every reply over the network.
const connectWait = 20 * time.Second

// startServer serves the bot on a loopback test server until the test
// ends; it returns the base URL.
func startServer(t *testing.T) string {
	t.Helper()
	srv, err := newServer(config{AllowOrigins: splitList(defaultOrigins), Settings: loopbackOnly})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), connectWait)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		hs.Close()
	})
	return hs.URL
}

// connect dials the bot at offerURL and runs the handshake as a client
// of version.
func connect(ctx context.Context, t *testing.T, offerURL, version string) *client {
	t.Helper()
	c := dial(ctx, t, offerURL)
	c.waitOpen(ctx)
	c.rtvi("client-ready", "ready001", map[string]any{"version": version, "about": map[string]any{"library": "go-test"}})
	if m := c.next(ctx, nil); m.Type != "bot-ready" || *m.ID != "ready001" || m.data(t)["version"] != version {
		t.Fatalf("the first message after client-ready is %s", m.raw)
	}
	return c
}

// By default only pages served on this machine may call the bot from
// another origin: any web page the operator visits cannot.
func TestDefaultCORSAllowsOnlyLoopbackPages(t *testing.T) {
	base := startServer(t)
	for origin, want := range map[string]bool{
		"http://127.0.0.1:5173": true, "http://localhost:8080": true, "http://[::1]:3000": true,
		"https://evil.example": false, "http://192.168.1.20:8080": false, "http://localhost.evil.example": false,
	} {
		req, _ := http.NewRequest(http.MethodOptions, base+"/api/offer", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin") == origin; got != want {
			t.Errorf("a page at %s may call the bot: %v, want %v", origin, got, want)
		}
	}
}

func TestSignallingRoutesAndCORS(t *testing.T) {
	base := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), connectWait)
	defer cancel()

	t.Run("start answers with a session id and nothing else", func(t *testing.T) {
		var reply map[string]any
		if code := call(ctx, t, http.MethodPost, base+"/start", map[string]any{}, &reply); code != http.StatusOK {
			t.Fatalf("POST /start: %d", code)
		}
		id, _ := reply["sessionId"].(string)
		if len(reply) != 1 || !regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString(id) {
			t.Errorf("POST /start = %v", reply)
		}
	})
	t.Run("an unknown session is 404", func(t *testing.T) {
		for _, method := range []string{http.MethodPost, http.MethodPatch} {
			if code := call(ctx, t, method, base+"/sessions/nosuchsession/api/offer", map[string]any{"pc_id": "x", "candidates": []any{}}, nil); code != http.StatusNotFound {
				t.Errorf("%s on an unknown session: %d, want 404", method, code)
			}
		}
	})
	t.Run("a preflight from another origin is answered", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodOptions, base+"/api/offer", nil)
		req.Header.Set("Origin", "http://127.0.0.1:9")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type")
		resp, err := testHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode/100 != 2 || h.Get("Access-Control-Allow-Origin") == "" ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "PATCH") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
			t.Errorf("preflight: %d %v", resp.StatusCode, h)
		}
	})
	t.Run("every response carries the CORS origin", func(t *testing.T) {
		for _, path := range []string{"/start", "/api/offer", "/sessions/nosuchsession/api/offer"} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(`{}`))
			req.Header.Set("Origin", "http://127.0.0.1:9")
			req.Header.Set("Content-Type", "application/json")
			resp, err := testHTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.Header.Get("Access-Control-Allow-Origin") == "" {
				t.Errorf("POST %s (%d) has no Access-Control-Allow-Origin", path, resp.StatusCode)
			}
		}
	})
}

// TestStartFlowSessionServesEveryRow connects as client-js 1.13 does with
// startBotAndConnect (POST /start, then the session's offer path) and
// walks through the rows in one session.
func TestStartFlowSessionServesEveryRow(t *testing.T) {
	base := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*connectWait)
	defer cancel()
	var start struct {
		SessionID string `json:"sessionId"`
	}
	call(ctx, t, http.MethodPost, base+"/start", map[string]any{}, &start)
	offerURL := base + "/sessions/" + start.SessionID + "/api/offer"
	c := dial(ctx, t, offerURL)

	// The answer carries every server candidate and bot audio on mid 0.
	audio := mediaSection(c.answer, 0)
	if !strings.HasPrefix(audio, "m=audio ") || !hasLine(audio, "a=mid:0") || !hasLine(audio, "a=sendrecv") {
		t.Errorf("the answer's first media section is not sendrecv audio on mid 0:\n%s", audio)
	}
	if !strings.Contains(c.answer, "a=candidate:") {
		t.Errorf("the answer has no candidates:\n%s", c.answer)
	}
	// Trickled candidates (here just end-of-candidates) are accepted.
	patch := map[string]any{"pc_id": c.pcID, "candidates": []any{map[string]any{"candidate": "", "sdp_mid": "0", "sdp_mline_index": 0}}}
	if code := call(ctx, t, http.MethodPatch, offerURL, patch, nil); code/100 != 2 {
		t.Errorf("PATCH end-of-candidates: %d", code)
	}

	// Row 2: keepalives and track status are transport traffic, not RTVI:
	// the first reply is bot-ready.
	c.waitOpen(ctx)
	c.send("ping: 1700000000000")
	c.send(`{"type":"signalling","message":{"type":"trackStatus","receiver_index":0,"enabled":true}}`)
	c.rtvi("client-ready", "ready001", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "go-test"}})
	if m := c.next(ctx, nil); m.Type != "bot-ready" || *m.ID != "ready001" || m.data(t)["version"] != "2.1.0" {
		t.Fatalf("the first message is %s", m.raw)
	}

	// Row 3.
	c.rtvi("client-message", "echo0001", map[string]any{"t": "echo", "d": map[string]any{"x": 1, "s": "héllo"}})
	if m := c.next(ctx, withID("echo0001")); !sameJSON(t, m.Data, []byte(`{"t":"echo","d":{"x":1,"s":"héllo"}}`)) {
		t.Errorf("echo = %s", m.raw)
	}

	// Rows 5 and 10: a snapshot of about 60 KB, one data-channel message.
	tree := bigPage("Heading of a heavy page", 60_000)
	c.send(`{"label":"rtvi-ai","type":"ui-snapshot","id":"bigsnap1","data":{"tree":` + tree + `}}`)
	m := c.next(ctx, ofType("server-message"))
	if text, _ := m.data(t)["text"].(string); m.data(t)["type"] != "ui_state" || !strings.HasPrefix(text, "<ui_state>") ||
		!strings.HasSuffix(text, "</ui_state>") || !strings.Contains(text, `- heading "Heading of a heavy page"`) || !strings.Contains(text, "[ref=e") {
		t.Errorf("the 60 KB snapshot was answered with %.300s", m.raw)
	}
	c.send(`{"label":"rtvi-ai","type":"ui-snapshot","id":"snap0002","data":{"tree":` + page + `}}`)
	if m := c.next(ctx, ofType("server-message")); m.data(t)["text"] != wantPageState {
		t.Errorf("ui_state = %s", m.raw)
	}

	// Rows 7 and 8: a group that completes, then one that is cancelled.
	c.rtvi("client-message", "group001", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"alpha", "beta"}, "label": "Research", "hold_ms": 50}})
	var got []map[string]any
	for {
		d := c.next(ctx, ofType("ui-job-group")).data(t)
		got = append(got, d)
		if d["kind"] == "group_completed" {
			break
		}
	}
	checkLifecycle(t, vocab21, got, []string{"alpha", "beta"}, "Research")

	c.rtvi("client-message", "group002", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{"slow"}, "hold_ms": 600_000}})
	started := c.next(ctx, ofType("ui-job-group")).data(t)
	c.next(ctx, func(m msg) bool { return m.Type == "ui-job-group" && m.data(t)["kind"] == "job_update" })
	c.rtvi("ui-cancel-job-group", "cancel01", map[string]any{"job_id": started["job_id"], "reason": "user"})
	if d := c.next(ctx, ofType("ui-job-group")).data(t); d["kind"] != "job_completed" || d["status"] != "cancelled" || d["response"] != nil {
		t.Errorf("after cancel: %v", d)
	}
	if d := c.next(ctx, ofType("ui-job-group")).data(t); d["kind"] != "group_completed" {
		t.Errorf("after the cancelled completion: %v", d)
	}

	// Row 9.
	c.rtvi("send-text", "text0001", map[string]any{"content": "héllo there", "options": map[string]any{}})
	var text strings.Builder
	for m := c.next(ctx, ofType("bot-llm-started")); m.Type != "bot-llm-stopped"; m = c.next(ctx, func(m msg) bool { return strings.HasPrefix(m.Type, "bot-llm-") }) {
		if m.Type == "bot-llm-text" {
			text.WriteString(m.data(t)["text"].(string))
		}
	}
	if text.String() != "echo: héllo there" {
		t.Errorf("send-text answered %q", text.String())
	}

	// Row 12: the bot's audio has been flowing since the connection, as
	// 20 ms frames of the build's codec on mid 0.
	a := waitAudio(ctx, t, c, 25)
	if a.codec.MimeType != botCodec.MimeType || a.codec.ClockRate != botCodec.ClockRate || a.codec.Channels != botCodec.Channels || a.mid != "0" {
		t.Errorf("bot audio: %v, want %s/%d/%d on mid 0", a, botCodec.MimeType, botCodec.ClockRate, botCodec.Channels)
	}
	step := uint32(botCodec.ClockRate / 50)
	for i := 1; i < len(a.timestamps); i++ {
		if d := a.timestamps[i] - a.timestamps[i-1]; d != step {
			t.Errorf("packet %d is %d ticks after the one before, want %d (20 ms)", i, d, step)
			break
		}
	}

	// Row 11: disconnect-bot gets peerLeft, then the channel closes.
	t0 := time.Now()
	c.rtvi("disconnect-bot", "bye00001", map[string]any{})
	c.next(ctx, func(m msg) bool { return m.raw == `{"type":"signalling","message":{"type":"peerLeft"}}` })
	t.Logf("peerLeft %v after disconnect-bot", time.Since(t0).Round(time.Millisecond))
	select {
	case <-c.closed:
	case <-ctx.Done():
		t.Error("the data channel stayed open after peerLeft")
	}
}

// waitAudio waits until the client has seen at least n packets of bot
// audio.
func waitAudio(ctx context.Context, t *testing.T, c *client, n int) *audioTrack {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if a := c.audio(); a != nil && a.packets >= n {
			return a
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("fewer than %d packets of bot audio arrived: %v", n, c.audio())
		}
	}
}

// TestConcurrentSessionsAreIndependent connects a client-js 1.9 (RTVI
// 1.3.0) and a 1.13 client at once, each with its own vocabulary, then
// reconnects one (rows 13 and 14).
func TestConcurrentSessionsAreIndependent(t *testing.T) {
	base := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*connectWait)
	defer cancel()

	versions := []string{"1.3.0", "2.1.0"}
	vocabs := []vocab{vocab13, vocab21}
	clients := make([]*client, len(versions))
	var wg sync.WaitGroup
	errs := make([]error, len(versions))
	for i := range versions {
		wg.Go(func() {
			clients[i], errs[i] = tryDial(ctx, t, base+"/api/offer")
			if errs[i] == nil {
				select {
				case <-clients[i].open:
				case <-ctx.Done():
					errs[i] = errors.New("the data channel did not open")
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if clients[0].pcID == clients[1].pcID {
		t.Errorf("two sessions share pc_id %s", clients[0].pcID)
	}
	for i, c := range clients {
		c.rtvi("client-ready", "ready001", map[string]any{"version": versions[i]})
		if m := c.next(ctx, nil); m.Type != "bot-ready" || m.data(t)["version"] != versions[i] {
			t.Errorf("client %d: %s", i, m.raw)
		}
	}
	for i, c := range clients {
		c.rtvi("client-message", "echo0001", map[string]any{"t": "echo", "d": map[string]any{"i": i}})
		c.rtvi("client-message", "group001", map[string]any{"t": "start-job-group", "d": map[string]any{"workers": []string{fmt.Sprint("w", i)}}})
	}
	for i, c := range clients {
		if m := c.next(ctx, withID("echo0001")); !sameJSON(t, m.Data, fmt.Appendf(nil, `{"t":"echo","d":{"i":%d}}`, i)) {
			t.Errorf("client %d got echo %s", i, m.raw)
		}
		var got []map[string]any
		for {
			m := c.next(ctx, func(m msg) bool { return m.Type == "ui-task" || m.Type == "ui-job-group" })
			if m.Type != vocabs[i].typ {
				t.Fatalf("client %s got %s", versions[i], m.raw)
			}
			got = append(got, m.data(t))
			if m.data(t)["kind"] == "group_completed" {
				break
			}
		}
		checkLifecycle(t, vocabs[i], got, []string{fmt.Sprint("w", i)}, "")
	}

	// A client that leaves and comes back gets a new, working session.
	first := clients[0].pcID
	clients[0].close()
	again := connect(ctx, t, base+"/api/offer", "2.1.0")
	if again.pcID == first || again.pcID == clients[1].pcID {
		t.Errorf("the reconnected client has pc_id %s again", again.pcID)
	}
	again.rtvi("client-message", "echo0002", map[string]any{"t": "echo", "d": "back"})
	if m := again.next(ctx, withID("echo0002")); !sameJSON(t, m.Data, []byte(`{"t":"echo","d":"back"}`)) {
		t.Errorf("echo after reconnecting = %s", m.raw)
	}
}

// TestRunServesUntilCancelled runs the program's run: it announces its
// address, serves, and returns cleanly when its context ends (as on
// SIGINT), closing the open session with peerLeft.
func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startRun(t, ctx)
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("run printed %q", line)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), connectWait)
	defer ccancel()
	c := connect(cctx, t, base+"/api/offer", "2.1.0")

	cancel()
	c.next(cctx, func(m msg) bool { return m.raw == `{"type":"signalling","message":{"type":"peerLeft"}}` })
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v", err)
		}
	case <-cctx.Done():
		t.Fatal("run did not return after its context ended")
	}
	if _, err := testHTTP.Post(base+"/start", "application/json", strings.NewReader("{}")); err == nil {
		t.Error("the server still answers after run returned")
	}
}

func TestRunReportsABusyAddress(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	defer hs.Close()
	addr := strings.TrimPrefix(hs.URL, "http://")
	err := run(context.Background(), config{Addr: addr}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("run on a busy address returned %v", err)
	}
}

func TestSplitList(t *testing.T) {
	for in, want := range map[string]string{"": "[]", "*": "[*]", " http://a , ,http://b": "[http://a http://b]"} {
		if got := fmt.Sprint(splitList(in)); got != want {
			t.Errorf("splitList(%q) = %s, want %s", in, got, want)
		}
	}
}

// With FRAMEWIRE_METRICS_ADDR set, run serves Prometheus metrics there for
// as long as it serves the bot: the sessions and the transport's counters.
func TestRunExportsMetricsWhenAskedTo(t *testing.T) {
	metricsAddr := metricstest.FreeAddr(t)
	t.Setenv("FRAMEWIRE_METRICS_ADDR", metricsAddr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startRun(t, ctx)
	base := strings.TrimPrefix(strings.TrimSpace(line), "listening on ")
	cctx, ccancel := context.WithTimeout(context.Background(), connectWait)
	defer ccancel()
	connect(cctx, t, base+"/api/offer", "2.1.0")

	metricstest.WaitFor(t, testHTTP, "http://"+metricsAddr+"/metrics",
		`target_info{service_name="framewire-conformance"`,
		`framewire_sessions_started_total 1`,
		`framewire_signalling_responses_total{http_response_status_code="200"}`)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run returned %v", err)
	}
}

// startRun runs the program's run until ctx ends, returning the first
// line it printed and a channel that gets run's result.
func startRun(t *testing.T, ctx context.Context) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{Addr: "127.0.0.1:0", Settings: loopbackOnly}, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return line, done
}
