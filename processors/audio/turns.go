package audio

import (
	"context"
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// TurnStartStrategy decides when a user turn starts. A strategy belongs to
// one [TurnTracker]; do not share it.
type TurnStartStrategy interface {
	// StartsTurn reports whether f, seen while no user turn is open,
	// starts one.
	StartsTurn(f frames.Frame) bool
}

// TurnStopStrategy decides when the open user turn stops. The tracker
// feeds it every turn-related frame with the time it arrived and asks it
// when the turn should stop; it never stops a turn while the VAD says the
// user is speaking. A strategy belongs to one [TurnTracker]; do not share
// it.
type TurnStopStrategy interface {
	// Observe updates the strategy with f, which arrived at now.
	Observe(f frames.Frame, now time.Time)
	// StopAt returns when the turn should stop if nothing else arrives;
	// ok is false while the strategy has no reason to stop it.
	StopAt() (at time.Time, ok bool)
	// TurnStarted clears per-turn state when a turn starts (before the
	// frame that started it is observed).
	TurnStarted()
	// TurnStopped clears all state when a turn stops.
	TurnStopped()
}

// VADTurnStart starts a user turn when the VAD hears speech
// ([frames.VADUserStartedSpeaking]), like Pipecat's
// VADUserTurnStartStrategy.
type VADTurnStart struct{}

// StartsTurn implements [TurnStartStrategy].
func (VADTurnStart) StartsTurn(f frames.Frame) bool {
	_, ok := f.(*frames.VADUserStartedSpeaking)
	return ok
}

// TranscriptionTurnStart starts a user turn when a transcription arrives
// while no turn is open: the fallback for speech the VAD missed (a soft
// voice), like Pipecat's TranscriptionUserTurnStartStrategy. Such turns are
// marked Emulated.
type TranscriptionTurnStart struct {
	// IgnoreInterim waits for a final transcription instead of starting on
	// the first interim one.
	IgnoreInterim bool
}

// StartsTurn implements [TurnStartStrategy].
func (s TranscriptionTurnStart) StartsTurn(f frames.Frame) bool {
	switch f := f.(type) {
	case *frames.Transcription:
		return f.Text != ""
	case *frames.InterimTranscription:
		return !s.IgnoreInterim && f.Text != ""
	}
	return false
}

// SpeechTimeoutTurnStop stops a user turn UserSpeechTimeout after the VAD
// reports the user stopped speaking, once at least one transcription has
// arrived in the turn, like Pipecat's SpeechTimeoutUserTurnStopStrategy
// (without its STT-latency timer). When transcriptions arrive without any
// VAD stop (the turn was started by text), the timeout runs from the last
// transcription instead. With the default VAD StopSecs of 0.2 s the turn
// ends 0.8 s after the user's last sound.
type SpeechTimeoutTurnStop struct {
	// UserSpeechTimeout is how long the user may pause and carry on within
	// the same turn, counted from the VAD stop. Default: 600 ms.
	UserSpeechTimeout time.Duration
	// IgnoreTranscripts stops the turn without waiting for a transcription,
	// for pipelines without speech-to-text (a realtime speech model).
	IgnoreTranscripts bool

	vadSpeaking bool
	haveText    bool
	vadStopped  time.Time
	lastText    time.Time
}

func (s *SpeechTimeoutTurnStop) timeout() time.Duration {
	if s.UserSpeechTimeout > 0 {
		return s.UserSpeechTimeout
	}
	return 600 * time.Millisecond
}

// Observe implements [TurnStopStrategy].
func (s *SpeechTimeoutTurnStop) Observe(f frames.Frame, now time.Time) {
	switch f := f.(type) {
	case *frames.VADUserStartedSpeaking:
		s.vadSpeaking = true
		s.vadStopped, s.lastText = time.Time{}, time.Time{}
	case *frames.VADUserStoppedSpeaking:
		s.vadSpeaking = false
		s.vadStopped = now
	case *frames.Transcription:
		if f.Text == "" {
			return
		}
		s.haveText = true
		if !s.vadSpeaking && s.vadStopped.IsZero() {
			s.lastText = now
		}
	}
}

// StopAt implements [TurnStopStrategy].
func (s *SpeechTimeoutTurnStop) StopAt() (time.Time, bool) {
	switch {
	case s.vadSpeaking, !s.IgnoreTranscripts && !s.haveText:
		return time.Time{}, false
	case !s.vadStopped.IsZero():
		return s.vadStopped.Add(s.timeout()), true
	case !s.lastText.IsZero():
		return s.lastText.Add(s.timeout()), true
	}
	return time.Time{}, false
}

// TurnStarted implements [TurnStopStrategy]: it keeps whether the VAD hears
// the user, which is not per turn.
func (s *SpeechTimeoutTurnStop) TurnStarted() {
	s.haveText = false
	s.vadStopped, s.lastText = time.Time{}, time.Time{}
}

// TurnStopped implements [TurnStopStrategy].
func (s *SpeechTimeoutTurnStop) TurnStopped() {
	s.TurnStarted()
	s.vadSpeaking = false
}

// TranscriptionTurnStop stops a user turn once a final transcription has
// arrived and the user is silent: at once when the VAD stops after text
// has arrived, otherwise Timeout after the last transcription, and never
// while an interim result is waiting for its final, like Pipecat's
// TranscriptionUserTurnStopStrategy.
type TranscriptionTurnStop struct {
	// Timeout is how long to wait after the last transcription for more.
	// Default: 500 ms.
	Timeout time.Duration

	vadSpeaking bool
	interim     bool
	haveText    bool
	lastText    time.Time
	stopNow     time.Time
}

// Observe implements [TurnStopStrategy].
func (s *TranscriptionTurnStop) Observe(f frames.Frame, now time.Time) {
	switch f := f.(type) {
	case *frames.VADUserStartedSpeaking:
		s.vadSpeaking = true
		s.stopNow = time.Time{}
	case *frames.VADUserStoppedSpeaking:
		s.vadSpeaking = false
		if s.haveText && !s.interim {
			s.stopNow = now // only this moment: later text restarts the wait
		}
	case *frames.InterimTranscription:
		s.interim = true
	case *frames.Transcription:
		s.interim = false
		if f.Text != "" {
			s.haveText = true
		}
		s.lastText = now
		s.stopNow = time.Time{}
	}
}

// StopAt implements [TurnStopStrategy].
func (s *TranscriptionTurnStop) StopAt() (time.Time, bool) {
	if s.vadSpeaking || s.interim || !s.haveText {
		return time.Time{}, false
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 500 * time.Millisecond
	}
	at := s.lastText.Add(timeout)
	if !s.stopNow.IsZero() && s.stopNow.Before(at) {
		at = s.stopNow
	}
	return at, true
}

// TurnStarted implements [TurnStopStrategy].
func (s *TranscriptionTurnStop) TurnStarted() { *s = TranscriptionTurnStop{Timeout: s.Timeout} }

// TurnStopped implements [TurnStopStrategy].
func (s *TranscriptionTurnStop) TurnStopped() { s.TurnStarted() }

// TurnTrackerOptions configure a [TurnTracker]. The zero value gives
// Pipecat's start strategies (VAD, then transcription) and a
// [SpeechTimeoutTurnStop].
type TurnTrackerOptions struct {
	// Start lists the start strategies, tried in order. Default:
	// VADTurnStart, then TranscriptionTurnStart.
	Start []TurnStartStrategy
	// Stop lists the stop strategies; the first ready one stops the turn.
	// Default: a new SpeechTimeoutTurnStop.
	Stop []TurnStopStrategy
	// StopTimeout stops a turn that nothing else stopped after this long
	// without VAD or transcription activity while the user is silent
	// (Pipecat's user_turn_stop_timeout). Default: 5 s; negative disables.
	StopTimeout time.Duration
	// NoInterruptions keeps the tracker from interrupting the bot when a
	// user turn starts.
	NoInterruptions bool
}

// TurnTracker decides user turns. It watches VAD and transcription frames
// (forwarding them), and when its start strategies open a turn it
// broadcasts [frames.UserStartedSpeaking] and then interrupts the bot
// ([pipeline.Handle.Interrupt]); when its stop strategies close the turn it
// broadcasts [frames.UserStoppedSpeaking]. Turns started by text are marked
// Emulated. Stops can come from a timer, between frames.
//
// Place it after the VAD and the speech-to-text service. The user turn
// frames are system frames, so downstream they can overtake the ordered
// transcription that completed the turn: a consumer that needs the text of
// the turn must take transcriptions that arrive after the stop into it.
type TurnTracker struct {
	start       []TurnStartStrategy
	stop        []TurnStopStrategy
	stopTimeout time.Duration
	interrupt   bool

	// out pushes the turn stops the timer decides, and runs the timer's
	// goroutine as background work of the task (started in Setup; the
	// task ends it on Cancel and at teardown, and waits for it).
	out pipeline.Outlet

	// mu guards the turn state, shared by the node goroutine and the
	// timer's goroutine. Audio frames pass without taking it.
	mu           sync.Mutex
	timer        *time.Timer // created in Setup; fires into the timer's goroutine
	closed       bool
	turnOpen     bool
	emulated     bool
	vadSpeaking  bool
	lastActivity time.Time
}

// NewTurnTracker returns a turn tracker.
func NewTurnTracker(opts TurnTrackerOptions) *TurnTracker {
	if opts.Start == nil {
		opts.Start = []TurnStartStrategy{VADTurnStart{}, TranscriptionTurnStart{}}
	}
	if opts.Stop == nil {
		opts.Stop = []TurnStopStrategy{&SpeechTimeoutTurnStop{}}
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 5 * time.Second
	}
	return &TurnTracker{
		start:       opts.Start,
		stop:        opts.Stop,
		stopTimeout: opts.StopTimeout,
		interrupt:   !opts.NoInterruptions,
	}
}

// Setup implements [pipeline.Setupper]: it starts the stop timer's
// goroutine as background work of the task.
func (t *TurnTracker) Setup(_ context.Context, s pipeline.Setup) error {
	s.Attach(&t.out)
	t.mu.Lock()
	t.closed = false
	if t.timer == nil {
		t.timer = time.NewTimer(time.Hour)
		t.timer.Stop()
	}
	timer := t.timer
	t.mu.Unlock()
	return t.out.Go("stop timer", func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-timer.C: // no stale tick after Stop or Reset (Go 1.23 timers)
				t.onTimer()
			}
		}
	})
}

// Cleanup implements [pipeline.Cleaner]: it stops the timer.
func (t *TurnTracker) Cleanup(context.Context) error {
	t.close()
	return nil
}

func (t *TurnTracker) close() {
	t.mu.Lock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
	}
	t.mu.Unlock()
}

// ProcessFrame implements [pipeline.Processor].
func (t *TurnTracker) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	switch f.(type) {
	case *frames.VADUserStartedSpeaking, *frames.VADUserStoppedSpeaking,
		*frames.Transcription, *frames.InterimTranscription:
	case *frames.End, *frames.Cancel, *frames.Stop:
		t.close()
		return nil
	default:
		return nil
	}
	h.Forward()

	t.mu.Lock()
	now := time.Now()
	t.lastActivity = now
	switch f.(type) {
	case *frames.VADUserStartedSpeaking:
		t.vadSpeaking = true
	case *frames.VADUserStoppedSpeaking:
		t.vadSpeaking = false
	}
	started := false
	if !t.turnOpen {
		for _, s := range t.start {
			if s.StartsTurn(f) {
				_, byVAD := f.(*frames.VADUserStartedSpeaking)
				t.openLocked(!byVAD)
				started = true
				break
			}
		}
	}
	for _, s := range t.stop {
		s.Observe(f, now)
	}
	// Pushing under the lock keeps these frames in order with the ones the
	// stop timer pushes; pushes never block.
	if started {
		emulated := t.emulated
		pipeline.Broadcast(h.Pusher(), func() *frames.UserStartedSpeaking { return &frames.UserStartedSpeaking{Emulated: emulated} })
		if t.interrupt {
			h.Interrupt()
		}
	}
	t.checkLocked(h.Pusher(), now)
	t.mu.Unlock()
	return nil
}

func (t *TurnTracker) openLocked(emulated bool) {
	t.turnOpen, t.emulated = true, emulated
	for _, s := range t.stop {
		s.TurnStarted()
	}
}

// checkLocked stops the turn, pushing the stop through out, if a stop
// strategy or the watchdog says so at now, and otherwise arms the timer for
// the next deadline.
func (t *TurnTracker) checkLocked(out pipeline.Pusher, now time.Time) {
	if !t.turnOpen || t.vadSpeaking {
		t.disarmLocked()
		return
	}
	var next time.Time
	for _, s := range t.stop {
		at, ok := s.StopAt()
		if !ok {
			continue
		}
		if !at.After(now) {
			t.closeTurnLocked(out)
			return
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if t.stopTimeout > 0 {
		at := t.lastActivity.Add(t.stopTimeout)
		if !at.After(now) {
			t.closeTurnLocked(out)
			return
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if !next.IsZero() {
		t.armLocked(next.Sub(now))
	}
}

func (t *TurnTracker) closeTurnLocked(out pipeline.Pusher) {
	t.turnOpen = false
	t.disarmLocked()
	for _, s := range t.stop {
		s.TurnStopped()
	}
	emulated := t.emulated
	pipeline.Broadcast(out, func() *frames.UserStoppedSpeaking { return &frames.UserStoppedSpeaking{Emulated: emulated} })
}

func (t *TurnTracker) armLocked(d time.Duration) {
	if t.closed || t.timer == nil {
		return
	}
	t.timer.Reset(d)
}

func (t *TurnTracker) disarmLocked() {
	if t.timer != nil {
		t.timer.Stop()
	}
}

// onTimer runs on the timer's goroutine when a deadline passes.
func (t *TurnTracker) onTimer() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.checkLocked(&t.out, time.Now())
	}
}
