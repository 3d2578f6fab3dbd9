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
	// Encode at the pipeline's 24 kHz and decode at 16 kHz and 48 kHz: the
	// Opus stream does not care, libopus converts on both ends.
	for _, rates := range [][2]int{{48000, 48000}, {24000, 16000}, {16000, 48000}} {
		in, outRate := rates[0], rates[1]
		if c.NativeRate(in) != in || c.NativeRate(outRate) != outRate {
			t.Fatalf("NativeRate refuses %v", rates)
		}
		enc, err := c.NewEncoder(in)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := c.NewDecoder(outRate)
		if err != nil {
			t.Fatal(err)
		}
		frame := make([]int16, FrameSamples(in))
		buf := make([]byte, c.MaxPayload)
		out := make([]int16, MaxDecodedSamples(outRate))
		var got []int16
		for k := 0; k < 50; k++ {
			for i := range frame {
				n := k*len(frame) + i
				frame[i] = int16(10000 * math.Sin(2*math.Pi*440*float64(n)/float64(in)))
			}
			n, err := enc.Encode(frame, buf)
			if err != nil {
				t.Fatal(err)
			}
			m, err := dec.Decode(buf[:n], out)
			if err != nil || m != FrameSamples(outRate) {
				t.Fatalf("%v: Decode: %d samples, %v", rates, m, err)
			}
			got = append(got, out[:m]...)
		}
		// Energy at 440 Hz dominates 1 kHz by far.
		skip := outRate / 10
		p440, p1k := power(got[skip:], 440, outRate), power(got[skip:], 1000, outRate)
		if p440 < 1000*p1k {
			t.Fatalf("%v: 440 Hz power %.3g is not far above 1 kHz power %.3g", rates, p440, p1k)
		}
		if m, err := dec.Decode(c.Silence, out); err != nil || m != FrameSamples(outRate) {
			t.Fatalf("the silence frame decodes to %d samples, %v", m, err)
		}
	}
	dec, _ := c.NewDecoder(48000)
	out := make([]int16, MaxDecodedSamples(48000))
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
	dec, err := Default().NewDecoder(16000)
	if err != nil {
		f.Fatal(err)
	}
	out := make([]int16, MaxDecodedSamples(16000))
	f.Fuzz(func(t *testing.T, payload []byte) {
		n, err := dec.Decode(payload, out)
		if err == nil && (n < 0 || n > len(out)) {
			t.Fatalf("decoded %d samples into %d", n, len(out))
		}
	})
}
