// Package wsmux runs one websocket connection that several concurrent
// speech requests share, each under its own context id: the connection's
// reader goroutine, the per-request inboxes it hands messages to, and the
// connection's lifetime (close, abort, the error it ended with).
//
// It sits under the websocket speech clients of processors/tts
// (processors/tts/cartesia, processors/tts/elevenlabs), which keep their
// own wire shapes: each says how to read a message's context id with a
// [Route], and writes its own requests and control messages. It imports
// github.com/coder/websocket and zap only.
package wsmux
