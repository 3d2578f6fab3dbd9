// Package plivo is framewire's side of Plivo audio streams: the WebSocket
// a bidirectional <Stream> element of Plivo XML opens from a call.
//
// Plivo sends JSON text messages: start (the call and stream UUIDs, the
// account, the tracks and the media format: audio/x-l16 at 8 or 16 kHz or
// audio/x-mulaw at 8 kHz), media (base64 audio of that format), dtmf,
// playedStream (a checkpoint the server sent has been played) and
// clearedAudio (the queued audio is gone); each may carry the <Stream>'s
// extraHeaders. The server sends playAudio (base64 audio with its content
// type and rate), checkpoint (a name to hear back once the audio before it
// has played) and clearAudio.
//
// [Decoder.Decode] reads one incoming message into an [Event], the media
// payload decoded into the caller's buffer, within [Limits];
// [AppendPlayAudio], [AppendCheckpoint] and [AppendClearAudio] append an
// outgoing message to the caller's buffer without allocating. The
// transport built on them owns the socket, the order of events and the
// pacing; docs/decisions/telephony-wire.md lists the messages and their
// sources.
package plivo
