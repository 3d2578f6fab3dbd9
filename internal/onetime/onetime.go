// Package onetime is the bounded table of one-use ids a server hands out
// and takes back once: the WebSocket transport's /connect ids (with the
// client's requestData) and the telephony transport's stream tokens.
// Each id is taken once, within its TTL; past Max ids the oldest are
// forgotten first, so the table's memory is bounded whatever the rate.
package onetime

import "time"

// Table maps ids to values for one use each. Its methods are not safe for
// concurrent use: the server's lock guards it. The zero Table is unusable;
// set TTL and Max.
type Table[V any] struct {
	// TTL is how long an id waits to be taken; Max how many are kept.
	TTL time.Duration
	Max int

	entries map[string]entry[V]
	order   []string // oldest first; taken ids leave when they reach the head
}

type entry[V any] struct {
	v       V
	expires time.Time
}

// Put keeps v under id from now, forgetting the expired ids at the head
// and the oldest past Max.
func (t *Table[V]) Put(id string, v V, now time.Time) {
	if t.entries == nil {
		t.entries = map[string]entry[V]{}
	}
	for len(t.order) > 0 {
		old := t.order[0]
		e, ok := t.entries[old]
		if ok && len(t.order) < t.Max && now.Before(e.expires) {
			break
		}
		delete(t.entries, old)
		t.order = t.order[1:]
	}
	t.entries[id] = entry[V]{v: v, expires: now.Add(t.TTL)}
	t.order = append(t.order, id)
}

// Take uses up id and returns its value; ok is false for an id never
// put, already taken, forgotten or expired at now.
func (t *Table[V]) Take(id string, now time.Time) (v V, ok bool) {
	e, found := t.entries[id]
	if !found || !now.Before(e.expires) {
		return v, false
	}
	delete(t.entries, id)
	return e.v, true
}
