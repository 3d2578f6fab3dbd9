// Package jsonwiretest holds the checks the JSON telephony wires share in
// their tests: the media messages at the edges of a fast path built on
// jsonwire's Scanner, and the check that such a fast path reads what it
// takes exactly as encoding/json does. Each provider's wire_test.go and
// fuzz_test.go call it with their own key names, decoders and golden
// files; the provider's own tests stay the specification of its wire.
package jsonwiretest
