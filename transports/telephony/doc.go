// Package telephony is framewire's phone transport: a call's media stream,
// the WebSocket a telephony provider dials when a call is answered, carried
// into a pipeline on the transport base (package transports).
//
// This package holds what every provider shares: the [Server] that takes
// one provider's streams (the one-time token of the stream URL, the
// session limit), the call's [Session] with its input and the base's paced
// output, and the [Provider] and [Stream] interfaces a provider implements.
// Each provider is a package of its own below it:
//
//   - telephony/twilio: Twilio Media Streams (<Connect><Stream>), base64
//     μ-law at 8 kHz in JSON messages;
//   - telephony/telnyx: Telnyx media streaming, base64 RTP payloads (PCMU,
//     PCMA, L16 and others) in JSON messages;
//   - telephony/plivo: Plivo audio streams (<Stream bidirectional>), base64
//     μ-law or L16 in JSON, with checkpoints;
//   - telephony/exotel: Exotel's Voicebot applet, base64 16-bit PCM (or
//     μ-law) in JSON;
//   - telephony/vonage: the Vonage Voice API's WebSocket endpoint, binary
//     16-bit linear PCM frames beside JSON text events.
//
// A provider package's wire.go is that provider's message set as its
// documentation defines it: a decoder that turns one incoming message into
// a small typed event within explicit bounds (media messages without
// allocating), and functions that append the outgoing media, mark
// (checkpoint, notify) and clear messages to a caller's buffer without
// allocating. On them the provider's Stream sends the provider's clear on
// an interruption and reads its mark echoes, so the base knows how far the
// caller heard the bot's answer.
//
// Audio conversion (μ-law, A-law, big- and little-endian L16) is in dsp;
// resampling to and from the pipeline's rates is the base's resampler.
// docs/decisions/telephony-wire.md records each provider's messages, their
// sources, and what a transport must do with them.
package telephony
