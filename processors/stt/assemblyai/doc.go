// Package assemblyai is an stt.Streamer for AssemblyAI's Universal
// Streaming API (v3, wss://streaming.assemblyai.com/v3/ws), over
// github.com/coder/websocket. Use it with stt.Streaming, as
// stt/deepgram is used: the pipeline's audio goes up as binary pcm_s16le
// messages of about 50 ms (the client gathers the pipeline's shorter
// frames, as the server rejects messages under 50 ms), ForceEndpoint ends
// a turn when the VAD hears the user stop, KeepAlive and a ping keep a
// quiet session open and checked, and Terminate ends it with its last
// turns. Turn messages come back as interim events while the turn grows
// and as one final event at its end (its formatted end when formatted
// turns are on), which closes the utterance.
//
// The session opens on the server's Begin message, so a refused key fails
// Connect with a permanent error and stops the service; other failures
// (server errors, expired sessions, concurrency limits, a cut connection)
// are transient and the service reconnects with backoff. Tests replay
// sessions from testdata on a fake server.
package assemblyai
