package webrtc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// recordingMetrics records what the transport reports.
type recordingMetrics struct {
	metricstest.Signalling
	mu         sync.Mutex
	underruns  int64
	late       int64
	complexity []int
	queues     map[string][]int
}

func newRecordingMetrics() *recordingMetrics {
	return &recordingMetrics{queues: map[string][]int{}}
}

func (m *recordingMetrics) LateFrames(_ context.Context, n int64) {
	m.mu.Lock()
	m.late += n
	m.mu.Unlock()
}
func (m *recordingMetrics) Underruns(_ context.Context, n int64) {
	m.mu.Lock()
	m.underruns += n
	m.mu.Unlock()
}
func (m *recordingMetrics) OpusComplexity(_ context.Context, level int) {
	m.mu.Lock()
	m.complexity = append(m.complexity, level)
	m.mu.Unlock()
}
func (m *recordingMetrics) QueueHighWater(_ context.Context, queue string, depth int) {
	m.mu.Lock()
	m.queues[queue] = append(m.queues[queue], depth)
	m.mu.Unlock()
}

// The transport reports signalling responses by status, refusals by
// limit, and each session's output counters when it ends.
func TestTheTransportReportsItsMetrics(t *testing.T) {
	m := newRecordingMetrics()
	h := newHarness(t, Options{Metrics: m, MaxSessions: 1})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	if _, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: h.url("/api/offer")}); err == nil {
		t.Fatal("a second session was admitted at MaxSessions 1")
	} else if se := (*webrtctest.StatusError)(nil); !errors.As(err, &se) || se.Code != 503 {
		t.Fatalf("second session: %v, want a 503", err)
	}
	do(t, "POST", h.url("/start"), "{}", "Content-Type", "text/plain")
	s, _, _ := h.session(c)
	opus := s.Output().Stats().OpusComplexity >= 0 // PCMU has no complexity
	s.Close("test over")
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.Statuses(); st[200] < 1 || st[503] < 1 || st[415] != 1 {
		t.Errorf("signalling responses by status: %v, want the offer's 200, the refused offer's 503 and one 415", st)
	}
	if refused := m.Refused(); refused[limitSessions] < 1 {
		t.Errorf("refusals by limit: %v, want the sessions limit", refused)
	}
	if want := map[bool]int{true: 1, false: 0}[opus]; len(m.complexity) != want {
		t.Errorf("complexity reported %v, want %d report for the one session that ended", m.complexity, want)
	}
	for _, q := range []string{queueOutputAudio, queueOutbound} {
		if len(m.queues[q]) != 1 {
			t.Errorf("queue %s: high water reported %v, want once for the one session that ended", q, m.queues[q])
		}
	}
}
