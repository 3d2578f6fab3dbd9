package webrtc

import (
	"container/list"
	"encoding/json"
	"math"
	"net/netip"
	"time"
)

// startTable keeps the /start session ids and their app bodies. An entry
// that no live session uses is "unclaimed": it sits in a list in expiry
// order, the oldest first, so a call drops what expired from the front
// and, when the table is full, forgets the oldest; every call does O(1)
// work (amortised) however many entries there are. An entry that a live
// session was created through is claimed: it leaves the list, so that the
// session's restarts keep finding it, and goes back with a fresh TTL when
// its last session ends. The server's lock guards it.
type startTable struct {
	ttl  time.Duration
	max  int // unclaimed entries kept
	byID map[string]*startEntry
	// unclaimed holds *startEntry in expiry order.
	unclaimed list.List
	// examined counts the entries sweeps looked at (for the tests that
	// check a call's cost does not grow with the table).
	examined int
}

// startEntry is a /start session id waiting for (or serving) offers.
type startEntry struct {
	id       string
	body     json.RawMessage
	expires  time.Time
	sessions int           // live sessions created through this id
	elem     *list.Element // in unclaimed; nil while claimed
}

func newStartTable(ttl time.Duration, max int) *startTable {
	return &startTable{ttl: ttl, max: max, byID: map[string]*startEntry{}}
}

// add records a new id with body, after dropping what expired and, at the
// cap, the oldest unclaimed entry.
func (t *startTable) add(id string, body json.RawMessage, now time.Time) {
	t.sweep(now)
	for t.unclaimed.Len() >= t.max {
		t.remove(t.unclaimed.Front().Value.(*startEntry))
	}
	e := &startEntry{id: id, body: body, expires: now.Add(t.ttl)}
	e.elem = t.unclaimed.PushBack(e)
	t.byID[id] = e
}

// get returns the entry of id, or nil when it is unknown or expired; an
// unclaimed entry's TTL starts again (it is in use).
func (t *startTable) get(id string, now time.Time) *startEntry {
	e := t.byID[id]
	if e == nil || e.elem == nil {
		return e
	}
	if !now.Before(e.expires) {
		t.remove(e)
		return nil
	}
	e.expires = now.Add(t.ttl)
	t.unclaimed.MoveToBack(e.elem)
	return e
}

// has reports whether id is known and not expired, without using it.
func (t *startTable) has(id string, now time.Time) bool {
	e := t.byID[id]
	return e != nil && (e.elem == nil || now.Before(e.expires))
}

// claim marks e as used by one more live session.
func (t *startTable) claim(e *startEntry) {
	if e.elem != nil {
		t.unclaimed.Remove(e.elem)
		e.elem = nil
	}
	e.sessions++
}

// release undoes one claim; the last one puts e back in the list with a
// fresh TTL (at the cap, the oldest unclaimed entry makes room).
func (t *startTable) release(e *startEntry, now time.Time) {
	e.sessions--
	if e.sessions > 0 || t.byID[e.id] != e {
		return
	}
	for t.unclaimed.Len() >= t.max {
		t.remove(t.unclaimed.Front().Value.(*startEntry))
	}
	e.expires = now.Add(t.ttl)
	e.elem = t.unclaimed.PushBack(e)
}

// sweep drops the expired unclaimed entries, which are at the front.
func (t *startTable) sweep(now time.Time) {
	for f := t.unclaimed.Front(); f != nil; f = t.unclaimed.Front() {
		t.examined++
		e := f.Value.(*startEntry)
		if now.Before(e.expires) {
			return
		}
		t.remove(e)
	}
}

func (t *startTable) remove(e *startEntry) {
	if e.elem != nil {
		t.unclaimed.Remove(e.elem)
		e.elem = nil
	}
	delete(t.byID, e.id)
}

// len returns the number of ids known, claimed or not.
func (t *startTable) len() int { return len(t.byID) }

// IPLimits bound what one client address may ask of a [Server]. The zero
// value bounds only the sessions one address has connecting at once: a
// client's address is often shared (NAT, a company's proxy, every test on
// 127.0.0.1), so only the operator knows which numbers fit the others. The
// address is the connection's, or the one a trusted proxy forwarded
// (Options.TrustedProxies); IPv6 clients are counted by their /64, the
// block one host usually holds.
type IPLimits struct {
	// MaxPendingSessions bounds the sessions of one address whose data
	// channel has not opened yet (see Options.MaxPendingSessions); past
	// it, offers get a 503 with Retry-After (the client retries). A
	// browser's session is pending for well under a second, so one
	// address opening 10 sessions a second has a few pending at a time.
	// Default: 32; negative for no limit.
	MaxPendingSessions int
	// MaxSessions bounds the live sessions (connected or not) created
	// from one address; past it, offers get a 503 with Retry-After (the
	// client retries). Default: 0, no limit.
	MaxSessions int
	// Rate is the sustained number of signalling requests per second one
	// address may make (/start, offers, candidate PATCHes, preflights);
	// past it a request gets a 503 with a Retry-After saying when the
	// next is allowed. A browser connecting makes about 5 in its first
	// second. Default: 0, no limit.
	Rate float64
	// Burst is how many requests an address may make at once above Rate.
	// Default: 20.
	Burst int
	// MaxAddresses bounds the addresses whose counts are kept; past it the
	// one seen least recently that has no live session is forgotten (its
	// rate allowance starts again full). Default: 10000.
	MaxAddresses int
}

func (l IPLimits) withDefaults() IPLimits {
	if l.MaxPendingSessions == 0 {
		l.MaxPendingSessions = 32
	}
	if l.Burst <= 0 {
		l.Burst = 20
	}
	if l.MaxAddresses <= 0 {
		l.MaxAddresses = 10000
	}
	return l
}

// ipTable is the per-address state of [IPLimits]: a token bucket and the
// counts of live and pending sessions per address. Addresses without a live session
// are kept in a list, the least recently seen first, from which the table
// forgets one in O(1) when it is full; an address with a live session
// leaves the list until its last session ends, so its count is never
// lost. The server's lock guards it.
type ipTable struct {
	limits IPLimits
	byAddr map[netip.Addr]*ipEntry
	idle   list.List // *ipEntry without live sessions, least recent first
}

type ipEntry struct {
	addr     netip.Addr
	tokens   float64
	last     time.Time // of the last refill
	sessions int
	pending  int           // of sessions, those not connected yet
	elem     *list.Element // in idle; nil while it has sessions
}

func newIPTable(l IPLimits) *ipTable {
	return &ipTable{limits: l, byAddr: map[netip.Addr]*ipEntry{}}
}

// entry returns addr's state, creating it (full allowance) if needed.
func (t *ipTable) entry(addr netip.Addr, now time.Time) *ipEntry {
	if e := t.byAddr[addr]; e != nil {
		if e.elem != nil {
			t.idle.MoveToBack(e.elem)
		}
		return e
	}
	for len(t.byAddr) >= t.limits.MaxAddresses && t.idle.Len() > 0 {
		old := t.idle.Remove(t.idle.Front()).(*ipEntry)
		delete(t.byAddr, old.addr)
	}
	e := &ipEntry{addr: addr, tokens: float64(t.limits.Burst), last: now}
	e.elem = t.idle.PushBack(e)
	t.byAddr[addr] = e
	return e
}

// allow takes one request from e's allowance. When there is none it
// returns false and how long until there is.
func (t *ipTable) allow(e *ipEntry, now time.Time) (bool, time.Duration) {
	rate := t.limits.Rate
	if rate <= 0 {
		return true, 0
	}
	if dt := now.Sub(e.last); dt > 0 {
		e.tokens = math.Min(float64(t.limits.Burst), e.tokens+dt.Seconds()*rate)
		e.last = now
	}
	if e.tokens >= 1 {
		e.tokens--
		return true, 0
	}
	return false, time.Duration((1 - e.tokens) / rate * float64(time.Second))
}

// claim counts one more live session of e's address.
func (t *ipTable) claim(e *ipEntry) {
	if e.elem != nil {
		t.idle.Remove(e.elem)
		e.elem = nil
	}
	e.sessions++
}

// release undoes one claim; the last one makes e forgettable again.
func (t *ipTable) release(e *ipEntry) {
	e.sessions--
	if e.sessions == 0 && t.byAddr[e.addr] == e {
		e.elem = t.idle.PushBack(e)
	}
}

// retryAfterSeconds rounds d up to whole seconds, at least 1, for a
// Retry-After header.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
