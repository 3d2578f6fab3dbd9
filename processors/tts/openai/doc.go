// Package openai is a tts.Synthesizer for any server that speaks OpenAI's
// POST /v1/audio/speech: OpenAI itself, and local servers such as
// Kokoro-FastAPI, Speaches or LocalAI. It asks for response_format "pcm"
// (raw 16-bit mono PCM, 24 kHz at OpenAI) and streams the body as it
// arrives, so the first audio plays before the sentence is finished.
//
// Requests that fail before any audio (connection errors, HTTP 429 and 5xx)
// are retried with backoff; errors carry OpenAI's error object. Connecting,
// the first audio and the silence between reads are bounded
// ([Options].Timeouts: 10s, 10s, 20s by default), so a silent server fails
// the sentence instead of holding the turn. Tests
// replay recorded bodies from testdata on httptest servers.
package openai
