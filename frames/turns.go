package frames

import "time"

// UserStartedSpeaking marks the start of a user turn, as decided by the turn
// strategy (not raw VAD).
type UserStartedSpeaking struct {
	Base
	System
	// Emulated is true when the turn was inferred from text, not audio.
	Emulated bool
}

// UserStoppedSpeaking marks the end of a user turn.
type UserStoppedSpeaking struct {
	Base
	System
	// Emulated is true when the turn was inferred from text, not audio.
	Emulated bool
}

// UserSpeaking is pushed periodically while the user speaks; it counts as
// activity for idle detection.
type UserSpeaking struct {
	Base
	System
}

// VADUserStartedSpeaking is raw voice activity: speech has been heard for
// StartSecs.
type VADUserStartedSpeaking struct {
	Base
	System
	// StartSecs is the VAD start delay that elapsed before this frame.
	StartSecs float64
	// Timestamp is the wall-clock time the frame was made.
	Timestamp time.Time
}

// VADUserStoppedSpeaking is raw voice activity: silence has lasted StopSecs.
type VADUserStoppedSpeaking struct {
	Base
	System
	// StopSecs is the VAD stop delay that elapsed before this frame; the
	// user actually stopped StopSecs before Timestamp.
	StopSecs float64
	// Timestamp is the wall-clock time the frame was made.
	Timestamp time.Time
}

// UserMuteStarted reports that user input is muted.
type UserMuteStarted struct {
	Base
	System
}

// UserMuteStopped reports that user input is no longer muted.
type UserMuteStopped struct {
	Base
	System
}

// BotStartedSpeaking is emitted by the output transport when bot audio
// starts playing, as a broadcast pair (one copy per direction).
type BotStartedSpeaking struct {
	Base
	System
}

// BotStoppedSpeaking is emitted by the output transport when bot audio has
// finished or was interrupted, as a broadcast pair.
type BotStoppedSpeaking struct {
	Base
	System
}

// BotSpeaking is emitted periodically while bot audio plays.
type BotSpeaking struct {
	Base
	System
}
