// Package errorid makes the short ids that tie an error a client was told
// about ("... (error id 3f2a9c01b4de)") to the server's log line that holds
// the error itself. The RTVI processor and the WebRTC signalling use it, so
// an operator finds either kind of id the same way.
package errorid

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a fresh random id of 12 hex digits.
func New() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
