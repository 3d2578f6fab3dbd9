package dsp

import (
	"math"
	"testing"
)

func TestULawKnownValues(t *testing.T) {
	cases := []struct {
		pcm int16
		enc byte
	}{
		{0, 0xFF}, {-1, 0x7F}, {32767, 0x80}, {-32768, 0x00}, {1000, 0xCE}, {-1000, 0x4E},
	}
	for _, c := range cases {
		if got := LinearToULaw(c.pcm); got != c.enc {
			t.Errorf("LinearToULaw(%d) = %#02x, want %#02x", c.pcm, got, c.enc)
		}
	}
	if got := ULawToLinear(0xFF); got != 0 {
		t.Errorf("ULawToLinear(0xFF) = %d, want 0", got)
	}
	if got := ULawToLinear(0x80); got != 32124 {
		t.Errorf("ULawToLinear(0x80) = %d, want 32124", got)
	}
	if got := ULawToLinear(0x00); got != -32124 {
		t.Errorf("ULawToLinear(0x00) = %d, want -32124", got)
	}
}

func TestULawRoundTripStaysWithinTheQuantisationStep(t *testing.T) {
	for v := math.MinInt16; v <= math.MaxInt16; v += 7 {
		s := int16(v)
		back := int(ULawToLinear(LinearToULaw(s)))
		// The µ-law step doubles per segment: at most 1/16 of the magnitude
		// plus the smallest step.
		limit := int(math.Abs(float64(v)))/16 + 8
		if v > 32635 || v < -32635 {
			limit = 32767 - 32124 + 8
		}
		if d := back - int(s); d > limit || d < -limit {
			t.Fatalf("%d -> %#02x -> %d: error %d over %d", s, LinearToULaw(s), back, d, limit)
		}
	}
	for b := 0; b < 256; b++ {
		if got := LinearToULaw(ULawToLinear(byte(b))); got != byte(b) && !(b == 0x7F && got == 0xFF) {
			t.Errorf("byte %#02x decodes to %d, which encodes to %#02x", b, ULawToLinear(byte(b)), got)
		}
	}
}
