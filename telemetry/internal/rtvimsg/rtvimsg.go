// Package rtvimsg reads the little telemetry needs from raw RTVI messages
// (the JSON the transport carries in transport-message frames) without
// importing the RTVI package: the message type, and the label of RTVI
// envelopes.
package rtvimsg

import (
	"bytes"
	"encoding/json"
)

// MaxScan bounds how much of a message Type reads: a type key after that
// many bytes is not found.
const MaxScan = 64 << 10

// Type returns the value of the top-level "type" key of the JSON object
// b, or "" when b is not an object, has no string "type" or is longer than
// MaxScan before it. It never fails on bad input.
func Type(b []byte) string {
	if len(b) > MaxScan {
		b = b[:MaxScan]
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := k.(string)
		if key == "type" {
			v, err := dec.Token()
			if err != nil {
				return ""
			}
			s, _ := v.(string)
			return s
		}
		if !skipValue(dec) {
			return ""
		}
	}
	return ""
}

// skipValue reads one value, however nested, token by token.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth <= 0 {
			return true
		}
	}
}
