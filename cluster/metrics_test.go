package cluster

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/internal/natstest"
)

// A front door counts every response by status, the workers' answers it
// relays and its own, and a new session no worker could take as a
// refusal by the cluster's capacity.
func TestTheFrontDoorReportsItsMetrics(t *testing.T) {
	url := natstest.Embedded(t)
	startWorker(t, url, "a", 1)
	m := metricstest.NewReader(t)
	fd := startFrontDoorWith(t, url, FrontDoorOptions{MeterProvider: m.Provider})
	fd.waitWorkers(t, "a")

	dial(t, fd.url("/api/offer")) // the worker's 200
	_, sdp := newClient(t)
	if status, _ := do(t, http.MethodPost, fd.url("/api/offer"), offerBody{SDP: sdp, Type: "offer"}); status != http.StatusServiceUnavailable {
		t.Fatalf("a second session on a full cluster: %d, want 503", status)
	}
	if status, _ := do(t, http.MethodPatch, fd.url("/api/offer"), map[string]any{"pc_id": "nobody", "candidates": []any{}}); status != http.StatusNotFound {
		t.Fatalf("PATCH of an unknown pc_id: %d, want 404", status)
	}

	if d := cmp.Diff(map[string]int64{"200": 1, "503": 1, "404": 1}, m.Sums(t, "framewire.signalling.responses", "http.response.status_code")); d != "" {
		t.Errorf("responses by status (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int64{limitCapacity: 1}, m.Sums(t, "framewire.limits.refused", "limit")); d != "" {
		t.Errorf("refusals by limit (-want +got):\n%s", d)
	}
}
