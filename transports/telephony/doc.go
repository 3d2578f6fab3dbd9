// Package telephony is the home of framewire's phone transports: one
// package per provider, each speaking that provider's bidirectional media
// stream over a WebSocket the provider dials when a call is answered.
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
// Each package's wire.go is that provider's message set as its
// documentation defines it: a decoder that turns one incoming message into
// a small typed event within explicit bounds, and functions that append
// the outgoing media, mark (checkpoint, notify) and clear messages to a
// caller's buffer without allocating. The transports are built on them and
// on the transport base (package transports): the base paces and frames the
// audio and plays the bot's answer on its media clock; the provider package
// carries it over the wire, sends the provider's clear on an interruption
// and reads the provider's mark echoes to know how far the caller heard it.
//
// Audio conversion (μ-law, A-law, big- and little-endian L16) is in dsp;
// resampling to and from the pipeline's rates is the base's resampler.
// docs/decisions/telephony-wire.md records each provider's messages, their
// sources, and what a transport must do with them.
package telephony
