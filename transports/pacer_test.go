package transports

import (
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// A client sending at real time is never refused, however long it talks.
func TestPacerAdmitsRealTime(t *testing.T) {
	c := &fakeClock{t: time.Unix(1e9, 0)}
	p := Pacer{MaxAhead: DefaultMaxAhead, Now: c.now}
	for i := range 3000 { // a minute of 20 ms packets
		if !p.Admit(20 * time.Millisecond) {
			t.Fatalf("packet %d refused at real time", i)
		}
		c.t = c.t.Add(20 * time.Millisecond)
	}
}

// A client sending ten times faster than real time gets real time plus
// MaxAhead through, and the rest is refused and counted.
func TestPacerHoldsAFastClientToRealTimePlusMaxAhead(t *testing.T) {
	c := &fakeClock{t: time.Unix(1e9, 0)}
	p := Pacer{MaxAhead: DefaultMaxAhead, Now: c.now}
	wall, admitted, sent := 5*time.Second, time.Duration(0), 0
	for elapsed := time.Duration(0); elapsed < wall; elapsed += 2 * time.Millisecond {
		sent++
		if p.Admit(20 * time.Millisecond) {
			admitted += 20 * time.Millisecond
		}
		c.t = c.t.Add(2 * time.Millisecond)
	}
	if want := wall + DefaultMaxAhead; admitted > want || admitted < want-40*time.Millisecond {
		t.Fatalf("admitted %v of audio in %v of wall time, want about %v", admitted, wall, want)
	}
	if got, want := p.Dropped(), uint64(sent)-uint64(admitted/(20*time.Millisecond)); got != want {
		t.Fatalf("Dropped() = %d, want %d", got, want)
	}
}

// The zero Pacer has no bound.
func TestZeroPacerAdmitsEverything(t *testing.T) {
	var p Pacer
	for range 10000 {
		if !p.Admit(time.Second) {
			t.Fatal("the zero Pacer refused a packet")
		}
	}
}

// The pacer's check allocates nothing.
func TestPacerDoesNotAllocate(t *testing.T) {
	c := &fakeClock{t: time.Unix(1e9, 0)}
	p := Pacer{MaxAhead: DefaultMaxAhead, Now: c.now}
	if a := testing.AllocsPerRun(100, func() {
		c.t = c.t.Add(20 * time.Millisecond)
		p.Admit(20 * time.Millisecond)
	}); a != 0 {
		t.Fatalf("%v allocations per packet", a)
	}
}
