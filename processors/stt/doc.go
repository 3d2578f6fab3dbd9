// Package stt is framewire's speech-to-text layer: the processors that turn
// the user's audio into frames.Transcription and
// frames.InterimTranscription, and the small interfaces that services
// implement.
//
// There are two kinds of service. [Segmented] buffers one utterance,
// delimited by the VAD processor's frames.VADUserStartedSpeaking and
// frames.VADUserStoppedSpeaking, and sends it as one request to a
// [Transcriber] (stt/openai: OpenAI, Groq, faster-whisper and whisper.cpp
// servers). [Streaming] keeps a live session with a [Streamer] (stt/deepgram)
// and pushes interim and final results as they come, reconnecting with
// backoff when the session fails.
//
// Both sit after the VAD processor and before the turn tracker and the
// user aggregator:
//
//	transport.In → audio.VADProcessor → STT → audio.TurnTracker → user aggregator → LLM → ...
//
// Transcriptions carry the user id, an ISO 8601 timestamp (see
// [Timestamp]) and the language; TTFB and usage metrics go downstream as
// frames.Metrics when the task enables them.
package stt
