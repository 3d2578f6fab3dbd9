// Package framespb holds the protobuf types protoc-gen-go generates from
// ../../frames.proto, Pipecat's WebSocket frames. Only the wire package's
// tests use them, to check its hand-written encoder and decoder against
// protobuf's own Marshal and Unmarshal; nothing on the transport's path
// imports this package, so no binary but the tests registers the schema.
package framespb
