// Package exotel is framewire's side of Exotel's Voicebot applet: the
// bidirectional WebSocket stream an Exotel call flow (or the Connect API
// with streamtype bidirectional) opens to a bot.
//
// Exotel sends JSON text messages: connected, then start (the stream, call
// and account sids, from and to, the URL's custom parameters and the media
// format: by default 16-bit little-endian PCM at 8, 16 or 24 kHz), then
// media (base64 audio, about 100 ms a message), dtmf, mark (the echo of a
// mark the server sent) and stop. The server sends media, mark and clear
// back, each naming the stream's sid; Exotel asks for outgoing chunks of
// 3.2 KB to 100 KB in multiples of 320 bytes.
//
// [Decoder.Decode] reads one incoming message into an [Event], the media
// payload decoded into the caller's buffer, within [Limits]; [AppendMedia],
// [AppendMark] and [AppendClear] append an outgoing message to the caller's
// buffer without allocating. The transport built on them owns the socket,
// the order of events, the batching of its frames into Exotel's chunk
// sizes and the pacing; docs/decisions/telephony-wire.md lists the
// messages and their sources.
package exotel
