// Package assemblyai is an stt.Streamer for AssemblyAI's Universal
// Streaming API (v3, wss://streaming.assemblyai.com/v3/ws), over
// github.com/coder/websocket. It plays the part stt/deepgram plays: wrap a
// [Client] in stt.Streaming, which keeps the session open, reconnects with
// backoff and turns its events into transcription frames.
//
//	stt.NewStreaming(assemblyai.New(assemblyai.Options{}), stt.StreamingOptions{Language: "en"})
//
// The pipeline's audio goes up as binary pcm_s16le messages of about 50 ms:
// the session gathers the pipeline's 20 ms frames, as the server closes a
// session that sends messages under 50 ms or over 1 s, and pads the last
// piece with silence when it must send early. ForceEndpoint ends the turn
// when the VAD hears the user stop, KeepAlive and a ping keep a quiet
// session open and checked, and Terminate ends it with its last turns.
// Turn messages come back as interim events while the turn grows (all the
// words heard so far) and as one final event at its end (its formatted
// end when formatted turns are on), which closes the utterance.
//
// Connect returns once the server's Begin message has come, so a refused
// key fails there with a permanent error and stops the service. Close
// codes map to error categories: unauthorized (1008, 4001), out of funds
// (4002, 4003) and rejected input (3006, 4000, 4100, 4101) are permanent;
// server errors, expired sessions, concurrency limits and a cut connection
// are transient, and the service reconnects. [Session.UpdateConfiguration]
// changes the turn detection of an open session.
//
// Turn messages, the stream's hot path, are read by internal/jsontext's
// scanner in its strict mode, which allocates only the event's text; the
// rare Begin and Error messages go through encoding/json. Tests replay sessions from testdata on a fake
// server.
package assemblyai
