package webrtc

import (
	"errors"
	"testing"
	"time"

	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// The transport reports signalling responses by status, refusals by
// limit, and each session's output counters when it ends.
func TestTheTransportReportsItsMetrics(t *testing.T) {
	m := metricstest.NewReader(t)
	h := newHarness(t, Options{MeterProvider: m.Provider, MaxSessions: 1})
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
	if st := m.Sums(t, "framewire.signalling.responses", "http.response.status_code"); st["200"] < 1 || st["503"] < 1 || st["415"] != 1 {
		t.Errorf("signalling responses by status: %v, want the offer's 200, the refused offer's 503 and one 415", st)
	}
	if refused := m.Sums(t, "framewire.limits.refused", "limit"); refused[limitSessions] < 1 {
		t.Errorf("refusals by limit: %v, want the sessions limit", refused)
	}
	if level, ok := m.Gauge(t, "framewire.opus.complexity"); ok != opus || level < 0 || level > 10 {
		t.Errorf("complexity reported %d (%v), want a level 0-10 only for an Opus session", level, ok)
	}
	queues := m.Counts(t, "framewire.queue.high_water", "queue")
	for _, q := range []string{queueOutputAudio, queueOutbound} {
		if queues[q] != 1 {
			t.Errorf("queue %s: high water reported %d times, want once for the one session that ended", q, queues[q])
		}
	}
	// A session without late frames or underruns makes their series at
	// zero: a dashboard sees "none", not "no data".
	for _, name := range []string{"framewire.output.late_frames", "framewire.output.underruns"} {
		if _, ok := m.Sums(t, name, "transport")["webrtc"]; !ok {
			t.Errorf("%s has no series with transport=webrtc after a session ended", name)
		}
	}
}

// Without a MeterProvider the instruments are no-ops: counting a late
// frame or an underrun on the frame path allocates nothing.
func TestNoMeterProviderCountsWithoutAllocating(t *testing.T) {
	in, err := newInstruments(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() {
		in.output.LateFrames(ctx, 1)
		in.output.Underruns(ctx, 2)
	}); n != 0 {
		t.Errorf("%v allocations per count, want 0", n)
	}
}
