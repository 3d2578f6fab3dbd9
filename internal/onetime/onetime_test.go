package onetime

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAnIDIsTakenOnceWithinItsTTLAndTheOldestGoPastMax(t *testing.T) {
	tab := Table[int]{TTL: time.Minute, Max: 2}
	t0 := time.Unix(1000, 0)
	tab.Put("a", 1, t0)
	tab.Put("b", 2, t0)
	tab.Put("c", 3, t0) // past Max: "a" goes
	if _, ok := tab.Take("a", t0); ok {
		t.Error(`"a" was kept past Max`)
	}
	if v, ok := tab.Take("b", t0.Add(59*time.Second)); !ok || v != 2 {
		t.Errorf(`"b" within its TTL: %d, %v`, v, ok)
	}
	if _, ok := tab.Take("b", t0); ok {
		t.Error(`"b" was taken twice`)
	}
	if _, ok := tab.Take("c", t0.Add(time.Minute)); ok {
		t.Error(`"c" was taken at its expiry`)
	}
	for i := range 10000 { // memory stays bounded
		tab.Put(string(rune('A'+i%26))+time.Duration(i).String(), i, t0)
	}
	if len(tab.order) > tab.Max || len(tab.entries) > tab.Max {
		t.Errorf("%d ids ordered, %d kept; want at most Max (%d)", len(tab.order), len(tab.entries), tab.Max)
	}
}
