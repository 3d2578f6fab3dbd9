// Package deepgram is an stt.Streamer for Deepgram's live transcription
// API (wss://api.deepgram.com/v1/listen), over github.com/coder/websocket.
// Use it with stt.Streaming: audio goes up as binary linear16 frames, the
// service's Finalize, KeepAlive and CloseStream messages control the
// session, and Results messages come back as interim and final events
// (final ones that answer a Finalize, or that Deepgram marks speech_final,
// close the utterance). The handshake is bounded, and so is the server's
// silence while audio it has not answered is out ([Options].Timeouts:
// 10s, first answer 10s, then 20s by default): a silent session is closed
// with a transient error, and stt.Streaming reconnects.
//
// Tests replay recorded sessions from testdata on a fake server.
package deepgram
