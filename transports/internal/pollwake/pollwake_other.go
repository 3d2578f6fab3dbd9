//go:build !linux

package pollwake

import (
	"errors"
	"time"
)

// New fails: only Linux has timerfd. Callers go without the ticker; their
// timers then wait for the runtime's monitor during idle GC marking, as
// everyone's do.
func New(period time.Duration) (*Ticker, error) {
	return nil, errors.New("pollwake: needs Linux's timerfd")
}

// Wait is never reached: New fails.
func (t *Ticker) Wait() (uint64, error) { return 0, errors.New("pollwake: needs Linux's timerfd") }
