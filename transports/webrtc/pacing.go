package webrtc

import (
	"strings"
	"time"

	pion "github.com/pion/webrtc/v4"
)

// DefaultMaxAhead is how far ahead of real time a client's audio may
// arrive by default (see InputOptions.MaxAhead): enough for the burst that
// follows a network stall of a few hundred milliseconds, far less than a
// client sending faster than it plays can pile up in the pipeline.
const DefaultMaxAhead = 500 * time.Millisecond

// pacer bounds one track's audio to real time: a token bucket in media
// time. Each packet takes its duration from the bucket, which refills at
// one second per second up to the burst; a packet that finds too little is
// dropped. A client sending at real time never empties it (jitter moves
// the level by the jitter), one sending at 240 times real time gets real
// time plus the burst through, and the rest costs no decoding.
//
// The zero pacer admits everything (the offline tests and benchmarks feed
// packets faster than real time on purpose). A pacer is owned by its
// track's goroutine.
type pacer struct {
	burst time.Duration
	now   func() time.Time // nil: time.Now

	credit  time.Duration // media time that may still arrive ahead of real time
	last    time.Time     // of the last refill
	dropped uint64
}

func newPacer(burst time.Duration) pacer { return pacer{burst: burst} }

// admit takes a packet of d of audio that arrived now, or refuses it.
func (p *pacer) admit(d time.Duration) bool {
	if p.burst <= 0 {
		return true
	}
	var now time.Time
	if p.now != nil {
		now = p.now()
	} else {
		now = time.Now()
	}
	if p.last.IsZero() {
		p.credit = p.burst
	} else if dt := now.Sub(p.last); dt > 0 {
		p.credit = min(p.burst, p.credit+dt)
	}
	p.last = now
	if d > p.credit {
		p.dropped++
		return false
	}
	p.credit -= d
	return true
}

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
