//go:build opus

package codec

import (
	"math"
	"testing"
)

func TestOpusRoundTripKeepsATone(t *testing.T) {
	c := Default()
	if c.SampleRate != 48000 || c.Params.Channels != 2 || c.Params.PayloadType != 111 {
		t.Fatalf("opus codec params: %+v", c.Params)
	}
	enc, err := c.NewEncoder()
	if err != nil {
		t.Fatal(err)
	}
	dec, err := c.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, c.FrameSamples())
	buf := make([]byte, c.MaxPayload)
	out := make([]int16, c.MaxDecodedSamples())
	var got []int16
	for k := 0; k < 50; k++ {
		for i := range frame {
			n := k*len(frame) + i
			frame[i] = int16(10000 * math.Sin(2*math.Pi*440*float64(n)/48000))
		}
		n, err := enc.Encode(frame, buf)
		if err != nil {
			t.Fatal(err)
		}
		m, err := dec.Decode(buf[:n], out)
		if err != nil || m != 960 {
			t.Fatalf("Decode: %d samples, %v", m, err)
		}
		got = append(got, out[:m]...)
	}
	// Energy at 440 Hz dominates 1 kHz by far.
	p440, p1k := power(got[4800:], 440, 48000), power(got[4800:], 1000, 48000)
	if p440 < 1000*p1k {
		t.Fatalf("440 Hz power %.3g is not far above 1 kHz power %.3g", p440, p1k)
	}
	if m, err := dec.Decode(c.Silence, out); err != nil || m != 960 {
		t.Fatalf("the silence frame decodes to %d samples, %v", m, err)
	}
	if _, err := dec.Decode([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, out); err == nil {
		t.Log("libopus accepted a garbage packet (allowed)")
	}
}

// power is the Goertzel power of freq in x.
func power(x []int16, freq float64, rate int) float64 {
	w := 2 * math.Cos(2*math.Pi*freq/float64(rate))
	var s1, s2 float64
	for _, v := range x {
		s0 := float64(v) + w*s1 - s2
		s2, s1 = s1, s0
	}
	return s1*s1 + s2*s2 - w*s1*s2
}

func FuzzOpusDecode(f *testing.F) {
	f.Add([]byte{0xF8, 0xFF, 0xFE})
	f.Add([]byte{0x78, 0x01, 0x02, 0x03})
	dec, err := Default().NewDecoder()
	if err != nil {
		f.Fatal(err)
	}
	out := make([]int16, Default().MaxDecodedSamples())
	f.Fuzz(func(t *testing.T, payload []byte) {
		n, err := dec.Decode(payload, out)
		if err == nil && (n < 0 || n > len(out)) {
			t.Fatalf("decoded %d samples into %d", n, len(out))
		}
	})
}
