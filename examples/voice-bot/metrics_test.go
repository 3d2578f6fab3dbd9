package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/metricstest"
)

// With FRAMEWIRE_METRICS_ADDR set, serve exports Prometheus metrics there
// for as long as it serves, the transport's counters included.
func TestServeExportsMetricsWhenAskedTo(t *testing.T) {
	metricsAddr := metricstest.FreeAddr(t)
	t.Setenv("FRAMEWIRE_METRICS_ADDR", metricsAddr)
	cfg := configure(env("ADDR", "127.0.0.1:0"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, zap.NewNop(), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	res, err := client.Post("http://"+addr+"/start", "text/plain", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("POST /start as text/plain: %d, want 415", res.StatusCode)
	}
	metricstest.WaitFor(t, client, "http://"+metricsAddr+"/metrics", `target_info{service_name="framewire-voice-bot"`,
		`framewire_signalling_responses_total{http_response_status_code="415"} 1`)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
