package audio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"
	"time"

	"github.com/framewire/framewire/dsp"
)

const rate16k = 16000

// scene builds 16 kHz mono test audio piece by piece.
type scene struct{ pcm []byte }

func (s *scene) silence(d time.Duration) *scene {
	s.pcm = dsp.AppendSilence(s.pcm, rate16k, 1, d)
	return s
}

func (s *scene) tone(freq, amp float64, d time.Duration) *scene {
	t := dsp.Tone{Freq: freq, Amplitude: amp, SampleRate: rate16k}
	s.pcm = t.AppendDuration(s.pcm, d)
	return s
}

func (s *scene) add(pcm []byte) *scene {
	s.pcm = append(s.pcm, pcm...)
	return s
}

// clamp16 rounds s to the nearest 16-bit sample, saturating at full scale.
func clamp16(s float64) int16 {
	return int16(math.RoundToEven(max(math.MinInt16, min(math.MaxInt16, s))))
}

// whiteNoise returns Gaussian noise with the given RMS level in dBFS.
func whiteNoise(seed uint64, db float64, d time.Duration) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := int(int64(rate16k) * int64(d) / int64(time.Second))
	sigma := dsp.FromDBFS(db) * 32768
	out := make([]int16, n)
	for i := range out {
		out[i] = clamp16(rng.NormFloat64() * sigma)
	}
	return dsp.AppendPCM(nil, out)
}

// pinkNoise returns noise with equal energy per octave (Voss-McCartney:
// twelve random rows, row k redrawn every 2^k samples), scaled to an RMS
// level of db dBFS.
func pinkNoise(seed uint64, db float64, d time.Duration) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	n := int(int64(rate16k) * int64(d) / int64(time.Second))
	raw := make([]float64, n)
	var rows [12]float64
	var sq float64
	for i := range raw {
		for k := range rows {
			if i%(1<<k) == 0 {
				rows[k] = rng.NormFloat64()
			}
		}
		var s float64
		for _, v := range rows {
			s += v
		}
		raw[i] = s
		sq += s * s
	}
	g := dsp.FromDBFS(db) * 32768 / math.Sqrt(sq/float64(n))
	out := make([]int16, n)
	for i, v := range raw {
		out[i] = clamp16(v * g)
	}
	return dsp.AppendPCM(nil, out)
}

// brownNoise returns integrated (red) noise, most of its energy below 200 Hz.
func brownNoise(seed uint64, d time.Duration) []byte {
	rng := rand.New(rand.NewPCG(seed, 9))
	n := int(int64(rate16k) * int64(d) / int64(time.Second))
	out := make([]int16, n)
	var b float64
	for i := range out {
		b = 0.995*b + rng.NormFloat64()*300
		out[i] = clamp16(b)
	}
	return dsp.AppendPCM(nil, out)
}

// transition is a state change reported after a given window.
type transition struct {
	window int // index of the window after which the state changed
	state  VADState
}

// run feeds pcm to v in chunks of chunk bytes (0: one window per call)
// and returns the Speaking/Quiet changes with the window they happened in.
// With chunks of at most a window, every window is observed.
func run(t *testing.T, v *VAD, pcm []byte, chunk int) []transition {
	t.Helper()
	if chunk == 0 {
		chunk = 2 * v.WindowFrames()
	}
	var out []transition
	speaking := false
	for len(pcm) > 0 {
		n := min(chunk, len(pcm))
		st := v.Analyze(pcm[:n])
		pcm = pcm[n:]
		if st == VADSpeaking && !speaking || st == VADQuiet && speaking {
			speaking = !speaking
			out = append(out, transition{int(v.Windows()) - 1, st})
		}
	}
	return out
}

func newVAD(t testing.TB, p VADParams) *VAD {
	t.Helper()
	v, err := NewVAD(VADOptions{Params: p})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sameTransitions(a, b []transition) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func TestVADSilenceStaysQuiet(t *testing.T) {
	v := newVAD(t, VADParams{})
	got := run(t, v, new(scene).silence(3*time.Second).pcm, 0)
	if len(got) != 0 || v.State() != VADQuiet {
		t.Fatalf("silence gave %v, state %v; want no change", got, v.State())
	}
	if v.Windows() != 300 {
		t.Fatalf("3 s at 16 kHz in 10 ms windows: %d windows analysed, want 300", v.Windows())
	}
}

// A 440 Hz tone at -9 dBFS from 1.0 s to 2.0 s, with default params:
//
//   - the tone's windows are 100..199; each has full confidence and a raw
//     volume of 1, so the smoothed volume (attack 0.2 per window) is 1-0.8^k
//     after k of them and first reaches 0.6 in the 5th (window 104): the
//     first speech window;
//   - StartSecs 0.2 is 20 windows, so Speaking after window 123, that is
//     after 124*160 = 19840 samples (1.24 s);
//   - after the tone, the confidence holds (falling 0.019 per window) until
//     window 214, but the volume falls by 0.0673 per window (Pipecat's 0.2
//     per 32 ms) to 0.614 after window 206 and 0.573 after window 207, the
//     first non-speech window;
//   - StopSecs 0.2 is 20 windows, so Quiet after window 226 (2.27 s).
func TestVADToneExactTiming(t *testing.T) {
	pcm := new(scene).silence(time.Second).tone(440, 0.5, time.Second).silence(time.Second).pcm
	want := []transition{{123, VADSpeaking}, {226, VADQuiet}}
	got := run(t, newVAD(t, VADParams{}), pcm, 0)
	if !sameTransitions(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
	// StopSecs 0.8 (Pipecat's older default) moves the stop by 60 windows.
	p := DefaultVADParams()
	p.StopSecs = 0.8
	got = run(t, newVAD(t, p), pcm, 0)
	if want := []transition{{123, VADSpeaking}, {286, VADQuiet}}; !sameTransitions(got, want) {
		t.Fatalf("with StopSecs 0.8: transitions %v, want %v", got, want)
	}
	// StartSecs 0.5 is 50 windows from window 104.
	p = DefaultVADParams()
	p.StartSecs = 0.5
	got = run(t, newVAD(t, p), pcm, 0)
	if want := []transition{{153, VADSpeaking}, {226, VADQuiet}}; !sameTransitions(got, want) {
		t.Fatalf("with StartSecs 0.5: transitions %v, want %v", got, want)
	}
}

// A steady sound becomes background once it is all the scorer has heard
// for 1.5 s: the noise floor is the quietest window of the last 15 blocks of
// 10 windows. The silence before a tone starting at window 100 leaves the
// look-back when block 24 (window 240) begins; from then the tone is 0 dB
// above the floor, the held confidence drops below 0.7 after window 255,
// and Quiet follows 20 windows later, after window 274.
func TestVADSteadyToneBecomesBackground(t *testing.T) {
	pcm := new(scene).silence(time.Second).tone(440, 0.5, 5*time.Second).pcm
	want := []transition{{123, VADSpeaking}, {274, VADQuiet}}
	if got := run(t, newVAD(t, VADParams{}), pcm, 0); !sameTransitions(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
}

// How the audio is cut into calls, even inside a sample, changes nothing:
// after every call the state is the one reached, window by window, after
// the last complete window.
func TestVADChunkingDoesNotMatter(t *testing.T) {
	pcm := new(scene).silence(500*time.Millisecond).tone(300, 0.3, 700*time.Millisecond).
		silence(300*time.Millisecond).tone(600, 0.2, 400*time.Millisecond).silence(time.Second).pcm
	ref := newVAD(t, VADParams{})
	var states []VADState // state after each window
	for i := 0; i+320 <= len(pcm); i += 320 {
		states = append(states, ref.Analyze(pcm[i:i+320]))
	}
	if got := run(t, newVAD(t, VADParams{}), pcm, 0); len(got) != 4 {
		t.Fatalf("expected two speech segments, got %v", got)
	}
	for _, chunk := range []int{1, 3, 7, 160, 641, 3200} {
		v := newVAD(t, VADParams{})
		for rest := pcm; len(rest) > 0; {
			n := min(chunk, len(rest))
			st := v.Analyze(rest[:n])
			rest = rest[n:]
			if w := v.Windows(); w > 0 && st != states[w-1] {
				t.Fatalf("chunks of %d bytes: state %v after window %d, want %v", chunk, st, w-1, states[w-1])
			}
		}
	}
}

// A burst shorter than StartSecs never starts; a gap shorter than StopSecs
// never stops.
func TestVADShortBurstsAndGaps(t *testing.T) {
	burst := new(scene).silence(time.Second).tone(440, 0.5, 150*time.Millisecond).silence(time.Second).pcm
	if got := run(t, newVAD(t, VADParams{}), burst, 0); len(got) != 0 {
		t.Errorf("a 150 ms burst gave %v, want nothing", got)
	}
	gap := new(scene).silence(time.Second).tone(440, 0.5, time.Second).silence(100*time.Millisecond).
		tone(440, 0.5, time.Second).silence(time.Second).pcm
	got := run(t, newVAD(t, VADParams{}), gap, 0)
	// The gap is windows 200..209: the volume gate closes at 207, and the
	// tone's return reopens it at 211, so Stopping lasts 4 windows. The
	// second tone ends at 309 and Quiet follows as in the exact-timing test.
	if want := []transition{{123, VADSpeaking}, {336, VADQuiet}}; !sameTransitions(got, want) {
		t.Errorf("a 100 ms gap: %v, want %v", got, want)
	}
}

// Sounds that are not voice never start speech.
func TestVADIgnoresNoiseHumAndQuietSounds(t *testing.T) {
	hum := new(scene).tone(50, 0.3, 2*time.Second).pcm
	dsp.MixInto(hum, new(scene).tone(100, 0.2, 2*time.Second).pcm)
	cases := map[string][]byte{
		"white noise at -20 dBFS": whiteNoise(1, -20, 3*time.Second),
		"pink noise at -25 dBFS":  pinkNoise(1, -25, 3*time.Second),
		"pink noise at -45 dBFS":  pinkNoise(2, -45, 3*time.Second),
		"white noise at -40 dBFS": whiteNoise(2, -40, 3*time.Second),
		"brown noise":             brownNoise(3, 3*time.Second),
		"50 Hz hum":               hum,
		"6 kHz whistle":           new(scene).tone(6000, 0.5, 2*time.Second).pcm,
		// -57 dBFS RMS: below MinVolume 0.6 (about -50 dBFS).
		"faint 440 Hz tone": new(scene).tone(440, 0.002, 2*time.Second).pcm,
	}
	for name, pcm := range cases {
		v := newVAD(t, VADParams{})
		if got := run(t, v, pcm, 0); len(got) != 0 {
			t.Errorf("%s: %v, want no speech", name, got)
		}
	}
}

func TestNewVADRejectsBadOptions(t *testing.T) {
	for _, o := range []VADOptions{
		{Params: VADParams{Confidence: 1.5}},
		{Params: VADParams{MinVolume: -1}},
		{Params: VADParams{StartSecs: -0.1, Confidence: 0.5}},
		{Params: VADParams{Confidence: math.NaN()}},
		{Params: VADParams{Confidence: 0.5, StopSecs: math.Inf(1)}},
		{Window: time.Microsecond},
		{SampleRate: 100},
	} {
		if _, err := NewVAD(o); err == nil {
			t.Errorf("NewVAD(%+v) gave no error", o)
		}
	}
	v := newVAD(t, VADParams{})
	if err := v.SetSampleRate(0); err == nil {
		t.Error("SetSampleRate(0) gave no error")
	}
	if v.Params() != DefaultVADParams() {
		t.Errorf("zero params gave %+v, want the defaults", v.Params())
	}
}

func TestVADWindowFollowsRate(t *testing.T) {
	v := newVAD(t, VADParams{})
	for _, c := range []struct{ rate, frames int }{{16000, 160}, {8000, 80}, {48000, 480}, {22050, 220}} {
		if err := v.SetSampleRate(c.rate); err != nil {
			t.Fatal(err)
		}
		if v.WindowFrames() != c.frames {
			t.Errorf("%d Hz: %d frames per window, want %d", c.rate, v.WindowFrames(), c.frames)
		}
	}
}

// espeak renders text to 16 kHz mono, or skips the test without espeak-ng.
func espeak(t testing.TB, text string) []byte {
	t.Helper()
	path, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Skip("espeak-ng is not installed (apt-get install espeak-ng); skipping the synthesized-speech test")
	}
	out, err := exec.Command(path, "--stdout", text).Output()
	if err != nil {
		t.Fatalf("espeak-ng: %v", err)
	}
	w, err := dsp.DecodeWAV(out)
	if err != nil {
		t.Fatalf("espeak-ng output: %v", err)
	}
	r, err := dsp.NewResampler(w.SampleRate, rate16k, w.Channels, dsp.ResamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pcm := r.Flush(r.Resample(nil, w.PCM))
	return dsp.AppendMono(nil, pcm, w.Channels)
}

// voicedSpan returns the first and last 10 ms window whose level is above
// -40 dBFS: where the speech is, measured independently of the VAD.
func voicedSpan(pcm []byte) (first, last int) {
	first = -1
	for i := 0; 2*(i+1)*160 <= len(pcm); i++ {
		if dsp.DBFS(pcm[2*i*160:2*(i+1)*160]) > -40 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last
}

// Speech synthesized by espeak-ng, alone or over steady noise, starts once
// StartSecs of it has been heard and stops StopSecs after it ends. The
// slack covers what the simple detector cannot see exactly: up to 200 ms
// late at the start for the consonants that break a run, and up to 250 ms
// late at the stop for the 150 ms confidence hold and the volume release.
func TestVADOnSynthesizedSpeech(t *testing.T) {
	noises := []struct {
		name string
		pcm  []byte
	}{
		{"clean", nil},
		{"pink noise at -40 dBFS", pinkNoise(5, -40, 6*time.Second)},
		{"white noise at -35 dBFS", whiteNoise(6, -35, 6*time.Second)},
	}
	for _, text := range []string{"No.", "Yes.", "What is the weather like in Paris?", "Please fill in the form with my address."} {
		speech := espeak(t, text)
		clean := new(scene).silence(time.Second).add(speech).silence(time.Second).pcm
		first, last := voicedSpan(clean)
		for _, n := range noises {
			t.Run(text+"/"+n.name, func(t *testing.T) {
				pcm := append([]byte(nil), clean...)
				dsp.MixInto(pcm, n.pcm)
				got := run(t, newVAD(t, VADParams{}), pcm, 0)
				if len(got) != 2 {
					t.Fatalf("speech at windows %d..%d gave %v, want one start and one stop", first, last, got)
				}
				start, stop := got[0].window, got[1].window
				if start < first+19 || start > first+19+20 {
					t.Errorf("started after window %d; speech begins at %d, so want %d..%d", start, first, first+19, first+39)
				}
				if stop < last+20 || stop > last+20+25 {
					t.Errorf("stopped after window %d; speech ends at %d, so want %d..%d", stop, last, last+20, last+45)
				}
			})
		}
	}
}

// The cost of analysing one 20 ms frame of 16 kHz audio.
func BenchmarkVAD20ms(b *testing.B) {
	v := newVAD(b, VADParams{})
	frame := new(scene).tone(440, 0.3, 20*time.Millisecond).pcm
	dsp.MixInto(frame, whiteNoise(1, -40, 20*time.Millisecond))
	b.ReportAllocs()
	for b.Loop() {
		v.Analyze(frame)
	}
}

func TestVADDoesNotAllocate(t *testing.T) {
	v := newVAD(t, VADParams{})
	frame := new(scene).tone(440, 0.3, 20*time.Millisecond).pcm
	odd := frame[:321]
	if n := testing.AllocsPerRun(100, func() { v.Analyze(frame); v.Analyze(odd) }); n != 0 {
		t.Fatalf("%v allocations per 20 ms frame, want 0", n)
	}
}

// FuzzVADAnalyze: any bytes cut anywhere give the same state, window by
// window, as the same bytes fed at once; nothing panics.
func FuzzVADAnalyze(f *testing.F) {
	f.Add(uint16(7), new(scene).silence(100*time.Millisecond).tone(440, 0.5, 400*time.Millisecond).pcm)
	f.Add(uint16(1), whiteNoise(1, -20, 50*time.Millisecond))
	f.Add(uint16(0), []byte{0xff, 0x7f, 0x00, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, cut uint16, pcm []byte) {
		whole := newVAD(t, VADParams{})
		want := whole.Analyze(pcm)
		v := newVAD(t, VADParams{})
		step := 1 + int(cut)%701
		var got VADState
		for rest := pcm; len(rest) > 0; {
			n := min(step, len(rest))
			got = v.Analyze(rest[:n])
			rest = rest[n:]
		}
		if got != want || v.Windows() != whole.Windows() || v.Volume() != whole.Volume() {
			t.Fatalf("chunks of %d bytes: %v after %d windows, one shot: %v after %d", step, got, v.Windows(), want, whole.Windows())
		}
		if c := v.Confidence(); c < 0 || c > 1 || math.IsNaN(c) {
			t.Fatalf("confidence %v out of [0,1]", c)
		}
	})
}
