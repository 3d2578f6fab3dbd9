// Package websockettest is an in-process stand-in for the browser's
// @pipecat-ai/websocket-transport, for tests and load benchmarks of a
// server of package websocket (or of anything that speaks its wire). A
// [Client] calls /connect for the socket's URL, or dials a socket URL
// directly, streams 16-bit mono PCM up in real time as the browser's
// recorder does (512-byte frames every 16 ms at 16 kHz), and reads the
// server's frames back: it counts the audio frames and samples and keeps
// the messages.
//
// The load benchmark (cmd/loadbench -transport websocket) drives a server
// with hundreds of them, so the client keeps its per-frame work small: one
// reused buffer each way, no decoding of the audio beyond the frame.
package websockettest
