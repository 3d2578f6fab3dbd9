// Package twilio is framewire's side of Twilio Media Streams: the
// bidirectional stream a <Connect><Stream> TwiML instruction opens from a
// call to a WebSocket server.
//
// Twilio sends JSON text messages: connected, then start (the stream and
// call SIDs, the tracks, the custom parameters of the <Stream> and the
// media format, always μ-law at 8000 Hz mono), then media (base64 μ-law
// without headers, 20 ms a message), dtmf, mark (the echo of a mark the
// server sent, once the audio before it has played or been cleared) and
// stop. The server sends media, mark and clear back, each naming the
// stream's SID.
//
// [Decoder.Decode] reads one incoming message into an [Event], the media
// payload decoded into the caller's buffer, within [Limits]; [AppendMedia],
// [AppendMark] and [AppendClear] append an outgoing message to the caller's
// buffer without allocating. The transport built on them owns the socket,
// the order of events (audio before start, a stream SID that changes) and
// the pacing; docs/decisions/telephony-wire.md lists the messages and their
// sources.
package twilio
