// Package rtvi speaks RTVI, the JSON protocol between framewire and the
// Pipecat browser clients (@pipecat-ai/client-js), including the UI Agent
// Protocol, as Python Pipecat speaks it (docs/protocol.md describes the wire).
//
// The messages and their JSON codec are in package
// [github.com/framewire/framewire/processors/rtvi/wire]; this package
// is the protocol on top of them, in three parts:
//
//   - RTVI frames: [UICommandFrame] and [UITaskFrame] that the UI agent
//     pushes to drive the page, and the inbound [UIEventFrame],
//     [UISnapshotFrame], [UICancelTaskFrame], [ClientMessageFrame] and
//     friends that the processor pushes.
//   - [Processor], at the head of the pipeline: it takes the client's
//     messages from frames.InputTransportMessage, runs the client-ready /
//     bot-ready handshake and version check, and turns requests into
//     frames.
//   - [Observer], which watches the pipeline and turns frames (speech
//     events, transcripts, LLM and TTS text, bot-output, function calls,
//     metrics, UI commands and task envelopes) into messages.
//
// Everything the server says leaves as frames.OutputTransportMessageUrgent
// pushed downstream from the processor, for the output transport to send.
// The frame names the message's type and, for the messages a newer one
// makes worthless (audio levels, a worker's progress update), a supersede
// key, so that no transport parses RTVI (docs/decisions/frame-metadata.md).
// The vocabulary of the UI task lifecycle is chosen per client: ui-task for
// RTVI 1.3.x clients, ui-job-group for everything else (see
// docs/decisions/rtvi-vocabulary.md).
package rtvi
