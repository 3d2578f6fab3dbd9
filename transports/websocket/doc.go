// Package websocket is the server side of Pipecat's WebSocket transport:
// the browser client @pipecat-ai/websocket-transport (with client-js), and
// any client that speaks its protobuf frames (package wire) over one
// WebSocket.
//
// A [Server] is an http.Handler with two routes: POST /connect, which the
// client's startBotAndConnect calls and which answers {"wsUrl": ...}, and
// GET /ws, the socket. Each socket is a [Session] with a pipeline of its
// own, built by Options.NewPipeline around the session's [Input] and
// Output, as over WebRTC: RTVI, the UI Agent Protocol and every processor
// work the same, since a pipeline does not know its transport.
//
// The session is built on the transport base (package transports): the
// client's audio is paced and framed by transports.Pacer and
// transports.AudioFramer, its messages limited by
// transports.MessageLimiter, and the bot's audio played by
// transports.Output on its 20 ms clock, one binary message per frame at
// the client player's rate. The client queues whatever it is sent and
// never reports what it played, so real-time sending is what keeps an
// interruption short: what the output stops sending is what the user does
// not hear.
//
// Everything a client can send is bounded: the message size, the rate of
// messages and of audio, the time to connect; a client that stops reading
// or answering pings has its session ended, and the close code tells it
// why. The server's goroutines are owned and waited for by Close and
// Shutdown.
package websocket
