package transports

import "time"

// DefaultMaxAhead is how far ahead of real time a client's audio may
// arrive by default: enough for the burst that follows a network stall of
// a few hundred milliseconds, far less than a client sending faster than
// it plays could pile up in the pipeline.
const DefaultMaxAhead = 500 * time.Millisecond

// A Pacer holds one stream of a client's audio to real time: a token
// bucket in media time. Each packet takes its duration from the bucket,
// which refills at one second per second up to MaxAhead; a packet that
// finds too little is refused. A client sending at real time never
// empties it (jitter moves the level by the jitter); one sending at 240
// times real time gets real time plus MaxAhead through, and a transport
// that paces before decoding spends nothing on the rest.
//
// The zero Pacer admits everything (offline tests feed audio faster than
// real time on purpose). A Pacer is owned by one goroutine, the stream's
// reader.
type Pacer struct {
	// MaxAhead is how far ahead of real time the stream may run; zero or
	// negative: no bound.
	MaxAhead time.Duration
	// Now is the clock; nil: time.Now.
	Now func() time.Time

	credit  time.Duration // media time that may still arrive ahead of real time
	last    time.Time     // of the last refill
	dropped uint64
}

// Admit takes a packet of d of audio that arrives now, or refuses it.
func (p *Pacer) Admit(d time.Duration) bool {
	if p.MaxAhead <= 0 {
		return true
	}
	var now time.Time
	if p.Now != nil {
		now = p.Now()
	} else {
		now = time.Now()
	}
	if p.last.IsZero() {
		p.credit = p.MaxAhead
	} else if dt := now.Sub(p.last); dt > 0 {
		p.credit = min(p.MaxAhead, p.credit+dt)
	}
	p.last = now
	if d > p.credit {
		p.dropped++
		return false
	}
	p.credit -= d
	return true
}

// Dropped returns how many packets Admit refused.
func (p *Pacer) Dropped() uint64 { return p.dropped }
