// Package wsfake is a scripted WebSocket server for testing the clients of
// cloud speech services (processors/stt/deepgram, processors/tts/cartesia,
// ...) without the network: it replays a recorded session, line by line,
// against the real client under test.
//
// A Script is a text file of steps: "< what" waits for the client to send
// something (the test decides what "what" means), "> message" sends a text
// message, "close CODE [reason]" closes the connection. A Server plays one
// script per connection, counts the handshakes, can refuse them, and fails
// the test when a connection ends before its script's expectations were met.
//
// It is built on github.com/coder/websocket and net/http/httptest and is
// imported only by tests; it sits under internal/ beside the packages it
// serves and imports nothing of framewire.
package wsfake
