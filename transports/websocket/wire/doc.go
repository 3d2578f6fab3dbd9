// Package wire is the serializer of framewire's WebSocket transport: the
// protobuf frames that Pipecat's WebSocket client
// (@pipecat-ai/websocket-transport with @pipecat-ai/client-js) and Pipecat's
// Python server exchange, one frame per binary WebSocket message.
//
// A frame carries one payload: audio (16-bit PCM with its rate and channel
// count), an RTVI message (its JSON text), text, a transcription or, from
// Pipecat's server only, an interruption notice. The browser client sends
// audio and RTVI messages and reads only audio and RTVI messages back;
// docs/decisions/websocket-wire.md lists what the client does with each
// and where each fact comes from.
//
// The transport's hot path is here: [AppendAudio] and [AppendMessage]
// encode the server's frames by appending to a caller's buffer, and
// [Decoder.Decode] reads a client's frame into a [Frame] whose byte fields
// are subslices of the message, both without allocating. The decoder
// bounds what it accepts (message and audio size, sample rate, channels)
// and says in its error what was wrong; it never panics on any input.
//
// The schema is frames.proto beside this file. The transport encodes and
// decodes with protowire by hand; the protoc-gen-go types in
// internal/framespb exist only so the tests can check the hand-written
// code against protobuf's own Marshal and Unmarshal. Regenerate them with
// go generate (the directive below the package clause), with protoc and
// protoc-gen-go v1.36.12, the google.golang.org/protobuf of go.mod, on
// PATH.
//
// The telephony transports do not use this package: Twilio, Telnyx,
// Plivo and the others speak JSON media streams of their own.
package wire

//go:generate protoc --go_out=internal/framespb --go_opt=paths=source_relative frames.proto
