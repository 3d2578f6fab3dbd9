package webrtc

import (
	"sync"
	"testing"
	"time"
)

// ticks reports a second of 20 ms ticks from each of players, all late by
// late, starting at *now, and returns the level the last one was told.
func ticks(g *complexityGovernor, now *time.Time, players int, late time.Duration) int {
	level := -1
	for range 50 {
		*now = now.Add(20 * time.Millisecond)
		for range players {
			level = g.tick(*now, late, false)
		}
	}
	return level
}

// testGovernor returns a governor whose count of garbage collections is
// *collections, for the test to advance.
func testGovernor(now time.Time, max int) (*complexityGovernor, *uint64) {
	var collections uint64
	g := newComplexityGovernor(now, max)
	g.gcCycles = func() uint64 { return collections }
	g.calmSince.Store(0)
	return g, &collections
}

func TestGovernorKeepsTheComplexityWhileTicksAreOnTime(t *testing.T) {
	now := time.Now()
	g, _ := testGovernor(now, 5)
	for second := range 10 {
		if got := ticks(g, &now, 10, time.Millisecond); got != 5 {
			t.Fatalf("after %d s on time, complexity %d, want 5", second+1, got)
		}
	}
}

func TestGovernorStepsDownWhileTicksRunLateAndBackUpWhenCalm(t *testing.T) {
	now := time.Now()
	g, collections := testGovernor(now, 5)
	// Each second with late ticks takes two steps off, down to 0.
	var levels []int
	for range 4 {
		levels = append(levels, ticks(g, &now, 10, governorLateTick))
	}
	want := []int{3, 1, 0, 0}
	for i := range want {
		if levels[i] != want[i] {
			t.Fatalf("levels while late %v, want %v", levels, want)
		}
	}
	// Five calm seconds with a collection among them raise it by one, and
	// so on up to the configured 5, never beyond.
	up := -1
	for second := 1; second <= 5*governorCalmSteps+10; second++ {
		if second%governorCalmSteps == 2 {
			*collections++
		}
		up = ticks(g, &now, 10, 0)
	}
	if up != 5 {
		t.Fatalf("after calm seconds, complexity %d, want back at 5", up)
	}
}

func TestGovernorStepsUpOnlyOnceACollectionHasGoneByCalmly(t *testing.T) {
	now := time.Now()
	g, collections := testGovernor(now, 5)
	if got := window(g, &now, 500, 500, governorLateTick); got != 3 {
		t.Fatalf("complexity %d after a late second, want 3", got)
	}
	// Calm seconds without a collection: the level is not known to hold.
	for second := 1; second <= 2*governorCalmSteps; second++ {
		if got := window(g, &now, 500, 0, 0); got != 3 {
			t.Fatalf("complexity %d after %d calm seconds without a collection, want 3", got, second)
		}
	}
	// A collection completes: the next calm second steps up.
	*collections++
	if got := window(g, &now, 500, 0, 0); got != 4 {
		t.Fatalf("complexity %d after a calm collection, want 4", got)
	}
	// A late second during the next streak resets it: the collection
	// that came before it does not count.
	*collections++
	if got := window(g, &now, 500, 500, governorLateTick); got != 2 {
		t.Fatalf("complexity %d after a late second, want 2", got)
	}
	for range governorCalmSteps {
		if got := window(g, &now, 500, 0, 0); got != 2 {
			t.Fatalf("complexity %d, want 2 until a collection", got)
		}
	}
	// Without collections a minute of calm is enough.
	level := -1
	for range governorCalmNoGC - governorCalmSteps {
		level = window(g, &now, 500, 0, 0)
	}
	if level != 3 {
		t.Fatalf("complexity %d after a calm minute without a collection, want 3", level)
	}
}

// window reports one second of ticks, lateTicks of them late by late and
// the others on time, and returns the level after it closed.
func window(g *complexityGovernor, now *time.Time, total, lateTicks int, late time.Duration) int {
	step := time.Second / time.Duration(total)
	for i := range total {
		*now = now.Add(step)
		d := time.Duration(0)
		if i < lateTicks {
			d = late
		}
		g.tick(*now, d, false)
	}
	return int(g.level.Load())
}

func TestGovernorToleratesAFewLateTicksButNotOneCloseToAGap(t *testing.T) {
	now := time.Now()
	g, _ := testGovernor(now, 5)
	// 1% of 5,000 ticks 5 ms late: tolerated.
	if got := window(g, &now, 5000, 50, governorLateTick); got != 5 {
		t.Fatalf("complexity %d after 1%% late ticks, want 5", got)
	}
	// 1.2%: two steps down.
	if got := window(g, &now, 5000, 60, governorLateTick); got != 3 {
		t.Fatalf("complexity %d after 1.2%% late ticks, want 3", got)
	}
	// A single tick 15 ms late: two more.
	if got := window(g, &now, 5000, 1, governorSevereTick); got != 1 {
		t.Fatalf("complexity %d after one tick close to a gap, want 1", got)
	}
	// A little behind (0.5%) holds the level, and does not count as calm.
	for range 2 * governorCalmSteps {
		if got := window(g, &now, 5000, 25, governorLateTick); got != 1 {
			t.Fatalf("complexity %d while a little behind, want 1 held", got)
		}
	}
}

// Players tick concurrently: every window is closed exactly once, so a
// late second costs two steps, not two per player.
func TestGovernorClosesEachWindowOnceUnderConcurrency(t *testing.T) {
	start := time.Now()
	g, _ := testGovernor(start, 10)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				g.tick(start.Add(time.Duration(i)*20*time.Millisecond), 10*time.Millisecond, false)
			}
		}()
	}
	wg.Wait()
	// 1.18 s of late ticks: one window closed late.
	if got := int(g.level.Load()); got != 8 {
		t.Fatalf("complexity %d, want 8 (one step of two)", got)
	}
}

func TestGovernorCountsAnAssistedFrameAsALateTick(t *testing.T) {
	now := time.Now()
	g, _ := testGovernor(now, 5)
	var level int
	for range 50 {
		now = now.Add(20 * time.Millisecond)
		for range 10 {
			level = g.tick(now, 6*time.Millisecond, true) // sent 6 ms late by an assistant
		}
	}
	if level != 3 {
		t.Errorf("after a second of assisted frames, complexity %d, want 3 (two steps off 5)", level)
	}
}
