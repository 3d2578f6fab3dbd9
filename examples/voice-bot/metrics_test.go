package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// With FRAMEWIRE_METRICS_ADDR set, serve exports Prometheus metrics there
// for as long as it serves, the transport's counters included.
func TestServeExportsMetricsWhenAskedTo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := ln.Addr().String()
	ln.Close()
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
	want := []string{`target_info{service_name="framewire-voice-bot"`, `framewire_signalling_responses_total{http_response_status_code="415"} 1`}
	var body string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := client.Get("http://" + metricsAddr + "/metrics"); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			body = string(b)
			if strings.Contains(body, want[0]) && strings.Contains(body, want[1]) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics at %s lack one of %q:\n%.2000s", metricsAddr, want, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
