package inspector

// The type of a client message, for the inspector's list of what the
// client sent. Messages for the client carry their type in their frame
// (frames.OutputTransportMessageUrgent.Type, set by the RTVI observer);
// a client's message arrives as raw bytes that only the RTVI processor
// decodes, after the inspector has seen them, so the inspector reads the
// top-level "type" of the JSON for display, and nothing else.

import (
	"bytes"
	"encoding/json"
)

// maxScan bounds how much of a message messageType reads: a type key
// after that many bytes is not found.
const maxScan = 64 << 10

// messageType returns the value of the top-level "type" key of the JSON object
// b, or "" when b is not an object, has no string "type" or is longer than
// maxScan before it. It never fails on bad input.
func messageType(b []byte) string {
	if len(b) > maxScan {
		b = b[:maxScan]
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
