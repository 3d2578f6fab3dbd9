// Package webrtc is framewire's SmallWebRTC-compatible transport: a pion
// WebRTC server that the real @pipecat-ai/small-webrtc-transport browser
// client connects to as if it were Python Pipecat.
//
// [Server] is an http.Handler for the signalling routes (POST and PATCH
// /api/offer, POST /start, /sessions/{id}/api/offer). Every connecting client
// gets a [Session]: one pion PeerConnection (replaced on restart, kept on
// renegotiation), the client's "chat" data channel with its pings and
// signalling messages, and a pipeline built by the application's
// [PipelineFactory] around the session's [Input] and [Output] processors:
//
//	func(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
//		p := pipeline.New(s.Input(), rtviProcessor, bot, s.Output())
//		return pipeline.NewTask(p, pipeline.TaskOptions{}), nil
//	}
//
// The server runs the task and tears the session down when the client leaves
// or the pipeline ends. [Input] turns the client's audio into 16 kHz mono
// frames.InputAudioRaw and its data-channel JSON into
// frames.InputTransportMessage; [Output] plays audio frames as paced 20 ms
// Opus packets (PCMU in builds without the "opus" tag), releases other frames
// in step with the audio ahead of them and sends transport messages as text.
// Each output keeps its 20 ms clock on its own goroutine; when the Go
// scheduler leaves that goroutine waiting, the transport's other goroutines
// send its frames for it (docs/decisions/webrtc-audio.md).
// The wire rules are in docs/protocol.md (§1 signalling, §2 the data channel).
//
// [ListenAndServe] and [Serve] run a server in production: HTTP timeouts
// and limits set by default, and when their context ends (main turns
// SIGINT and SIGTERM into that) new sessions refused with a 503 the client
// retries, the running ones ended gracefully and cancelled after a grace
// period. docs/decisions/webrtc-lifetimes.md says
// which goroutine each part owns and the shutdown sequence.
package webrtc
