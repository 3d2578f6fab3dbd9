package webrtc

import (
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// complexityGovernor trades the quality of every output's Opus encoding
// for CPU when the machine falls behind. The players report how late each
// of their 20 ms ticks ran; a frame an assistant sent in the place of a
// player that had not run 5 ms after its time (tickAssist) counts as a
// tick 10 ms late, since the machine is behind even if the client heard no
// difference. A window of a second in which more than 1% of
// the ticks ran 10 ms late, or any ran 15 ms late, lowers the complexity of
// all encoders of the server by two steps (down to 0); five windows in a
// row with at most 0.1% late and none close to a gap, during which a
// garbage collection completed, raise it again by a step, up to the
// configured complexity. A gap (an underrun) is a tick more than a frame,
// 20 ms, late: the governor reacts well before.
//
// A collection's mark phase takes a quarter of the CPU and more for about
// 100 ms, so it is when a busy server's ticks run late; a level that has
// not been through one is not known to hold. Without collections (a large
// GOGC), a minute of calm windows is enough.
//
// Encoding is most of a streaming session's CPU (at complexity 5, about
// three times the cost at 0), so the governor turns an
// overloaded server's gaps into slightly coarser audio for everybody.
type complexityGovernor struct {
	origin time.Time // monotonic origin of window
	max    int32
	level  atomic.Int32
	ticks  atomic.Uint32 // ticks in the current window
	late   atomic.Uint32 // of which ran governorLateTick late
	severe atomic.Uint32 // of which ran governorSevereTick late
	window atomic.Int64  // start of the current window, since origin
	calm   atomic.Int32  // consecutive calm windows

	gcCycles  func() uint64 // garbage collections completed so far
	calmSince atomic.Uint64 // gcCycles when the calm streak began
}

const (
	governorWindow     = time.Second
	governorLateTick   = 10 * time.Millisecond
	governorSevereTick = 15 * time.Millisecond
	governorStepDown   = 2
	governorCalmSteps  = 5  // calm windows before a step up, a collection among them
	governorCalmNoGC   = 60 // calm windows that are enough without a collection
)

func newComplexityGovernor(now time.Time, max int) *complexityGovernor {
	g := &complexityGovernor{origin: now, max: int32(max), gcCycles: completedCollections}
	g.level.Store(int32(max))
	g.calmSince.Store(g.gcCycles())
	return g
}

// completedCollections reads how many garbage collections the process has
// completed.
func completedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// tick records a player's tick that ran late by late at now and returns
// the complexity encoders should use; assisted tells that an assistant sent
// the frame because the player had not run (tickAssist). It is safe for
// concurrent use: one of the players that cross a window's end closes it.
func (g *complexityGovernor) tick(now time.Time, late time.Duration, assisted bool) int {
	if assisted {
		// The machine is behind, although the frame went out in time.
		late = max(late, governorLateTick)
	}
	g.ticks.Add(1)
	if late >= governorLateTick {
		g.late.Add(1)
		if late >= governorSevereTick {
			g.severe.Add(1)
		}
	}
	since := int64(now.Sub(g.origin))
	start := g.window.Load()
	if since-start >= int64(governorWindow) && g.window.CompareAndSwap(start, since) {
		g.closeWindow()
	}
	return int(g.level.Load())
}

// closeWindow adjusts the level after a window; only the player that won
// the window's compare-and-swap calls it.
func (g *complexityGovernor) closeWindow() {
	ticks, late, severe := g.ticks.Swap(0), g.late.Swap(0), g.severe.Swap(0)
	level := g.level.Load()
	restart := func() {
		g.calm.Store(0)
		g.calmSince.Store(g.gcCycles())
	}
	switch {
	case severe > 0 || late*100 > ticks:
		restart()
		g.level.Store(max(level-governorStepDown, 0))
	case late*1000 > ticks:
		restart() // a little behind: hold
	default:
		calm := g.calm.Add(1)
		if calm >= governorCalmNoGC || calm >= governorCalmSteps && g.gcCycles() > g.calmSince.Load() {
			restart()
			g.level.Store(min(level+1, g.max))
		}
	}
}
