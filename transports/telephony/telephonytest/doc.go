// Package telephonytest plays the telephony provider's side of a call, so
// a bot built on package telephony can be called on one machine, without
// a phone number: cmd/callsim runs it from the command line, and tests
// (examples/phone-bot's) call a bot with it end to end.
//
// Call does what Twilio does for an incoming call (Twilio is the one
// provider wired to the telephony transport so far): it posts the
// incoming-call webhook (signed with twilio.Sign when given the auth
// token), reads the TwiML's <Connect><Stream>, dials the stream, sends
// connected and start (the start's customParameters are the TwiML's
// <Parameter>s), then, on one jitter-free 20 ms clock, sends the caller's
// audio (μ-law, 8 kHz) and plays the bot's. The caller's ear is a
// [Playout]: the bot's media queue up and play one 20 ms frame per tick, a
// mark is echoed once the audio queued before it has played, and a clear
// drops what was queued and echoes its marks, as Twilio's Media Streams
// documentation describes. What the caller heard is kept, one sample per
// sample of the call, so the voice-to-voice latency can be measured on
// it.
//
// The package is for tests and tools: it trusts nothing the bot sends (a
// message it does not expect is a protocol error in the [Result]), bounds
// every message, queue and wait, and needs only loopback.
package telephonytest
