package webrtc

import "time"

// outbound is a session's queue of messages for the client that the data
// channel cannot take yet: before it opens, and while its send buffer holds
// more than Options.MaxBufferedBytes (the client reads slower than the
// server writes). It keeps the order of Send. A message that a newer one
// supersedes (the same non-zero key, which its frame carries:
// frames.OutputTransportMessageUrgent.Supersede) is coalesced: when the
// newer one is queued, the older one is removed from the queue and the
// newer one takes its place at the tail, so what the client gets is always
// in the order it was sent, with only superseded messages left out. The
// session's mu guards it.
type outbound struct {
	// q[head:] are the queued messages; nil entries were coalesced.
	q    [][]byte
	keys []uint64 // keys[i] is q[i]'s supersede key, 0 for none
	head int
	// base is the sequence number of q[0].
	base uint64
	// latest maps a supersede key to the sequence number of its queued
	// message.
	latest map[uint64]uint64
	n      int // messages queued (not coalesced)
	bytes  int // their bytes
	high   int // the most messages n has been
	// since is when the queue last made progress or became non-empty.
	since time.Time
	// progress, when not nil, is closed when messages leave the queue:
	// senders waiting for room wait on it.
	progress chan struct{}
}

func (o *outbound) empty() bool { return o.n == 0 }

// push appends msg with supersede key (0: none).
func (o *outbound) push(msg []byte, key uint64, now time.Time) {
	if o.n == 0 {
		o.since = now
	}
	if key != 0 {
		if o.latest == nil {
			o.latest = make(map[uint64]uint64)
		}
		o.latest[key] = o.base + uint64(len(o.q))
	}
	o.q = append(o.q, msg)
	o.keys = append(o.keys, key)
	o.n++
	o.bytes += len(msg)
	o.high = max(o.high, o.n)
}

// supersede removes the queued message with key, if any, and reports
// whether there was one. The caller then pushes the newer message.
func (o *outbound) supersede(key uint64) bool {
	seq, ok := o.latest[key]
	if !ok {
		return false
	}
	i := int(seq - o.base)
	o.bytes -= len(o.q[i])
	o.n--
	o.q[i], o.keys[i] = nil, 0
	delete(o.latest, key)
	return true
}

// peek returns the oldest queued message, skipping coalesced ones.
func (o *outbound) peek() ([]byte, bool) {
	for o.head < len(o.q) && o.q[o.head] == nil {
		o.head++
	}
	if o.head == len(o.q) {
		return nil, false
	}
	return o.q[o.head], true
}

// pop removes the message peek returned.
func (o *outbound) pop(now time.Time) {
	msg, key := o.q[o.head], o.keys[o.head]
	if key != 0 && o.latest[key] == o.base+uint64(o.head) {
		delete(o.latest, key)
	}
	o.q[o.head], o.keys[o.head] = nil, 0
	o.head++
	o.n--
	o.bytes -= len(msg)
	o.since = now
	if o.head == len(o.q) || o.head >= 1024 && o.head > len(o.q)/2 {
		o.compact()
	}
}

// compact moves the queued messages to the front, reusing the arrays.
func (o *outbound) compact() {
	k := copy(o.q, o.q[o.head:])
	copy(o.keys, o.keys[o.head:])
	clear(o.q[k:])
	o.q, o.keys = o.q[:k], o.keys[:k]
	o.base += uint64(o.head)
	o.head = 0
}

// woke tells the senders waiting for room that some was made.
func (o *outbound) woke() {
	if o.progress != nil {
		close(o.progress)
		o.progress = nil
	}
}

// wait returns a channel closed when messages next leave the queue.
func (o *outbound) wait() <-chan struct{} {
	if o.progress == nil {
		o.progress = make(chan struct{})
	}
	return o.progress
}

// reset forgets every queued message and returns how many there were.
func (o *outbound) reset() int {
	n := o.n
	clear(o.q)
	o.q, o.keys, o.head, o.n, o.bytes = o.q[:0], o.keys[:0], 0, 0, 0
	clear(o.latest)
	o.woke()
	return n
}

// queued returns a copy of the queued messages, oldest first.
func (o *outbound) queued() [][]byte {
	var out [][]byte
	for _, m := range o.q[o.head:] {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}
