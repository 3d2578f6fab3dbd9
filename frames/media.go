package frames

// Audio is raw 16-bit little-endian PCM with its format. The sample buffer is
// shared, never copied, between hops: treat it as read-only once pushed.
type Audio struct {
	// PCM holds interleaved signed 16-bit little-endian samples.
	PCM []byte
	// SampleRate is in Hz.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
}

// NumFrames returns the number of sample frames (samples per channel).
func (a *Audio) NumFrames() int {
	if a.Channels <= 0 {
		return 0
	}
	return len(a.PCM) / (2 * a.Channels)
}

// InputAudioRaw is audio from the user. It is a system frame so user audio
// never waits behind queued data and is never flushed.
type InputAudioRaw struct {
	Base
	System
	Audio
	// UserID names the speaker when the transport knows it.
	UserID string
}

// OutputAudioRaw is audio for the output transport to play.
type OutputAudioRaw struct {
	Base
	Ordered
	Audio
}

// TTSAudioRaw is audio produced by a TTS service.
type TTSAudioRaw struct {
	Base
	Ordered
	Audio
	// ContextID ties the audio to the TTS request that produced it.
	ContextID string
}
