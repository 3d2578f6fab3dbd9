package outage

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOnlyTheFirstFailureOfAnOutageBeginsIt(t *testing.T) {
	var f Flag
	var got []bool
	for _, step := range []string{"fail", "fail", "fail", "succeed", "fail", "succeed", "succeed", "fail"} {
		if step == "fail" {
			got = append(got, f.Fail())
		} else {
			f.Succeed()
		}
	}
	if d := cmp.Diff([]bool{true, false, false, true, true}, got); d != "" {
		t.Errorf("began (-want +got):\n%s", d)
	}
}

func TestConcurrentFailuresBeginOneOutage(t *testing.T) {
	var f Flag
	var began atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if f.Fail() {
				began.Add(1)
			}
		})
	}
	wg.Wait()
	if n := began.Load(); n != 1 {
		t.Errorf("%d failures began the outage, want 1", n)
	}
}
