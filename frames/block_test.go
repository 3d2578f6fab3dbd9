package frames_test

import (
	"testing"

	"github.com/framewire/framewire/frames"
)

func TestBlockAllocatesABlockAtATime(t *testing.T) {
	var b frames.Block[frames.OutputAudioRaw]
	seen := map[*frames.OutputAudioRaw]bool{}
	for range 120 {
		f := b.New()
		if seen[f] {
			t.Fatal("New returned the same value twice")
		}
		if f.PCM != nil || f.ID() != 0 {
			t.Fatalf("New returned a value that is not zero: %+v", f)
		}
		seen[f] = true
		f.PCM = []byte{1}
	}
	// AllocsPerRun rounds down to whole allocations per run, so each run
	// makes a block's worth.
	if a := testing.AllocsPerRun(100, func() {
		for range 50 {
			b.New()
		}
	}); a != 1 {
		t.Errorf("%.0f allocations per 50 values with the default block; want 1", a)
	}
	small := frames.Block[frames.OutputAudioRaw]{N: 4}
	if a := testing.AllocsPerRun(100, func() {
		for range 4 {
			small.New()
		}
	}); a != 1 {
		t.Errorf("%.0f allocations per 4 values with N=4; want 1", a)
	}
}

func TestByteBlockSlicesNeverOverlap(t *testing.T) {
	var b frames.ByteBlock
	p1, p2 := b.Take(640), b.Take(640)
	if len(p1) != 640 || cap(p1) != 640 || len(p2) != 640 {
		t.Fatalf("Take(640) gave len %d cap %d, then len %d", len(p1), cap(p1), len(p2))
	}
	p2[0] = 7
	if grown := append(p1, 1); p2[0] != 7 || len(grown) != 641 {
		t.Fatal("appending to one slice overwrote the next one")
	}
	if a := testing.AllocsPerRun(100, func() {
		for range 50 {
			b.Take(640)
		}
	}); a != 1 {
		t.Errorf("%.0f allocations per 50 slices of 640 bytes; want 1", a)
	}
	if p := b.Take(100_000); len(p) != 100_000 {
		t.Errorf("a request larger than the block got %d bytes", len(p))
	}
	if p := b.Take(0); len(p) != 0 {
		t.Errorf("Take(0) gave %d bytes", len(p))
	}
}
