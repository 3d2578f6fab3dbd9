package webrtc

import (
	"bytes"
	"encoding/json"
)

// messageKind classifies one data-channel message from the client.
type messageKind uint8

const (
	// kindInvalid is not JSON: logged and dropped, never answered.
	kindInvalid messageKind = iota
	// kindPing is the "ping: <ms>" keepalive (plain text, not JSON).
	kindPing
	// kindSignalling is a transport message {"type":"signalling",...}.
	kindSignalling
	// kindApp is any other JSON (RTVI), for the pipeline.
	kindApp
)

// signalling is a transport-level message, in both directions (§2.3, §2.4).
type signalling struct {
	Type    string `json:"type"`
	Message struct {
		Type          string `json:"type"`
		ReceiverIndex *int   `json:"receiver_index"`
		Enabled       *bool  `json:"enabled"`
	} `json:"message"`
}

// Server-to-client signalling messages.
var (
	peerLeftMessage    = []byte(`{"type":"signalling","message":{"type":"peerLeft"}}`)
	renegotiateMessage = []byte(`{"type":"signalling","message":{"type":"renegotiate"}}`)
)

// jsonSpace is the whitespace JSON allows around a value (RFC 8259 §2).
const jsonSpace = " \t\n\r"

var (
	pingPrefix       = []byte("ping")
	signallingMarker = []byte(`"signalling"`)
)

// isPing reports whether msg is the keepalive; Python treats any text
// starting with "ping" as one.
func isPing(msg []byte) bool { return bytes.HasPrefix(msg, pingPrefix) }

// classify sorts a client message. For signalling messages it also returns
// the decoded message. It never fails: anything unexpected is kindInvalid.
func classify(msg []byte) (messageKind, *signalling) {
	if isPing(msg) {
		return kindPing, nil
	}
	// JSON's own whitespace only: bytes.TrimSpace would also take a form
	// feed or a non-breaking space, which JSON does not allow, and the
	// message would pass as JSON here and reach the pipeline invalid.
	t := bytes.Trim(msg, jsonSpace)
	if len(t) == 0 || !json.Valid(t) {
		return kindInvalid, nil
	}
	// Only objects can be signalling; RTVI objects rarely contain the word,
	// so most messages skip the second decode.
	if t[0] == '{' && bytes.Contains(t, signallingMarker) {
		var s signalling
		if json.Unmarshal(t, &s) == nil && s.Type == "signalling" {
			return kindSignalling, &s
		}
	}
	return kindApp, nil
}
