package observers

import (
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
)

// TurnTracker numbers conversation turns and reports when each starts and
// ends. Turn 1 starts with the pipeline. A user starting to speak starts a
// new turn, ending the previous one as interrupted if the bot was speaking;
// a turn also ends EndAfterBot after the bot stops speaking, unless the
// user or the bot speaks again first. End and Cancel close the last turn.
type TurnTracker struct {
	// OnTurnStarted is called with the turn number.
	OnTurnStarted func(turn int)
	// OnTurnEnded is called with the turn number, its duration and whether
	// the user interrupted the bot.
	OnTurnEnded func(turn int, d time.Duration, interrupted bool)
	// EndAfterBot is how long after the bot stops speaking a turn ends.
	// Default: 2.5s.
	EndAfterBot time.Duration

	mu          sync.Mutex
	turn        int
	open        bool
	startedAt   time.Duration
	botSpeaking bool
	botSpoke    bool
	timer       *time.Timer
	closed      bool
}

// Wants implements [Filter].
func (t *TurnTracker) Wants(kind EventKind, f frames.Frame) bool {
	if kind != Pushed {
		return false
	}
	switch f.(type) {
	case *frames.Start, *frames.End, *frames.Cancel, *frames.UserStartedSpeaking,
		*frames.BotStartedSpeaking, *frames.BotStoppedSpeaking:
		return true
	}
	return false
}

// Observe implements [Observer].
func (t *TurnTracker) Observe(e Event) {
	if !e.FirstSeen || e.Direction != frames.Downstream {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	switch e.Frame.(type) {
	case *frames.Start:
		t.startTurn(e.At)
	case *frames.UserStartedSpeaking:
		if t.open && (t.botSpeaking || t.botSpoke) {
			t.endTurn(e.At, t.botSpeaking)
		}
		if !t.open {
			t.startTurn(e.At)
		}
	case *frames.BotStartedSpeaking:
		t.botSpeaking, t.botSpoke = true, true
		t.stopTimer()
	case *frames.BotStoppedSpeaking:
		t.botSpeaking = false
		t.stopTimer()
		turn := t.turn
		wait := t.EndAfterBot
		if wait == 0 {
			wait = 2500 * time.Millisecond
		}
		at := e.At + wait
		t.timer = time.AfterFunc(wait, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.open && t.turn == turn && !t.botSpeaking && !t.closed {
				t.endTurn(at, false)
			}
		})
	case *frames.End, *frames.Cancel:
		if t.open {
			t.endTurn(e.At, false)
		}
		t.stopTimer()
		t.closed = true
	}
}

func (t *TurnTracker) startTurn(at time.Duration) {
	t.turn++
	t.open, t.startedAt, t.botSpoke = true, at, false
	if t.OnTurnStarted != nil {
		t.OnTurnStarted(t.turn)
	}
}

func (t *TurnTracker) endTurn(at time.Duration, interrupted bool) {
	t.open = false
	t.stopTimer()
	if t.OnTurnEnded != nil {
		t.OnTurnEnded(t.turn, at-t.startedAt, interrupted)
	}
}

func (t *TurnTracker) stopTimer() {
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}
