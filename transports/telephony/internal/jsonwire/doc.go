// Package jsonwire holds what the JSON media-stream wires of
// transports/telephony share: Twilio's, Telnyx's, Plivo's and Exotel's
// decoders read 50 media messages a second per call, and Vonage's writes
// JSON commands, with the same few parts.
//
// [Scanner] is a strict JSON scanner for a provider's media fast path: it
// reads a media message without encoding/json and without allocating, and
// gives up at anything it does not read exactly as encoding/json would, so
// that the provider's decoder falls back to encoding/json. [Number] reads
// the integers the providers write as strings ("3") or as numbers;
// [Payload] and [DecodeBase64] decode a base64 media payload into the
// caller's buffer within a limit; [Intern], [ValidDigit] and
// [AppendString] are the small helpers around them.
//
// The package knows no provider's message shapes: each provider's wire.go
// walks its own fields with a [Scanner] and owns its Event, its Limits and
// its tests against its documentation. Errors wrap [ErrTooLarge],
// [ErrBadMessage] or [ErrBadPayload], which the provider packages export
// under the same names.
package jsonwire
