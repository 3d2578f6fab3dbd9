// Package audio is framewire's pure-Go audio toolbox: a streaming polyphase
// resampler, PCM helpers (conversion, mixing, level, silence, tones, a
// Goertzel tone detector, WAV files), voice activity detection and user-turn
// tracking.
//
// Transports use the resampler to move between the network's 48 kHz and the
// pipeline's 16 kHz input and 24 kHz output rates; TTS services use it to
// match the output rate. The [VADProcessor] sits after the input transport
// and turns [frames.InputAudioRaw] into VAD frames; the [TurnTracker] turns
// VAD and transcription frames into user turns and starts the interruption
// that lets the user barge in. Tests across the project use [Tone],
// [ToneAmplitude] and [DecodeWAV] to check that a sound arrives intact.
//
// Audio is always signed 16-bit little-endian PCM, interleaved when it has
// several channels, as in [frames.Audio]. Nothing here uses cgo, and the
// per-frame paths do not allocate once their buffers have grown.
package audio
