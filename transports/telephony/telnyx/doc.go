// Package telnyx is framewire's side of Telnyx media streaming: the
// WebSocket Telnyx opens to a stream_url given to a Call Control command
// (dial, answer, streaming_start) or to TeXML's <Stream>, bidirectional
// when stream_bidirectional_mode is rtp.
//
// Telnyx sends JSON text messages: connected, then start (the stream id,
// the call's control and session ids, from and to, tags, client state,
// custom parameters and the media format: PCMU, PCMA, G722, OPUS, AMR-WB
// or L16, its rate and channels), then media (one base64 RTP payload
// without its header), dtmf, mark (the echo of a mark the server sent),
// error and stop. The server sends media (RTP payloads of 20 ms to 30 s in
// the stream's codec), mark and clear back.
//
// [Decoder.Decode] reads one incoming message into an [Event], the media
// payload decoded into the caller's buffer, within [Limits]; [AppendMedia],
// [AppendMark] and [AppendClear] append an outgoing message to the
// caller's buffer without allocating. The transport built on them owns the
// socket, the order of events and the pacing;
// docs/decisions/telephony-wire.md lists the messages and their sources.
package telnyx
