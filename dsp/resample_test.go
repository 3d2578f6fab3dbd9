package dsp

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// ratios are the rate pairs framewire uses, plus a few awkward ones.
var ratios = []struct{ in, out int }{
	{48000, 16000}, {16000, 48000}, {24000, 48000}, {48000, 24000},
	{8000, 48000}, {48000, 8000}, {16000, 24000}, {24000, 16000},
	{44100, 48000}, {22050, 16000}, {11025, 16000}, {48000, 44101},
}

func name(in, out int) string { return fmt.Sprintf("%d-%d", in, out) }

// chirp returns a linear sweep from f0 to f1 Hz evaluated at the times
// t0 + i/rate, as floats relative to full scale.
func chirp(f0, f1, dur float64, amp float64, rate int, t0 float64, n int) []float64 {
	k := (f1 - f0) / dur
	out := make([]float64, n)
	for i := range out {
		t := t0 + float64(i)/float64(rate)
		if t < 0 || t > dur {
			continue
		}
		out[i] = amp * math.Sin(2*math.Pi*(f0*t+k*t*t/2))
	}
	return out
}

func quantize(x []float64) []byte {
	b := make([]byte, 2*len(x))
	for i, v := range x {
		s := saturateFloat(v * 32767)
		b[2*i] = byte(uint16(s))
		b[2*i+1] = byte(uint16(s) >> 8)
	}
	return b
}

func mustResampler(t testing.TB, in, out, ch int) *Resampler {
	t.Helper()
	r, err := NewResampler(in, out, ch, ResamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The output of a stream cut into chunks of any size (even mid-sample) is
// byte for byte the output of the whole stream at once.
func TestResamplerChunkedEqualsOneShot(t *testing.T) {
	for _, ch := range []int{1, 2} {
		for _, rt := range ratios {
			t.Run(fmt.Sprintf("%s/%dch", name(rt.in, rt.out), ch), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, uint64(rt.in+rt.out)))
				src := make([]byte, 2*ch*rt.in/4) // 250 ms of noise
				for i := range src {
					src[i] = byte(rng.IntN(256))
				}
				whole := mustResampler(t, rt.in, rt.out, ch)
				want := whole.Resample(nil, src)
				want = whole.Flush(want)

				chunked := mustResampler(t, rt.in, rt.out, ch)
				var got []byte
				for rest := src; len(rest) > 0; {
					n := min(len(rest), rng.IntN(3000))
					got = chunked.Resample(got, rest[:n])
					rest = rest[n:]
				}
				got = chunked.Flush(got)
				if !bytes.Equal(got, want) {
					t.Fatalf("chunked output (%d bytes) differs from one-shot output (%d bytes)", len(got), len(want))
				}
				// Flush reset the resampler: a second run gives the same bytes.
				again := chunked.Flush(chunked.Resample(nil, src))
				if !bytes.Equal(again, want) {
					t.Fatal("a resampler reused after Flush gives different output")
				}
			})
		}
	}
}

// After n input frames, exactly ceil(n*out/in) output frames have come out,
// and OutputFrames predicts every call.
func TestResamplerOutputCount(t *testing.T) {
	for _, rt := range ratios {
		t.Run(name(rt.in, rt.out), func(t *testing.T) {
			r := mustResampler(t, rt.in, rt.out, 1)
			rng := rand.New(rand.NewPCG(2, 3))
			total, outTotal := 0, 0
			for range 200 {
				n := rng.IntN(700)
				want := r.OutputFrames(n)
				got := len(r.Resample(nil, make([]byte, 2*n))) / 2
				if got != want {
					t.Fatalf("OutputFrames(%d) = %d, but the call produced %d", n, want, got)
				}
				total += n
				outTotal += got
				if exp := int(math.Ceil(float64(total) * float64(rt.out) / float64(rt.in))); outTotal != exp {
					t.Fatalf("after %d input frames: %d output frames, want %d", total, outTotal, exp)
				}
			}
		})
	}
}

// 20 ms in gives 20 ms out at every rate pair the transports use.
func TestResampler20msFrames(t *testing.T) {
	for _, rt := range ratios[:8] {
		r := mustResampler(t, rt.in, rt.out, 1)
		in := FrameBytes(rt.in, 1, 20*time.Millisecond)
		want := FrameBytes(rt.out, 1, 20*time.Millisecond)
		for i := range 10 {
			if got := len(r.Resample(nil, make([]byte, in))); got != want {
				t.Fatalf("%s frame %d: %d bytes out, want %d", name(rt.in, rt.out), i, got, want)
			}
		}
	}
}

// A sine sweep across the passband comes out with more than 60 dB of
// signal-to-noise ratio against the ideal sweep at the output rate, delayed
// by the documented latency.
func TestResamplerSweepSNR(t *testing.T) {
	for _, rt := range ratios {
		t.Run(name(rt.in, rt.out), func(t *testing.T) {
			const dur = 1.0
			low := float64(min(rt.in, rt.out))
			f1 := 0.9 * low / 2
			r := mustResampler(t, rt.in, rt.out, 1)
			src := quantize(chirp(20, f1, dur, 0.5, rt.in, 0, rt.in))
			var out []byte
			for rest := src; len(rest) > 0; {
				n := min(len(rest), FrameBytes(rt.in, 1, 20*time.Millisecond))
				out = r.Resample(out, rest[:n])
				rest = rest[n:]
			}
			lat := float64(r.half) / float64(rt.in)
			if d := time.Duration(lat * float64(time.Second)); d.Round(time.Microsecond) != r.Latency().Round(time.Microsecond) {
				t.Fatalf("Latency() = %v, want %v", r.Latency(), d)
			}
			ref := chirp(20, f1, dur, 0.5, rt.out, -lat, len(out)/2)
			// Skip the first and last 50 ms: the sweep starts and stops
			// abruptly, which is not band-limited.
			skip := rt.out / 20
			var sig, noise float64
			for i := skip; i < len(ref)-skip; i++ {
				y := float64(SampleAt(out, i)) / 32767
				sig += ref[i] * ref[i]
				noise += (y - ref[i]) * (y - ref[i])
			}
			snr := 10 * math.Log10(sig/noise)
			t.Logf("SNR %.1f dB, %d taps, latency %v", snr, r.Taps(), r.Latency())
			if snr < 60 {
				t.Fatalf("SNR over the sweep 20 Hz..%.0f Hz is %.1f dB, want at least 60 dB", f1, snr)
			}
		})
	}
}

// Tones above the output Nyquist frequency are attenuated by at least 60 dB
// when downsampling, instead of folding back into the band as aliases.
func TestResamplerRejectsAliases(t *testing.T) {
	for _, rt := range ratios {
		if rt.out >= rt.in {
			continue
		}
		t.Run(name(rt.in, rt.out), func(t *testing.T) {
			nyq := float64(rt.out) / 2
			span := float64(rt.in)/2 - nyq
			for _, f := range []float64{nyq, nyq + 0.1*span, nyq + 0.5*span, nyq + 0.95*span} {
				r := mustResampler(t, rt.in, rt.out, 1)
				src := Sine(f, 0.9, rt.in, 500*time.Millisecond)
				out := r.Resample(nil, src)
				out = out[len(out)/5:] // skip the start-up transient
				in := DBFS(src)
				got := DBFS(out)
				if got-in > -60 {
					t.Errorf("%.0f Hz tone: output %.1f dBFS for input %.1f dBFS, attenuation %.1f dB, want at least 60", f, got, in, in-got)
				}
			}
		})
	}
}

// The alias measurement can fail: a deliberately weak filter does not pass.
func TestResamplerAliasCheckDetectsWeakFilter(t *testing.T) {
	r, err := NewResampler(48000, 16000, 1, ResamplerOptions{Attenuation: 25, Passband: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	src := Sine(8800, 0.9, 48000, 500*time.Millisecond)
	out := r.Resample(nil, src)
	if att := DBFS(src) - DBFS(out[len(out)/5:]); att >= 60 {
		t.Fatalf("a 25 dB filter attenuated an 8.8 kHz tone by %.1f dB; the measurement is broken", att)
	}
}

// Upsampling does not create images: a tone below the input Nyquist
// frequency comes out alone, without its mirror above that frequency.
func TestResamplerRejectsImages(t *testing.T) {
	for _, rt := range ratios {
		if rt.out <= rt.in {
			continue
		}
		t.Run(name(rt.in, rt.out), func(t *testing.T) {
			f := 0.8 * float64(rt.in) / 2
			image := float64(rt.in) - f
			r := mustResampler(t, rt.in, rt.out, 1)
			out := r.Resample(nil, Sine(f, 0.5, rt.in, 500*time.Millisecond))
			out = out[len(out)/5:]
			a := ToneAmplitude(out, rt.out, 1, f)
			img := ToneAmplitude(out, rt.out, 1, image)
			if math.Abs(a-0.5) > 0.005 {
				t.Errorf("%.0f Hz tone came out with amplitude %.4f, want 0.5", f, a)
			}
			if db := 20 * math.Log10(img/a); db > -60 {
				t.Errorf("image at %.0f Hz is %.1f dB below the tone, want at least 60", image, -db)
			}
		})
	}
}

// Each channel of a multi-channel stream is resampled on its own.
func TestResamplerStereoChannelsStaySeparate(t *testing.T) {
	left := Sine(440, 0.5, 48000, 200*time.Millisecond)
	right := Sine(1000, 0.25, 48000, 200*time.Millisecond)
	st := make([]byte, 0, 2*len(left))
	for i := 0; i < len(left); i += 2 {
		st = append(st, left[i], left[i+1], right[i], right[i+1])
	}
	r := mustResampler(t, 48000, 16000, 2)
	out := r.Resample(nil, st)
	var l, rr []byte
	for i := 0; i+3 < len(out); i += 4 {
		l = append(l, out[i], out[i+1])
		rr = append(rr, out[i+2], out[i+3])
	}
	l, rr = l[len(l)/4:], rr[len(rr)/4:]
	if f, a := DominantFrequency(l, 16000, 1, 440, 1000); f != 440 || math.Abs(a-0.5) > 0.01 {
		t.Errorf("left channel: %v Hz at %.3f, want 440 Hz at 0.5", f, a)
	}
	if f, a := DominantFrequency(rr, 16000, 1, 440, 1000); f != 1000 || math.Abs(a-0.25) > 0.01 {
		t.Errorf("right channel: %v Hz at %.3f, want 1000 Hz at 0.25", f, a)
	}
}

func TestResamplerEqualRatesCopies(t *testing.T) {
	r := mustResampler(t, 16000, 16000, 1)
	src := Sine(440, 0.5, 16000, 20*time.Millisecond)
	if got := r.Resample(nil, src); !bytes.Equal(got, src) {
		t.Fatal("equal rates must copy the input")
	}
	if r.Latency() != 0 {
		t.Fatalf("Latency() = %v, want 0", r.Latency())
	}
	// A split sample is held until complete.
	got := r.Resample(nil, src[:3])
	got = r.Resample(got, src[3:])
	if !bytes.Equal(got, src) {
		t.Fatal("a sample split across calls was not reassembled")
	}
}

func TestResamplerSamplesAPI(t *testing.T) {
	src := Sine(300, 0.5, 24000, 100*time.Millisecond)
	a := mustResampler(t, 24000, 48000, 1)
	b := mustResampler(t, 24000, 48000, 1)
	want := a.Resample(nil, src)
	samples := AppendSamples(nil, src)
	var got []int16
	got = b.ResampleSamples(got, samples[:101])
	got = b.ResampleSamples(got, samples[101:])
	if !bytes.Equal(AppendPCM(nil, got), want) {
		t.Fatal("ResampleSamples differs from Resample")
	}
}

func TestNewResamplerRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		in, out, ch int
		opts        ResamplerOptions
	}{
		{0, 16000, 1, ResamplerOptions{}},
		{16000, -1, 1, ResamplerOptions{}},
		{16000, 48000, 0, ResamplerOptions{}},
		{16000, 48000, 65, ResamplerOptions{}},
		{16000, 2_000_000, 1, ResamplerOptions{}},
		{1, 16000, 1, ResamplerOptions{}},      // 16000:1 up
		{16000, 1, 1, ResamplerOptions{}},      // 16000:1 down
		{8000, 192000, 1, ResamplerOptions{}},  // 24:1
		{192001, 12000, 1, ResamplerOptions{}}, // just over 16:1
		{16000, 48000, 1, ResamplerOptions{Passband: 0.2}},
		{16000, 48000, 1, ResamplerOptions{Attenuation: 5}},
	} {
		if _, err := NewResampler(c.in, c.out, c.ch, c.opts); err == nil {
			t.Errorf("NewResampler(%d, %d, %d, %+v) gave no error", c.in, c.out, c.ch, c.opts)
		}
	}
}

func TestResamplerSteadyStateDoesNotAllocate(t *testing.T) {
	for _, rt := range ratios {
		r := mustResampler(t, rt.in, rt.out, 2)
		src := make([]byte, FrameBytes(rt.in, 2, 20*time.Millisecond)+1) // odd on purpose
		dst := make([]byte, 0, 2*FrameBytes(rt.out, 2, 20*time.Millisecond)+8)
		r.Resample(dst[:0], src) // warm up
		r.Resample(dst[:0], src)
		if n := testing.AllocsPerRun(50, func() { dst = r.Resample(dst[:0], src) }); n != 0 {
			t.Errorf("%s: %v allocations per 20 ms call, want 0", name(rt.in, rt.out), n)
		}
	}
}

func benchmarkResample(b *testing.B, in, out int, opts ...ResamplerOptions) {
	var o ResamplerOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	r, err := NewResampler(in, out, 1, o)
	if err != nil {
		b.Fatal(err)
	}
	src := Sine(440, 0.5, in, 20*time.Millisecond)
	dst := make([]byte, 0, 4*len(src))
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		dst = r.Resample(dst[:0], src)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/20ms")
}

func BenchmarkResample48kTo16k(b *testing.B) { benchmarkResample(b, 48000, 16000) }
func BenchmarkResample24kTo48k(b *testing.B) { benchmarkResample(b, 24000, 48000) }
func BenchmarkResample16kTo48k(b *testing.B) { benchmarkResample(b, 16000, 48000) }
func BenchmarkResample22050To16k(b *testing.B) {
	benchmarkResample(b, 22050, 16000)
}

// The WebRTC transport's lighter filter (70 dB, 85% passband).
var lighter = ResamplerOptions{Attenuation: 70, Passband: 0.85}

func BenchmarkResample48kTo16kLighter(b *testing.B) { benchmarkResample(b, 48000, 16000, lighter) }
func BenchmarkResample24kTo48kLighter(b *testing.B) { benchmarkResample(b, 24000, 48000, lighter) }

// Mixing the two APIs on one stream never corrupts the resampler.
func TestResamplerMixedAPIs(t *testing.T) {
	r := mustResampler(t, 48000, 16000, 2)
	r.Resample(nil, make([]byte, 7))
	r.ResampleSamples(nil, make([]int16, 5))
	if out := r.Resample(nil, make([]byte, 960*4)); len(out)%4 != 0 {
		t.Fatalf("output of %d bytes is not whole stereo frames", len(out))
	}
}

// FuzzResampler: for any input and any way of cutting it, the chunked
// output equals the one-shot output and has the predicted length.
func FuzzResampler(f *testing.F) {
	f.Add(uint8(0), uint8(1), uint16(100), Sine(440, 0.5, 48000, 10*time.Millisecond))
	f.Add(uint8(2), uint8(2), uint16(3), []byte{1, 2, 3, 4, 5, 6, 7})
	f.Add(uint8(8), uint8(1), uint16(0), make([]byte, 1000))
	f.Fuzz(func(t *testing.T, pair, channels uint8, cut uint16, src []byte) {
		rt := ratios[int(pair)%len(ratios)]
		ch := 1 + int(channels)%2
		whole := mustResampler(t, rt.in, rt.out, ch)
		want := whole.Resample(nil, src)
		if frames := len(src) / (2 * ch); len(want) != 2*ch*int(math.Ceil(float64(frames)*float64(rt.out)/float64(rt.in))) {
			t.Fatalf("%d input frames gave %d bytes", frames, len(want))
		}
		chunked := mustResampler(t, rt.in, rt.out, ch)
		step := 1 + int(cut)%997
		var got []byte
		for rest := src; len(rest) > 0; {
			n := min(step, len(rest))
			got = chunked.Resample(got, rest[:n])
			rest = rest[n:]
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("chunks of %d bytes differ from one shot", step)
		}
	})
}

// A rate a client claims (1 Hz) is refused before any filter is designed
// or any buffer sized for it: the call allocates only its error.
func TestNewResamplerRefusesInsaneRatioCheaply(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := NewResampler(1, 16000, 1, ResamplerOptions{}); err == nil {
			t.Fatal("1 Hz to 16 kHz gave no error")
		}
		if _, err := NewResampler(16000, 1, 1, ResamplerOptions{}); err == nil {
			t.Fatal("16 kHz to 1 Hz gave no error")
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("20 refused resamplers allocated %d bytes, want under 64 KiB", got)
	}
	// The widest ratio allowed is accepted.
	if _, err := NewResampler(48000, 3000, 1, ResamplerOptions{}); err != nil {
		t.Fatalf("16:1 refused: %v", err)
	}
}

// Resamplers of one ratio and options share one design: a stream that
// switches back to a rate it used (or another stream at that ratio) does
// not design the filter again.
func TestResamplersShareCachedFilterDesign(t *testing.T) {
	a := mustResampler(t, 47123, 16000, 1)
	b := mustResampler(t, 47123, 16000, 2)
	if &a.coeffs[0] != &b.coeffs[0] {
		t.Fatal("two resamplers of the same rates designed two filters")
	}
	c := mustResampler(t, 48000, 16000, 1)
	d := mustResampler(t, 24000, 8000, 1) // the same ratio, 3:1
	if &c.coeffs[0] != &d.coeffs[0] {
		t.Fatal("48k:16k and 24k:8k designed two filters")
	}
	e, err := NewResampler(48000, 16000, 1, lighter)
	if err != nil {
		t.Fatal(err)
	}
	if &c.coeffs[0] == &e.coeffs[0] {
		t.Fatal("different options share a design")
	}
	// A cached design costs only the stream's own state: the design of
	// this prime ratio alone is 600 KB of coefficients.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		mustResampler(t, 47123, 16000, 1)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 10*16<<10 {
		t.Errorf("10 resamplers of a cached ratio allocated %d bytes, want under 16 KiB each", got)
	}
}

// The cache holds at most maxCachedFilters designs and maxCachedCoeffs
// coefficients, however many rates are asked for.
func TestFilterCacheIsBounded(t *testing.T) {
	for rate := 40000; rate < 40000+3*maxCachedFilters; rate++ {
		mustResampler(t, rate, 16000, 1)
		filters.mu.Lock()
		n, coeffs := len(filters.entries), filters.coeffs
		filters.mu.Unlock()
		if n > maxCachedFilters || coeffs > maxCachedCoeffs {
			t.Fatalf("after %d Hz: %d designs and %d coefficients cached, want at most %d and %d",
				rate, n, coeffs, maxCachedFilters, maxCachedCoeffs)
		}
	}
	if filters.size() == 0 {
		t.Fatal("nothing cached")
	}
	// The most recent design is still held.
	a, b := mustResampler(t, 40000+3*maxCachedFilters-1, 16000, 1), mustResampler(t, 40000+3*maxCachedFilters-1, 16000, 1)
	if &a.coeffs[0] != &b.coeffs[0] {
		t.Fatal("the most recently used design was evicted")
	}
}
