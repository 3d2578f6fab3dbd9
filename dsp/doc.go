// Package dsp is framewire's pure-Go audio signal toolbox: a streaming
// polyphase resampler, PCM helpers (conversion, mixing, gain, level,
// silence), G.711 µ-law and A-law, tones and a Goertzel tone detector, and WAV
// files.
//
// It is a leaf: it imports only the standard library, so transports,
// processors and tools can all use it without depending on each other.
// Transports use the resampler to move between the network's rates and the
// pipeline's 16 kHz input and 24 kHz output; TTS and STT services use it to
// match a provider's rate; processors/audio builds its VAD on the level
// helpers. Tests across the project use [Tone], [ToneAmplitude] and
// [DecodeWAV] to check that a sound arrives intact.
//
// Audio is always signed 16-bit little-endian PCM, interleaved when it has
// several channels, as in frames.Audio. Nothing here uses cgo, and the
// per-frame paths do not allocate once their buffers have grown.
package dsp
