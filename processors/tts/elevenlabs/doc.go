// Package elevenlabs is a tts.Synthesizer for ElevenLabs' text-to-speech
// API. By default it streams over the multi-context websocket
// (wss://api.elevenlabs.io/v1/text-to-speech/{voice_id}/multi-stream-input):
// one connection serves every request of a session, each request is a
// context of its own (opened with the voice settings, its text sent
// flushed, closed once spoken), and an interruption closes its context
// while the connection goes on. The HTTP streaming endpoint
// (/v1/text-to-speech/{voice_id}/stream/with-timestamps) is the fallback
// transport where websockets cannot pass.
//
// Both ask for raw 16-bit PCM at the pipeline's output rate when every
// ElevenLabs plan has it (pcm_8000 to pcm_24000), else at 24 kHz, which
// the tts.Service resamples (pcm_44100 is for the Pro tier and above; a
// rate set in Options that the account's tier refuses falls back to
// 24 kHz), and turn ElevenLabs' character alignment into word timestamps, so the
// tts.Service releases each word's text with its audio exactly as it does
// for Cartesia. Every phase of a request is timed (connect, first audio,
// silence between messages), a request that failed before any audio is
// retried on a rate limit or a dropped connection, and errors say what
// failed with ElevenLabs' status and message (the raw body stays on the
// [APIError] for the log).
//
// Configuration comes from [Options], with environment defaults:
// ELEVENLABS_API_KEY, ELEVENLABS_VOICE_ID, ELEVENLABS_MODEL and
// ELEVENLABS_BASE_URL.
package elevenlabs
