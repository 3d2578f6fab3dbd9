// Package deepgram is an stt.Streamer for Deepgram's live transcription
// API (wss://api.deepgram.com/v1/listen), over github.com/coder/websocket.
// Use it with stt.Streaming: audio goes up as binary linear16 frames, the
// service's Finalize, KeepAlive and CloseStream messages control the
// session, and Results messages come back as interim and final events
// (final ones that answer a Finalize, or that Deepgram marks speech_final,
// close the utterance).
//
// Tests replay recorded sessions from testdata on a fake server.
package deepgram
