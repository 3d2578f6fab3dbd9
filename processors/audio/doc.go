// Package audio holds framewire's voice processors: voice activity
// detection and user-turn tracking.
//
// The [VADProcessor] sits after the input transport and turns
// [frames.InputAudioRaw] into VAD frames; the [TurnTracker] turns VAD and
// transcription frames into user turns and starts the interruption that
// lets the user barge in. The signal helpers they are built on (resampler,
// PCM, tones, WAV) are in package dsp, which transports use too.
//
// Audio is always signed 16-bit little-endian PCM, interleaved when it has
// several channels, as in [frames.Audio]. Nothing here uses cgo, and the
// per-frame paths do not allocate once their buffers have grown.
package audio
