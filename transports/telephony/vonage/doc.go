// Package vonage is framewire's side of the Vonage Voice API's WebSocket
// endpoint: the socket an NCCO connect action with a websocket endpoint
// opens from a call, bidirectional.
//
// Unlike the other providers, Vonage carries audio as binary WebSocket
// messages: 16-bit linear PCM, little-endian, mono, at the endpoint's
// content-type rate (audio/l16;rate=8000 or 16000), 20 ms a message both
// ways (320 or 640 bytes). Text messages are JSON: from Vonage,
// websocket:connected first (the content-type and the endpoint's headers),
// then websocket:dtmf, websocket:notify (a notify command's payload, back
// once the audio before it has played) and websocket:cleared; to Vonage,
// the clear and notify commands.
//
// [Decoder.DecodeAudio] decodes a binary message into the caller's
// samples; [Decoder.DecodeText] reads a text message into an [Event],
// within [Limits]; [AppendAudio], [AppendNotify] and [AppendClear] append
// an outgoing message to the caller's buffer without allocating. The
// transport built on them owns the socket, the 20 ms framing
// ([FrameBytes]), Vonage's playback buffer ([MaxQueuedFrames]) and the
// pacing; docs/decisions/telephony-wire.md lists the messages and their
// sources.
package vonage
