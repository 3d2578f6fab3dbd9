package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/telemetry/inspector"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket/wire"
)

func testHandler(t *testing.T, cfg config) http.Handler {
	t.Helper()
	b := &bot{brain: cfg.Brain, voice: cfg.Voice, log: zap.NewNop(), researchStep: time.Second}
	rtc, err := webrtc.NewServer(webrtc.Options{NewPipeline: b.newPipeline})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rtc.Shutdown(context.Background()) })
	return handler(cfg, rtc, nil, nil)
}

// local is the demo's origin in the tests' requests: the Host the
// browser sends for the default address.
const local = "http://127.0.0.1:7860"

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, local+path, nil))
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func TestConfigNamesTheBrainAndVoice(t *testing.T) {
	// Voice off, whatever this build has: with nothing configured, a build
	// with PocketSphinx has voice on (voice_test.go covers that).
	textChat := func(k string) string { return map[string]string{"UI_AGENT_VOICE": "off"}[k] }
	cfg := config{Brain: chooseBrain(func(string) string { return "" }), Voice: chooseVoice(context.Background(), textChat)}
	res, body := get(t, testHandler(t, cfg), "/api/config")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/config: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var got struct {
		Brain struct{ Kind, Label, Detail string }
		Voice struct {
			STT, TTS bool
			Note     string
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Brain.Kind != "demo" || got.Brain.Label != "offline demo brain" || !strings.Contains(got.Brain.Detail, "OPENAI_API_KEY") {
		t.Errorf("brain = %+v", got.Brain)
	}
	if got.Voice.STT || !strings.Contains(got.Voice.Note, "UI_AGENT_VOICE=off") {
		t.Errorf("voice = %+v, want off with a note saying why", got.Voice)
	}
}

func TestThePageIsServed(t *testing.T) {
	h := testHandler(t, config{Brain: brain{Kind: "demo"}})
	res, body := get(t, h, "/")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "framewire UI agent demo") {
		t.Fatalf("GET /: %d %q", res.StatusCode, body)
	}
	if _, built := pageFS(); built {
		if !strings.Contains(body, `<script src="app.js">`) {
			t.Errorf("the built page does not load the bundle: %q", body)
		}
		if res, _ := get(t, h, "/app.js"); res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
			t.Errorf("GET /app.js: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
	} else if !strings.Contains(body, "build.sh") {
		t.Errorf("without a bundle the page should say how to build it: %q", body)
	}
}

func TestSignallingIsRouted(t *testing.T) {
	h := testHandler(t, config{Brain: brain{Kind: "demo"}})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, local+"/api/offer", strings.NewReader("{not json"))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("POST /api/offer with a bad body: %d, want 400 from the signalling server", rec.Code)
	}
}

// env is a getenv that knows only the key-value pairs kv.
func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestChooseBrain(t *testing.T) {
	tests := []struct {
		name string
		env  func(string) string
		kind string
	}{
		{"nothing configured", env(), "demo"},
		{"an API key", env("OPENAI_API_KEY", "sk-test"), "openai"},
		{"a local server", env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"), "openai"},
		{"forced demo", env("OPENAI_API_KEY", "sk-test", "FRAMEWIRE_BRAIN", "demo"), "demo"},
		{"Anthropic", env("ANTHROPIC_API_KEY", "ak"), "anthropic"},
		{"Gemini", env("GEMINI_API_KEY", "gk"), "gemini"},
		{"Gemini by its Google name", env("GOOGLE_API_KEY", "gk"), "gemini"},
		{"OpenAI first", env("OPENAI_API_KEY", "sk-test", "ANTHROPIC_API_KEY", "ak"), "openai"},
		{"OpenAI Realtime", env("OPENAI_API_KEY", "sk-test", "OPENAI_REALTIME_MODEL", "gpt-realtime"), "realtime"},
	}
	for _, tc := range tests {
		got := chooseBrain(tc.env)
		if got.Kind == "realtime" || tc.kind == "realtime" {
			if got.Kind != tc.kind || got.realtime == nil || got.realtime.Model != "gpt-realtime" || got.realtime.APIKey != "sk-test" {
				t.Errorf("%s: realtime options %+v", tc.name, got.realtime)
			}
			b := &bot{brain: got, log: zap.NewNop(), researchStep: time.Second}
			if _, err := b.build(pipeline.PassThrough{}, pipeline.PassThrough{}, zap.NewNop()); err != nil {
				t.Errorf("%s: building the realtime pipeline: %v", tc.name, err)
			}
			continue
		}
		if got.Kind != tc.kind || got.provider == nil || got.Label == "" {
			t.Errorf("%s: brain = %+v, want kind %s", tc.name, got, tc.kind)
		}
	}
}

// The server starts on a free port, serves the page and the config, and
// shuts down cleanly (every goroutine gone) when its context ends.
func TestServeUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	cfg := config{Addr: "127.0.0.1:0", Brain: chooseBrain(func(string) string { return "" }), Voice: chooseVoice(context.Background(), func(string) string { return "" }), ResearchStep: time.Second}
	go func() { errc <- serve(ctx, cfg, zap.NewNop(), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not start")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + "/api/config")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /api/config: %d", res.StatusCode)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("serve returned %v after a clean shutdown", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not shut down")
	}
}

// With FRAMEWIRE_METRICS_ADDR the demo serves Prometheus metrics there,
// for as long as it runs.
func TestServeExportsMetricsWhenAskedTo(t *testing.T) {
	metricsAddr := metricstest.FreeAddr(t)
	t.Setenv("FRAMEWIRE_METRICS_ADDR", metricsAddr)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	cfg := config{Addr: "127.0.0.1:0", Brain: chooseBrain(func(string) string { return "" }), ResearchStep: time.Second}
	go func() { errc <- serve(ctx, cfg, zap.NewNop(), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	// A refused signalling request is counted by the transport.
	if res, err := client.Post("http://"+addr+"/start", "text/plain", strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	} else if res.Body.Close(); res.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("POST /start as text/plain: %d, want 415", res.StatusCode)
	}
	// Instruments show once something is recorded; the resource shows at
	// once: the metrics are the demo's, the transport's counters among
	// them.
	metricstest.WaitFor(t, client, "http://"+metricsAddr+"/metrics", `target_info{service_name="framewire-ui-agent"`,
		`framewire_signalling_responses_total{http_response_status_code="415"`)
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("serve: %v", err)
	}
}

func TestServeReportsABusyAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := config{Addr: ln.Addr().String(), Brain: chooseBrain(func(string) string { return "" })}
	err = serve(context.Background(), cfg, zap.NewNop(), nil)
	if err == nil || !strings.Contains(err.Error(), "listening on") {
		t.Errorf("serve on a busy address: %v, want an error that says so", err)
	}
}

// FRAMEWIRE_INSPECTOR=1 mounts the live session inspector at /inspector/,
// for loopback clients only; off, the path is the page's like any other.
func TestTheInspectorIsMountedOnlyWhenAskedFor(t *testing.T) {
	ins, err := inspector.New(t.Context(), inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ins.Close(context.Background()) }()
	cfg := config{Brain: chooseBrain(func(string) string { return "" })}
	rtc, err := webrtc.NewServer(webrtc.Options{NewPipeline: (&bot{log: zap.NewNop()}).newPipeline})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rtc.Shutdown(context.Background()) }()

	on := handler(cfg, rtc, nil, ins)
	req := httptest.NewRequest(http.MethodGet, local+"/inspector/api/sessions", nil)
	req.RemoteAddr = "127.0.0.1:5000"
	rec := httptest.NewRecorder()
	on.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("GET /inspector/api/sessions from loopback: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	req = httptest.NewRequest(http.MethodGet, local+"/inspector/api/sessions", nil)
	req.RemoteAddr = "203.0.113.9:5000"
	rec = httptest.NewRecorder()
	on.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("GET /inspector/ from another host: %d, want 403", rec.Code)
	}
	off := handler(cfg, rtc, nil, nil)
	if res, body := get(t, off, "/inspector/api/sessions"); strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Errorf("with the inspector off, /inspector/api/sessions answered JSON: %s", body)
	}
	// The page links to the inspector when, and only when, it is mounted.
	inspectorLink := func(h http.Handler) string {
		_, body := get(t, h, "/api/config")
		var c struct{ Inspector *string }
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		if c.Inspector == nil {
			return "(absent)"
		}
		return *c.Inspector
	}
	if got := inspectorLink(on); got != "/inspector/" {
		t.Errorf("config's inspector with the inspector on: %q, want /inspector/", got)
	}
	if got := inspectorLink(off); got != "(absent)" {
		t.Errorf("config's inspector with the inspector off: %q, want it absent", got)
	}
}

// The demo serves Pipecat's WebSocket transport under /ws/ next to
// WebRTC: POST /ws/connect answers exactly {"wsUrl"} (what client-js's
// startBotAndConnect hands the transport), the socket there runs the same
// bot (client-ready gets bot-ready and the greeting), and shutting the
// demo down ends the WebSocket session too.
func TestServeRunsTheBotOverWebSocket(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	textChat := func(k string) string { return map[string]string{"UI_AGENT_VOICE": "off"}[k] }
	cfg := config{Addr: "127.0.0.1:0", Brain: chooseBrain(func(string) string { return "" }), Voice: chooseVoice(context.Background(), textChat), ResearchStep: time.Second}
	go func() { errc <- serve(ctx, cfg, zap.NewNop(), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not start")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/ws/connect", strings.NewReader(`{"page":"test"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://"+addr)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer map[string]string
	err = json.NewDecoder(res.Body).Decode(&answer)
	_ = res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST /ws/connect: %d %v", res.StatusCode, err)
	}
	wsURL := answer["wsUrl"]
	if len(answer) != 1 || !strings.HasPrefix(wsURL, "ws://"+addr+"/ws/ws?session=") {
		t.Fatalf("POST /ws/connect answered %v, want only wsUrl, ws://%s/ws/ws?session=...", answer, addr)
	}

	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	c, _, err := websocket.Dial(dctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://" + addr}}})
	if err != nil {
		t.Fatalf("dial %s: %v", wsURL, err)
	}
	defer func() { _ = c.CloseNow() }()
	clientReady := `{"label":"rtvi-ai","type":"client-ready","id":"1","data":{"version":"2.1.0","about":{"library":"go-test"}}}`
	if err := c.Write(dctx, websocket.MessageBinary, wire.AppendMessage(nil, []byte(clientReady))); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for !seen["bot-ready"] || !seen["greeting"] {
		typ, b, err := c.Read(dctx)
		if err != nil {
			t.Fatalf("reading after client-ready (seen %v): %v", seen, err)
		}
		if typ != websocket.MessageBinary {
			t.Fatalf("the server sent a %v message; the browser client reads binary ones only", typ)
		}
		f, err := wire.Decode(b)
		if err != nil {
			t.Fatalf("decoding a server frame: %v", err)
		}
		if f.Kind != wire.KindMessage {
			continue
		}
		var msg struct {
			Label, Type string
			Data        json.RawMessage
		}
		if err := json.Unmarshal(f.Data, &msg); err != nil || msg.Label != "rtvi-ai" {
			t.Fatalf("message %s: not an RTVI envelope (%v)", f.Data, err)
		}
		seen[msg.Type] = true
		if msg.Type == "bot-output" && strings.Contains(string(msg.Data), "I can see this page") {
			seen["greeting"] = true
		}
	}

	// The client reads on, as a browser does, so it answers the server's
	// close at once.
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				closed <- err
				return
			}
		}
	}()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("serve returned %v after a clean shutdown", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not shut down with a WebSocket session open")
	}
	if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after the shutdown the socket read %v, want a close with going away", err)
	}
}
