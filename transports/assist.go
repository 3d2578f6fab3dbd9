package transports

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framewire/framewire/transports/internal/pollwake"
)

// An Assist lets a server's busy goroutines send the frames of outputs
// whose clocks the Go scheduler has left waiting. A server makes one with
// NewAssist and gives it to all its sessions' outputs (OutputOptions.Assist)
// and calls Help from its other per-frame goroutines (input readers); nil
// means none.
//
// A player sleeps on a timer between frames. On a loaded machine, during a
// garbage collection's mark phase, a player woken by its timer can be
// pushed to the back of its processor's run queue and wait there for
// 20 ms or more behind hundreds of runnable goroutines
// (docs/decisions/webrtc-audio.md); Go has no goroutine priorities. But
// the goroutines in that queue do run, one after another, and among them
// are the transport's own: the input readers, the output processors and
// the players that did wake in time (and a heartbeat, see startHeartbeat).
// Each of them calls Help as it goes;
// at most once per assistScanEvery one of those calls looks for players
// whose frame is more than assistAfter overdue and sends it, encoding and
// all, in the player's place. The deadline work is thus done by whichever
// transport goroutine runs first once a deadline is at risk, instead of by
// the one goroutine that is stuck.
//
// A player and its assistants never send at once: whoever sends holds the
// player's state (the player's acquire), and a player that finds its frame
// already sent sleeps until the next one.
type Assist struct {
	origin time.Time // the clock of the players' due times
	// after, every and budget are assistAfter, assistScanEvery and
	// assistMaxFrames; tests change them.
	after  time.Duration
	every  time.Duration
	budget int

	mu       sync.Mutex // serialises changes to players and the fields below
	players  atomic.Pointer[[]*player]
	lastScan atomic.Int64 // nanoseconds since origin

	// heartbeat runs while there are players, if withHeartbeat; see
	// startHeartbeat.
	withHeartbeat bool
	heartbeat     *pollwake.Ticker
	heartbeatDone chan struct{}
}

const (
	// assistAfter is how overdue a frame must be before another goroutine
	// sends it: past a loaded machine's usual scheduling delay (a few
	// milliseconds at the 99th percentile), well before a gap (20 ms).
	assistAfter = 5 * time.Millisecond
	// assistScanEvery bounds how often the players are looked over.
	assistScanEvery = time.Millisecond
	// assistMaxFrames bounds the frames one call of Help sends, so that
	// the rescue of many players is spread over several goroutines.
	assistMaxFrames = 4
	// assistRetry is how soon a player whose frame is being sent for it
	// looks again.
	assistRetry = 2 * time.Millisecond
	// heartbeatPeriod bounds how long the garbage collector's idle
	// workers can keep the players' timers from firing.
	heartbeatPeriod = 2 * time.Millisecond
)

// AssistOptions configure an Assist.
type AssistOptions struct {
	// NoHeartbeat leaves out the heartbeat goroutine (see startHeartbeat),
	// for environments where a file descriptor is unwelcome: a test in a
	// testing/synctest bubble, whose fake clock a descriptor would stop.
	NoHeartbeat bool
}

// NewAssist returns an Assist for the outputs of one server.
func NewAssist(opts AssistOptions) *Assist {
	return &Assist{origin: time.Now(), after: assistAfter, every: assistScanEvery, budget: assistMaxFrames, withHeartbeat: !opts.NoHeartbeat}
}

// since returns t on the assist's clock.
func (a *Assist) since(t time.Time) int64 { return int64(t.Sub(a.origin)) }

// add makes p's frames eligible for assistance.
func (a *Assist) add(p *player) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var ps []*player
	if old := a.players.Load(); old != nil {
		ps = slices.Clone(*old)
	}
	ps = append(ps, p)
	a.players.Store(&ps)
	if len(ps) == 1 {
		a.startHeartbeat()
	}
}

// remove takes p out; a scan that already holds the old list can still
// see it, which player.close accounts for.
func (a *Assist) remove(p *player) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.players.Load()
	if old == nil {
		return
	}
	ps := slices.DeleteFunc(slices.Clone(*old), func(q *player) bool { return q == p })
	a.players.Store(&ps)
	if len(ps) == 0 {
		a.stopHeartbeat()
	}
}

// startHeartbeat starts a goroutine woken every heartbeatPeriod through
// the network poller, which calls Help. While the collector marks and the
// processors have no runnable goroutine, each runs an idle mark worker,
// which keeps the processor until a goroutine becomes runnable or the
// poller has news, but does not check timers: without the heartbeat, every
// player (a timer) would wait for the runtime to preempt the workers, 10
// ms or more (see package pollwake). Where the poller cannot be used so,
// the players go without. a.mu is held.
func (a *Assist) startHeartbeat() {
	if !a.withHeartbeat {
		return
	}
	tk, err := pollwake.New(heartbeatPeriod)
	if err != nil {
		return
	}
	a.heartbeat, a.heartbeatDone = tk, make(chan struct{})
	go func(done chan<- struct{}) {
		defer close(done)
		for {
			if _, err := tk.Wait(); err != nil {
				return // closed
			}
			a.Help()
		}
	}(a.heartbeatDone)
}

// stopHeartbeat stops the heartbeat and waits for its goroutine; a.mu is
// held.
func (a *Assist) stopHeartbeat() {
	if a.heartbeat == nil {
		return
	}
	a.heartbeat.Close()
	<-a.heartbeatDone
	a.heartbeat, a.heartbeatDone = nil, nil
}

// Help sends, on the calling goroutine, the frames of players more than
// a.after (assistAfter) overdue, at most a.budget of them. It costs a
// clock read and an atomic load unless it is the first call in a.every.
func (a *Assist) Help() {
	if a == nil {
		return
	}
	now := time.Now()
	t := a.since(now)
	last := a.lastScan.Load()
	if t-last < int64(a.every) || !a.lastScan.CompareAndSwap(last, t) {
		return
	}
	ps := a.players.Load()
	if ps == nil || len(*ps) == 0 {
		return
	}
	// Start each scan at a different player, so that when the budget runs
	// out it is not always the same players that wait.
	n := len(*ps)
	first := int(t/int64(max(a.every, time.Microsecond))) % n
	budget := a.budget
	for i := range n {
		p := (*ps)[(first+i)%n]
		if t-p.due.Load() < int64(a.after) || !p.acquire() {
			continue
		}
		for budget > 0 && p.step(now, true) {
			budget--
		}
		p.release()
		if budget == 0 {
			// More may be overdue: let the next call look at once.
			a.lastScan.Store(t - int64(a.every))
			return
		}
	}
}
