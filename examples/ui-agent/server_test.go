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

	"go.uber.org/zap"

	"github.com/framewire/framewire/transports/webrtc"
)

func testHandler(t *testing.T, cfg config) http.Handler {
	t.Helper()
	b := &bot{brain: cfg.Brain, voice: cfg.Voice, log: zap.NewNop(), researchStep: time.Second}
	rtc, err := webrtc.NewServer(webrtc.Options{NewPipeline: b.newPipeline})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rtc.Shutdown(context.Background()) })
	return handler(cfg, rtc)
}

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func TestConfigNamesTheBrainAndVoice(t *testing.T) {
	cfg := config{Brain: chooseBrain(func(string) string { return "" }), Voice: chooseVoice(context.Background(), func(string) string { return "" })}
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
	if got.Voice.STT || got.Voice.Note == "" {
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
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/offer", strings.NewReader("{not json")))
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
	}
	for _, tc := range tests {
		if got := chooseBrain(tc.env); got.Kind != tc.kind || got.provider == nil || got.Label == "" {
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
