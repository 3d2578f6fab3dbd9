package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/internal/natstest"
)

// The front door command with -metrics-addr serves its own counters: a new
// session that no worker can take is a 503 by status and a refusal by the
// cluster's capacity.
func TestFrontDoorServesItsMetrics(t *testing.T) {
	url := natstest.Embedded(t)
	a := runCommand(t, frontdoorCommand, []string{"-nats", url, "-addr", "127.0.0.1:0", "-status-addr", "", "-metrics-addr", "127.0.0.1:0"},
		"frontdoor metrics on ", "listening on ")
	metricsURL, base := a[0], a[1]

	client := &http.Client{Timeout: 20 * time.Second}
	res, err := client.Post(base+"/start", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("POST /start without workers: %d, want 503", res.StatusCode)
	}
	metricstest.WaitFor(t, client, metricsURL,
		`target_info{service_name="framewire-cluster-frontdoor"`,
		`framewire_signalling_responses_total{http_response_status_code="503"} 1`,
		`framewire_limits_refused_total{limit="cluster_capacity"} 1`)
}
