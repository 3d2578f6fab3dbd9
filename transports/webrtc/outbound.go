package webrtc

import (
	"bytes"
	"time"
)

// outbound is a session's queue of messages for the client that the data
// channel cannot take yet: before it opens, and while its send buffer holds
// more than Options.MaxBufferedBytes (the client reads slower than the
// server writes). It keeps the order of Send. A message that a newer one
// supersedes (see supersedeKey) is coalesced: when the newer one is queued,
// the older one is removed from the queue and the newer one takes its
// place at the tail, so what the client gets is always in the order it was
// sent, with only superseded messages left out. The session's mu guards it.
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

// RTVI types and fields supersedeKey looks for, as they appear in the
// encoded message (processors/rtvi/wire writes "type" right after
// "label", and a ui-job-group's data starts with its kind, id and worker).
var (
	typeField       = []byte(`"type":"`)
	kindField       = []byte(`"kind":"`)
	jobGroupType    = []byte(`ui-job-group`)
	taskType        = []byte(`ui-task`)
	userLevelType   = []byte(`user-audio-level`)
	botLevelType    = []byte(`bot-audio-level`)
	jobUpdateKind   = []byte(`job_update`)
	taskUpdateKind  = []byte(`task_update`)
	jobIDField      = []byte(`"job_id":"`)
	taskIDField     = []byte(`"task_id":"`)
	workerField     = []byte(`"worker_name":"`)
	agentField      = []byte(`"agent_name":"`)
	typeKeyMaxBytes = 64
)

// supersedeKey returns a non-zero key when a newer message with the same
// key makes msg worthless to the client: the user's and the bot's audio
// level (keyed by type), and a task group's progress update (job_update,
// or task_update for RTVI 1.3 clients, keyed by type, job and worker).
// Everything else returns 0 and is never coalesced: answers, transcripts,
// the group lifecycle (group_started, job_completed, group_completed),
// commands, errors, metrics (each carries one processor's figures) and
// bot-output (its in-progress messages carry words the client adds up).
// It reads only the first fields of msg, without allocating.
func supersedeKey(msg []byte) uint64 {
	typ, rest := stringAfter(msg, typeField, typeKeyMaxBytes)
	switch {
	case bytes.Equal(typ, userLevelType), bytes.Equal(typ, botLevelType):
		return fnv(fnvOffset, typ)
	case bytes.Equal(typ, jobGroupType), bytes.Equal(typ, taskType):
	default:
		return 0
	}
	kind, rest := stringAfter(rest, kindField, len(rest))
	if !bytes.Equal(kind, jobUpdateKind) && !bytes.Equal(kind, taskUpdateKind) {
		return 0
	}
	idField, whoField := jobIDField, workerField
	if bytes.Equal(kind, taskUpdateKind) {
		idField, whoField = taskIDField, agentField
	}
	id, rest := stringAfter(rest, idField, len(rest))
	who, _ := stringAfter(rest, whoField, len(rest))
	if id == nil || who == nil {
		return 0 // not the shape wire writes: keep it
	}
	h := fnv(fnvOffset, typ)
	h = fnv(h^0xff, id) // a separator no string byte can forge
	h = fnv(h^0xfe, who)
	if h == 0 {
		h = 1
	}
	return h
}

// stringAfter finds field (a key with its opening quote) within the first
// limit bytes of b and returns the raw (still escaped) string value that
// follows and the bytes after it; nil when it is not there.
func stringAfter(b, field []byte, limit int) (value, rest []byte) {
	head := b
	if n := limit + len(field); n < len(head) {
		head = head[:n]
	}
	i := bytes.Index(head, field)
	if i < 0 {
		return nil, nil
	}
	b = b[i+len(field):]
	for j := 0; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return b[:j], b[j+1:]
		}
	}
	return nil, nil
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv folds b into the FNV-1a hash h.
func fnv(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
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
