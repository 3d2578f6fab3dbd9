//go:build opus

package codec

import (
	"fmt"
	"math"
	"testing"
)

func TestOpusRoundTripKeepsATone(t *testing.T) {
	c := Default()
	if c.SampleRate != 48000 || c.Params.Channels != 2 || c.Params.PayloadType != 111 {
		t.Fatalf("opus codec params: %+v", c.Params)
	}
	// Encode at the pipeline's 24 kHz and decode at 16 kHz and 48 kHz: the
	// Opus stream does not care, libopus converts on both ends. Both
	// tunings keep the tone.
	for _, tc := range []struct {
		rates [2]int
		opts  EncoderOptions
	}{
		{[2]int{48000, 48000}, EncoderOptions{}},
		{[2]int{24000, 16000}, EncoderOptions{}},
		{[2]int{16000, 48000}, EncoderOptions{}},
		{[2]int{24000, 48000}, EncoderOptions{Application: Playback, Bitrate: 32000}},
		{[2]int{16000, 16000}, EncoderOptions{Application: Playback, Bitrate: 32000}},
	} {
		rates := tc.rates
		in, outRate := rates[0], rates[1]
		if c.NativeRate(in) != in || c.NativeRate(outRate) != outRate {
			t.Fatalf("NativeRate refuses %v", rates)
		}
		enc, err := c.NewEncoder(in, tc.opts)
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
			toneFrame(frame, k, in)
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
			t.Fatalf("%v %+v: 440 Hz power %.3g is not far above 1 kHz power %.3g", rates, tc.opts, p440, p1k)
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

// TestOpusTuning checks the coder each application picks, from the
// configuration number in the first byte of the packets (RFC 6716 §3.1:
// 0-11 SILK, 12-15 hybrid, 16-31 CELT), and that the bitrate is honoured.
func TestOpusTuning(t *testing.T) {
	c := Default()
	for _, tc := range []struct {
		name     string
		rate     int
		opts     EncoderOptions
		celt     bool
		maxBytes int // per 20 ms frame on average; 0: the default bitrate, unchecked
	}{
		{"a microphone is coded as speech", 48000, EncoderOptions{}, false, 0},
		{"playback at 32 kbps uses CELT", 24000, EncoderOptions{Application: Playback, Bitrate: 32000}, true, 32000 / 8 / 50 * 5 / 4},
		{"playback at 16 kHz uses CELT too", 16000, EncoderOptions{Application: Playback, Bitrate: 32000}, true, 32000 / 8 / 50 * 5 / 4},
		{"playback at 12 kbps falls back to speech", 24000, EncoderOptions{Application: Playback, Bitrate: 12000}, false, 12000 / 8 / 50 * 5 / 4},
	} {
		// At complexity 10 libopus also classifies the signal (speech or
		// music) and may switch coders on what it hears; below that, which
		// is where the output runs, the choice follows the tuning.
		for _, cx := range []int{0, 5} {
			t.Run(fmt.Sprintf("%s, complexity %d", tc.name, cx), func(t *testing.T) {
				enc, err := c.NewEncoder(tc.rate, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := enc.(ComplexitySetter).SetComplexity(cx); err != nil {
					t.Fatal(err)
				}
				frame := make([]int16, FrameSamples(tc.rate))
				buf := make([]byte, c.MaxPayload)
				total := 0
				for k := range 50 {
					toneFrame(frame, k, tc.rate)
					n, err := enc.Encode(frame, buf)
					if err != nil {
						t.Fatal(err)
					}
					if config := buf[0] >> 3; (config >= 16) != tc.celt {
						t.Fatalf("frame %d: configuration %d; want CELT: %v", k, config, tc.celt)
					}
					total += n
				}
				if avg := total / 50; tc.maxBytes > 0 && avg > tc.maxBytes {
					t.Errorf("%d bytes per frame on average; want at most %d", avg, tc.maxBytes)
				}
			})
		}
	}
	if _, err := c.NewEncoder(24000, EncoderOptions{Bitrate: -5}); err == nil {
		t.Error("a bitrate of -5 was accepted")
	}
}

// toneFrame fills frame with the k-th frame of a 440 Hz sine at rate.
func toneFrame(frame []int16, k, rate int) {
	for i := range frame {
		n := k*len(frame) + i
		frame[i] = int16(10000 * math.Sin(2*math.Pi*440*float64(n)/float64(rate)))
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
