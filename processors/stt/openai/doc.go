// Package openai is an stt.Transcriber for any server that speaks OpenAI's
// POST /v1/audio/transcriptions: OpenAI (whisper-1, gpt-4o-transcribe),
// Groq, Speaches / faster-whisper-server and whisper.cpp's server (started
// with --inference-path /v1/audio/transcriptions). Each utterance is
// uploaded as a WAV file in a multipart form; use it with stt.Segmented.
//
// Requests that fail with a connection error, HTTP 429 or 5xx are retried
// with backoff; errors carry OpenAI's error object. Connecting, the wait
// for the answer and the silence between its reads are bounded
// ([Options].Timeouts: 10s, 10s, 20s by default). Tests replay recorded
// response bodies from testdata on httptest servers.
package openai
