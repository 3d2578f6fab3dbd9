package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMedianTakesTheMiddleOfEachField(t *testing.T) {
	runs := []Result{
		{Workload: "W1", N: 10, OK: true, FramesPerS: f64(3), RSSPeakKB: f64(10)},
		{Workload: "W1", N: 10, OK: true, FramesPerS: f64(1), RSSPeakKB: f64(30)},
		{Workload: "W1", N: 10, OK: false, FramesPerS: f64(2), RSSPeakKB: f64(20)},
	}
	m := median(runs)
	if *m.FramesPerS != 2 || *m.RSSPeakKB != 20 || m.OK || m.P99US != nil {
		t.Fatalf("median = %+v", m)
	}
}

// Each workload runs in process and checks itself: a small smoke test of
// the measurement code (the real figures come from fresh processes).
func TestWorkloadsCheckThemselves(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every workload")
	}
	for _, w := range []struct {
		name string
		n    int
	}{{"W1", 2}, {"W2", 2}, {"W3", 2}, {"W4", 2}} {
		if r := measure(w.name, w.n); !r.OK {
			t.Errorf("%s: %+v", w.name, r)
		}
	}
}
