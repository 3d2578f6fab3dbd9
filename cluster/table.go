package cluster

import (
	"container/list"
	"sync"
	"time"
)

// table is a bounded map from keys to worker ids whose entries expire
// ttl after their last use; past max entries the least recently used is
// forgotten. The zero value is not usable: see newTable.
type table struct {
	mu  sync.Mutex
	max int
	ttl time.Duration
	m   map[string]*list.Element
	l   list.List // of *entry, the most recently used first
}

type entry struct {
	key, worker string
	at          time.Time
}

func newTable(maxEntries int, ttl time.Duration) *table {
	return &table{max: maxEntries, ttl: ttl, m: make(map[string]*list.Element)}
}

// get returns the worker of key and marks it used at now.
func (t *table) get(key string, now time.Time) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.m[key]
	if !ok {
		return "", false
	}
	e := el.Value.(*entry)
	if now.Sub(e.at) > t.ttl {
		t.removeLocked(el)
		return "", false
	}
	e.at = now
	t.l.MoveToFront(el)
	return e.worker, true
}

// put records key's worker at now.
func (t *table) put(key, worker string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.m[key]; ok {
		e := el.Value.(*entry)
		e.worker, e.at = worker, now
		t.l.MoveToFront(el)
		return
	}
	t.m[key] = t.l.PushFront(&entry{key: key, worker: worker, at: now})
	for t.l.Len() > t.max {
		t.removeLocked(t.l.Back())
	}
}

// drop forgets key.
func (t *table) drop(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.m[key]; ok {
		t.removeLocked(el)
	}
}

// dropWorker forgets every key of worker.
func (t *table) dropWorker(worker string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for el := t.l.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*entry).worker == worker {
			t.removeLocked(el)
		}
		el = next
	}
}

// expire forgets the entries unused since before now minus ttl.
func (t *table) expire(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for el := t.l.Back(); el != nil && now.Sub(el.Value.(*entry).at) > t.ttl; el = t.l.Back() {
		t.removeLocked(el)
	}
}

func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.l.Len()
}

func (t *table) removeLocked(el *list.Element) {
	delete(t.m, el.Value.(*entry).key)
	t.l.Remove(el)
}
