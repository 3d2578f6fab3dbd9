package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The front door command with -metrics-addr serves its own counters: a new
// session that no worker can take is a 503 by status and a refusal by the
// cluster's capacity.
func TestFrontDoorServesItsMetrics(t *testing.T) {
	ns := embeddedNATS(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- frontdoorCommand(ctx, []string{"-nats", ns.ClientURL(), "-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0"}, pw, io.Discard)
		_ = pw.Close()
	}()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("the front door after its context ended: %v", err)
		}
	}()
	urls := announced(pr, "frontdoor metrics on ", "listening on ")
	var metricsURL, base string
	select {
	case u := <-urls:
		metricsURL, base = u[0], u[1]
	case <-time.After(20 * time.Second):
		t.Fatal("the front door did not announce its addresses")
	}

	client := &http.Client{Timeout: 20 * time.Second}
	res, err := client.Post(base+"/start", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("POST /start without workers: %d, want 503", res.StatusCode)
	}
	res, err = client.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`target_info{service_name="framewire-cluster-frontdoor"`,
		`framewire_signalling_responses_total{http_response_status_code="503"} 1`,
		`framewire_limits_refused_total{limit="cluster_capacity"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the front door's metrics lack %s:\n%.3000s", want, body)
		}
	}
}
