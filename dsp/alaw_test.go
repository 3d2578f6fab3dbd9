package dsp

import (
	"encoding/binary"
	"os"
	"testing"
)

// Every 16-bit sample encodes to the A-law byte an independent G.711
// implementation gives (testdata/README.md says how the vectors were made).
func TestALawEncodeMatchesReferenceForEverySample(t *testing.T) {
	want, err := os.ReadFile("testdata/alaw_encode.bin")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 65536 {
		t.Fatalf("alaw_encode.bin has %d bytes, want 65536", len(want))
	}
	bad := 0
	for i, w := range want {
		s := int16(i - 32768)
		if got := LinearToALaw(s); got != w {
			if bad++; bad <= 5 {
				t.Errorf("LinearToALaw(%d) = %#02x, want %#02x", s, got, w)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of 65536 samples encode differently from the reference", bad)
	}
}

// Every A-law byte decodes to the sample the reference gives.
func TestALawDecodeMatchesReferenceForEveryByte(t *testing.T) {
	want, err := os.ReadFile("testdata/alaw_decode.bin")
	if err != nil {
		t.Fatal(err)
	}
	for a := range 256 {
		if got, w := ALawToLinear(byte(a)), int16(binary.LittleEndian.Uint16(want[2*a:])); got != w {
			t.Errorf("ALawToLinear(%#02x) = %d, want %d", a, got, w)
		}
	}
}

// Decoding then encoding gives back the byte: every code names a step
// the encoder maps to itself.
func TestALawRoundTripsEveryByte(t *testing.T) {
	for a := range 256 {
		if got := LinearToALaw(ALawToLinear(byte(a))); got != byte(a) {
			t.Errorf("LinearToALaw(ALawToLinear(%#02x)) = %#02x", a, got)
		}
	}
}

// Any sample encodes and decodes within its A-law step: the quantisation
// error grows with the segment, from 16 near zero to 1024 at full scale.
func FuzzALaw(f *testing.F) {
	for _, s := range []int16{0, 1, -1, 100, -100, 4095, -4096, 32767, -32768} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s int16) {
		back := ALawToLinear(LinearToALaw(s))
		diff := int32(back) - int32(s)
		if diff < 0 {
			diff = -diff
		}
		if limit := max(int32(16), int32(abs16(s))/16+16); diff > limit {
			t.Fatalf("%d came back as %d (off by %d, more than %d)", s, back, diff, limit)
		}
	})
}

func abs16(s int16) int32 {
	if s < 0 {
		return -int32(s)
	}
	return int32(s)
}
