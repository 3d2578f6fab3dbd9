package webrtc

import (
	"runtime"
	"testing"
	"time"

	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// TestTwoHundredSessionsInSequenceLeaveNothingBehind opens and closes 200
// sessions one after another; goroutines and heap must come back to where
// they were (TestMain's goleak check covers the rest).
func TestTwoHundredSessionsInSequenceLeaveNothingBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 200 peer connections")
	}
	h := newHarness(t, Options{Logger: nopLogger()})
	ctx := testContext(t, 5*time.Minute)
	cycle := func() {
		c := h.dialUnmanaged(ctx, webrtctest.Options{ToneHz: 440})
		defer c.Close()
		s, _, _ := h.session(c)
		if err := c.Send(`{"label":"rtvi-ai","type":"client-ready","id":"leak0001","data":{}}`); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Next(ctx, isType("bot-ready")); err != nil {
			t.Fatal(err)
		}
		c.Close()
		select {
		case <-s.Done():
		case <-ctx.Done():
			t.Fatal("a session did not end")
		}
	}
	// Warm up pools and lazily built tables before the baseline.
	for range 5 {
		cycle()
	}
	h.forgetSessions()
	goroutines, heap := settle()
	start := time.Now()
	for range 200 {
		cycle()
	}
	elapsed := time.Since(start)
	h.forgetSessions()
	goroutinesAfter, heapAfter := settle()
	t.Logf("200 sessions in %v (%v each); goroutines %d -> %d; heap %.1f -> %.1f MiB",
		elapsed, elapsed/200, goroutines, goroutinesAfter, mib(heap), mib(heapAfter))
	if h.srv.SessionCount() != 0 {
		t.Errorf("%d sessions still counted", h.srv.SessionCount())
	}
	if goroutinesAfter > goroutines+2 {
		t.Errorf("goroutines grew from %d to %d", goroutines, goroutinesAfter)
	}
	if heapAfter > heap+2<<20 {
		t.Errorf("heap grew from %.1f to %.1f MiB over 200 sessions", mib(heap), mib(heapAfter))
	}
}

// settle lets closing goroutines finish and returns the goroutine count and
// live heap.
func settle() (int, uint64) {
	var ms runtime.MemStats
	for range 20 {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
