package webrtc

import (
	"strings"
	"time"

	pion "github.com/pion/webrtc/v4"
)

// payloadDuration returns how much audio an RTP payload of the codec with
// MIME type mime holds, read from the payload without decoding it; ok is
// false when it cannot tell (the decoder will refuse such a payload).
func payloadDuration(mime string, payload []byte) (d time.Duration, ok bool) {
	switch {
	case strings.EqualFold(mime, pion.MimeTypePCMU), strings.EqualFold(mime, pion.MimeTypePCMA):
		return time.Duration(len(payload)) * time.Second / 8000, len(payload) > 0
	case strings.EqualFold(mime, pion.MimeTypeOpus):
		return opusDuration(payload)
	}
	return 0, false
}

// opusDuration reads an Opus packet's duration from its TOC byte (RFC 6716
// §3.1: the configuration gives the frame size, the code the frame count,
// which code 3 carries in the next byte). Packets over 120 ms are invalid.
func opusDuration(p []byte) (time.Duration, bool) {
	if len(p) == 0 {
		return 0, false
	}
	toc := p[0]
	config := int(toc >> 3)
	var frame time.Duration
	switch {
	case config < 12: // SILK: 10, 20, 40, 60 ms
		frame = [...]time.Duration{10, 20, 40, 60}[config&3] * time.Millisecond
	case config < 16: // hybrid: 10, 20 ms
		frame = [...]time.Duration{10, 20}[config&1] * time.Millisecond
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = [...]time.Duration{2500, 5000, 10000, 20000}[config&3] * time.Microsecond
	}
	n := 1
	switch toc & 3 {
	case 1, 2:
		n = 2
	case 3:
		if len(p) < 2 {
			return 0, false
		}
		n = int(p[1] & 0x3f)
	}
	d := time.Duration(n) * frame
	if n == 0 || d > 120*time.Millisecond {
		return 0, false
	}
	return d, true
}
