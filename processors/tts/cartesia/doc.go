// Package cartesia is a tts.Synthesizer for Cartesia's websocket API
// (wss://api.cartesia.ai/tts/websocket). It keeps one connection open and
// multiplexes the service's requests over it by context_id, asks for raw
// 16-bit PCM at the pipeline's output rate and for word timestamps, so
// the service can release each word's text with its audio. An
// interruption sends Cartesia a cancel for the context; a dropped
// connection is opened again, and a request that had not produced audio
// yet is retried on it. The handshake, a request's first message and the
// silence between its messages are bounded ([Options].Timeouts: 10s, 10s,
// 20s by default); a connection on which nothing comes is closed.
//
// Tests replay recorded message sequences from testdata on a fake server
// built with github.com/coder/websocket.
package cartesia
