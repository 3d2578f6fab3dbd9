package cluster

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recordingMetrics records what a front door reports.
type recordingMetrics struct {
	mu       sync.Mutex
	statuses map[int]int
	refused  map[string]int
}

func (m *recordingMetrics) SignallingResponse(_ context.Context, status int) {
	m.mu.Lock()
	m.statuses[status]++
	m.mu.Unlock()
}

func (m *recordingMetrics) LimitRefused(_ context.Context, limit string) {
	m.mu.Lock()
	m.refused[limit]++
	m.mu.Unlock()
}

// A front door counts every response by status, the workers' answers it
// relays and its own, and a new session no worker could take as a
// refusal by the cluster's capacity.
func TestTheFrontDoorReportsItsMetrics(t *testing.T) {
	url := startNATS(t)
	startWorker(t, url, "a", 1)
	m := &recordingMetrics{statuses: map[int]int{}, refused: map[string]int{}}
	fd := startFrontDoorWith(t, url, FrontDoorOptions{Metrics: m})
	fd.waitWorkers(t, "a")

	dial(t, fd.url("/api/offer")) // the worker's 200
	_, sdp := newClient(t)
	if status, _ := do(t, http.MethodPost, fd.url("/api/offer"), offerBody{SDP: sdp, Type: "offer"}); status != http.StatusServiceUnavailable {
		t.Fatalf("a second session on a full cluster: %d, want 503", status)
	}
	if status, _ := do(t, http.MethodPatch, fd.url("/api/offer"), map[string]any{"pc_id": "nobody", "candidates": []any{}}); status != http.StatusNotFound {
		t.Fatalf("PATCH of an unknown pc_id: %d, want 404", status)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if d := cmp.Diff(map[int]int{200: 1, 503: 1, 404: 1}, m.statuses); d != "" {
		t.Errorf("responses by status (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int{limitCapacity: 1}, m.refused); d != "" {
		t.Errorf("refusals by limit (-want +got):\n%s", d)
	}
}
