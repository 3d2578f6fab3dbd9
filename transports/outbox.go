package transports

import "time"

// An Outbox is a session's queue of messages for a client whose
// connection cannot take them yet: before it opens, and while the
// connection's send buffer is full (the client reads slower than the
// server writes). It keeps the order of Push. A message that a newer one
// supersedes (the same non-zero key, which its frame carries:
// frames.OutputTransportMessageUrgent.Supersede) is coalesced: when the
// newer one is queued, the older one is removed and the newer one takes
// its place at the tail, so what the client gets is always in the order it
// was sent, with only superseded messages left out.
//
// The zero Outbox is empty and ready. It is not safe for concurrent use:
// the session's lock guards it, and the lock is what keeps sends in order.
type Outbox struct {
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
	// senders waiting for room wait on it (Wait, Notify).
	progress chan struct{}
}

// Empty reports whether no message is queued.
func (o *Outbox) Empty() bool { return o.n == 0 }

// Len returns the number of queued messages (coalesced ones not counted).
func (o *Outbox) Len() int { return o.n }

// Bytes returns the bytes of the queued messages.
func (o *Outbox) Bytes() int { return o.bytes }

// HighWater returns the most messages that have been queued at once.
func (o *Outbox) HighWater() int { return o.high }

// Since returns when the queue last made progress or became non-empty: a
// client that has taken nothing since long ago has stopped reading.
func (o *Outbox) Since() time.Time { return o.since }

// Push appends msg with supersede key (0: none).
func (o *Outbox) Push(msg []byte, key uint64, now time.Time) {
	if msg == nil {
		msg = []byte{} // nil marks a coalesced entry
	}
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

// Supersede removes the queued message with key, if any, and reports
// whether there was one. The caller then pushes the newer message.
func (o *Outbox) Supersede(key uint64) bool {
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

// Peek returns the oldest queued message, skipping coalesced ones.
func (o *Outbox) Peek() ([]byte, bool) {
	for o.head < len(o.q) && o.q[o.head] == nil {
		o.head++
	}
	if o.head == len(o.q) {
		return nil, false
	}
	return o.q[o.head], true
}

// Pop removes the message Peek returned.
func (o *Outbox) Pop(now time.Time) {
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
func (o *Outbox) compact() {
	k := copy(o.q, o.q[o.head:])
	copy(o.keys, o.keys[o.head:])
	clear(o.q[k:])
	o.q, o.keys = o.q[:k], o.keys[:k]
	o.base += uint64(o.head)
	o.head = 0
}

// Notify tells the senders waiting for room (Wait) that some was made.
func (o *Outbox) Notify() {
	if o.progress != nil {
		close(o.progress)
		o.progress = nil
	}
}

// Wait returns a channel closed when messages next leave the queue.
func (o *Outbox) Wait() <-chan struct{} {
	if o.progress == nil {
		o.progress = make(chan struct{})
	}
	return o.progress
}

// Reset forgets every queued message, wakes the senders waiting and
// returns how many messages there were.
func (o *Outbox) Reset() int {
	n := o.n
	clear(o.q)
	o.q, o.keys, o.head, o.n, o.bytes = o.q[:0], o.keys[:0], 0, 0, 0
	clear(o.latest)
	o.Notify()
	return n
}

// Queued returns a copy of the queued messages, oldest first.
func (o *Outbox) Queued() [][]byte {
	var out [][]byte
	for _, m := range o.q[o.head:] {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}
