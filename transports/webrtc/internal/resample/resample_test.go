package resample

import (
	"math"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sine(freq float64, rate, n int, amp float64) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return out
}

// fit returns the amplitude of freq in x and the residual power ratio
// (everything that is not that sine), by least squares on sin and cos.
func fit(x []int16, freq float64, rate int) (amp, snrDB float64) {
	var ss, sc, cc, xs, xc float64
	for i, v := range x {
		s := math.Sin(2 * math.Pi * freq * float64(i) / float64(rate))
		c := math.Cos(2 * math.Pi * freq * float64(i) / float64(rate))
		ss += s * s
		cc += c * c
		sc += s * c
		xs += float64(v) * s
		xc += float64(v) * c
	}
	det := ss*cc - sc*sc
	a := (xs*cc - xc*sc) / det
	b := (xc*ss - xs*sc) / det
	var sig, noise float64
	for i, v := range x {
		s := math.Sin(2 * math.Pi * freq * float64(i) / float64(rate))
		c := math.Cos(2 * math.Pi * freq * float64(i) / float64(rate))
		y := a*s + b*c
		sig += y * y
		noise += (float64(v) - y) * (float64(v) - y)
	}
	return math.Hypot(a, b), 10 * math.Log10(sig/noise)
}

// run resamples x in chunks of chunk samples, as a transport would.
func run(t *testing.T, r *Resampler, x []int16, chunk int) []int16 {
	t.Helper()
	var out []int16
	for i := 0; i < len(x); i += chunk {
		out = r.Resample(out, x[i:min(i+chunk, len(x))])
	}
	return out
}

func TestResamplerKeepsInBandTonesClean(t *testing.T) {
	cases := []struct {
		in, out int
		freqs   []float64
	}{
		{48000, 16000, []float64{100, 440, 1000, 3000, 6000}},
		{24000, 48000, []float64{100, 440, 1000, 5000, 10000}},
		{16000, 48000, []float64{440, 3000, 6500}},
		{8000, 16000, []float64{440, 3000}},
		{24000, 8000, []float64{440, 3000}},
		{48000, 8000, []float64{440, 3000}},
	}
	for _, c := range cases {
		r, err := New(c.in, c.out)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.freqs {
			r.Reset()
			// One second, fed in 20 ms chunks.
			y := run(t, r, sine(f, c.in, c.in, 10000), c.in/50)
			if want := c.out; len(y) < want-2 || len(y) > want+2 {
				t.Errorf("%d->%d: %d samples out of one second, want about %d", c.in, c.out, len(y), want)
			}
			// Skip the filter's start-up transient.
			amp, snr := fit(y[c.out/10:], f, c.out)
			if snr < 60 {
				t.Errorf("%d->%d at %.0f Hz: SNR %.1f dB, want > 60", c.in, c.out, f, snr)
			}
			if amp < 9800 || amp > 10200 {
				t.Errorf("%d->%d at %.0f Hz: amplitude %.0f, want about 10000", c.in, c.out, f, amp)
			}
		}
	}
}

func TestResamplerRejectsAliases(t *testing.T) {
	// A 10 kHz tone cannot exist at 16 kHz; a naive decimator folds it to 6 kHz.
	r, _ := New(48000, 16000)
	y := run(t, r, sine(10000, 48000, 48000, 10000), 960)
	amp, _ := fit(y[1600:], 6000, 16000)
	if db := 20 * math.Log10(amp/10000); db > -60 {
		t.Errorf("10 kHz alias at 6 kHz is %.1f dB, want below -60 dB", db)
	}
	// Upsampling 24 -> 48 kHz must not create an image of 5 kHz at 19 kHz.
	r, _ = New(24000, 48000)
	y = run(t, r, sine(5000, 24000, 24000, 10000), 480)
	amp, _ = fit(y[4800:], 19000, 48000)
	if db := 20 * math.Log10(amp/10000); db > -60 {
		t.Errorf("5 kHz image at 19 kHz is %.1f dB, want below -60 dB", db)
	}
}

func TestResamplerChunkingDoesNotChangeTheOutput(t *testing.T) {
	x := sine(440, 48000, 4800, 12000)
	a, _ := New(48000, 16000)
	b, _ := New(48000, 16000)
	whole := a.Resample(nil, x)
	parts := run(t, b, x, 7)
	if len(whole) != len(parts) {
		t.Fatalf("whole gives %d samples, chunks of 7 give %d", len(whole), len(parts))
	}
	for i := range whole {
		if whole[i] != parts[i] {
			t.Fatalf("sample %d: %d whole, %d chunked", i, whole[i], parts[i])
		}
	}
}

func TestEqualRatesCopy(t *testing.T) {
	r, err := New(16000, 16000)
	if err != nil {
		t.Fatal(err)
	}
	x := []int16{1, -2, 3}
	if y := r.Resample(nil, x); len(y) != 3 || y[1] != -2 {
		t.Fatalf("got %v, want %v", y, x)
	}
}

func TestBadRatesAreErrors(t *testing.T) {
	for _, c := range [][2]int{{0, 16000}, {16000, -1}, {44100, 48000}} {
		if _, err := New(c[0], c[1]); err == nil {
			t.Errorf("New(%d, %d): no error", c[0], c[1])
		}
	}
}

func TestResampleDoesNotAllocateInSteadyState(t *testing.T) {
	r, _ := New(48000, 16000)
	x := sine(440, 48000, 960, 10000)
	dst := make([]int16, 0, 400)
	r.Resample(dst, x)
	if n := testing.AllocsPerRun(100, func() { dst = r.Resample(dst[:0], x) }); n != 0 {
		t.Fatalf("%v allocations per 20 ms chunk, want 0", n)
	}
}

func BenchmarkResample48to16(b *testing.B) {
	r, _ := New(48000, 16000)
	x := sine(440, 48000, 960, 10000)
	dst := make([]int16, 0, 400)
	b.ReportAllocs()
	for b.Loop() {
		dst = r.Resample(dst[:0], x)
	}
}

func BenchmarkResample24to48(b *testing.B) {
	r, _ := New(24000, 48000)
	x := sine(440, 24000, 480, 10000)
	dst := make([]int16, 0, 1000)
	b.ReportAllocs()
	for b.Loop() {
		dst = r.Resample(dst[:0], x)
	}
}
