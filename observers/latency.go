package observers

import (
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
)

// Latency measures user-to-bot latency: from the moment the user actually
// stopped speaking (the VAD stop frame's time minus its stop delay) to the
// moment bot audio starts. Times come from the events, taken on the
// pipeline side, so a busy observer does not skew them. A new user turn or
// an interruption resets the measurement.
type Latency struct {
	// OnLatency is called once per measured turn.
	OnLatency func(d time.Duration)

	mu      sync.Mutex
	stopped time.Duration // when the user stopped, or -1
	armed   bool
}

// Wants implements [Filter].
func (l *Latency) Wants(kind EventKind, f frames.Frame) bool {
	if kind != Pushed {
		return false
	}
	switch f.(type) {
	case *frames.VADUserStoppedSpeaking, *frames.VADUserStartedSpeaking,
		*frames.Interruption, *frames.BotStartedSpeaking:
		return true
	}
	return false
}

// Observe implements [Observer].
func (l *Latency) Observe(e Event) {
	if !e.FirstSeen || e.Direction != frames.Downstream {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch f := e.Frame.(type) {
	case *frames.VADUserStartedSpeaking, *frames.Interruption:
		l.armed = false
	case *frames.VADUserStoppedSpeaking:
		l.stopped = e.At - time.Duration(f.StopSecs*float64(time.Second))
		l.armed = true
	case *frames.BotStartedSpeaking:
		if l.armed {
			l.armed = false
			if l.OnLatency != nil {
				l.OnLatency(e.At - l.stopped)
			}
		}
	}
}
