package silero

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/processors/audio"
)

// transition is a state change and the audio time at which it happened.
type transition struct {
	State audio.VADState
	At    time.Duration
}

// run feeds samples to v in 20 ms chunks and returns the changes between
// quiet and speaking.
func run(v audio.VADAnalyzer, samples []int16, rate int) []transition {
	chunk := rate / 50
	pcm := make([]byte, 2*chunk)
	var out []transition
	speaking := false
	for i := 0; i+chunk <= len(samples); i += chunk {
		for j, s := range samples[i : i+chunk] {
			pcm[2*j], pcm[2*j+1] = byte(s), byte(uint16(s)>>8)
		}
		st := v.Analyze(pcm)
		if now := st == audio.VADSpeaking || st == audio.VADStopping; now != speaking {
			speaking = now
			state := audio.VADQuiet
			if now {
				state = audio.VADSpeaking
			}
			out = append(out, transition{state, time.Duration(i+chunk) * time.Second / time.Duration(rate)})
		}
	}
	return out
}

// A sentence after half a second of silence starts the VAD about 0.2 s after
// its onset and stops it after it ends; white noise never starts it.
func TestVADSpeechAndNoise(t *testing.T) {
	m := testModel(t)
	v, err := NewVAD(Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.WindowFrames(); got != 512 {
		t.Errorf("WindowFrames() = %d at 16 kHz, want 512", got)
	}
	samples, rate := readWAV(t, "speech-16k")
	got := run(v, samples, rate)
	if len(got) < 2 || got[0].State != audio.VADSpeaking || got[len(got)-1].State != audio.VADQuiet {
		t.Fatalf("transitions %v, want speaking ... quiet", got)
	}
	// Start: StartSecs (six 32 ms windows) after the onset at the earliest,
	// later while the smoothed volume rises past MinVolume or when the
	// model hears a closure in the first word. Stop: StopSecs after the
	// last sound, give or take a window.
	onset, offset := soundSpan(samples, rate)
	if start := got[0].At - onset; start < 190*time.Millisecond || start > 800*time.Millisecond {
		t.Errorf("speech started %v after the onset at %v, want 0.19 to 0.8 s", start, onset)
	}
	if stop := got[len(got)-1].At - offset; stop < 0 || stop > 500*time.Millisecond {
		t.Errorf("speech stopped %v after the last sound at %v, want 0 to 0.5 s", stop, offset)
	}
	t.Logf("onset %v offset %v transitions %v", onset, offset, got)

	v.Reset()
	noise, _ := readWAV(t, "white-16k")
	if got := run(v, noise, rate); len(got) != 0 {
		t.Errorf("white noise: transitions %v, want none", got)
	}
}

// soundSpan returns the start of the first and the end of the last 10 ms
// block above -45 dBFS.
func soundSpan(samples []int16, rate int) (onset, offset time.Duration) {
	block := rate / 100
	first, last := -1, -1
	for i := 0; i+block <= len(samples); i += block {
		var sq float64
		for _, v := range samples[i : i+block] {
			sq += float64(v) * float64(v)
		}
		if rms := math.Sqrt(sq/float64(block)) / 32768; rms > math.Pow(10, -45.0/20) {
			if first < 0 {
				first = i
			}
			last = i + block
		}
	}
	at := func(n int) time.Duration { return time.Duration(n) * time.Second / time.Duration(rate) }
	return at(first), at(last)
}

// The 8 kHz branch runs with 256-sample windows and finds the same speech.
func TestVAD8kHz(t *testing.T) {
	m := testModel(t)
	v, err := NewVAD(Options{Model: m, SampleRate: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.WindowFrames(); got != 256 {
		t.Errorf("WindowFrames() = %d at 8 kHz, want 256", got)
	}
	samples, rate := readWAV(t, "speech-8k")
	got := run(v, samples, rate)
	if len(got) < 2 || got[0].State != audio.VADSpeaking || got[len(got)-1].State != audio.VADQuiet {
		t.Fatalf("transitions %v, want speaking ... quiet", got)
	}
}

func TestVADSampleRates(t *testing.T) {
	m := testModel(t)
	v, err := NewVAD(Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.SetSampleRate(24000); err == nil || !strings.Contains(err.Error(), "24000 Hz, want 16000 or 8000") {
		t.Errorf("SetSampleRate(24000) = %v, want a rate error", err)
	}
	if v.SampleRate() != 16000 {
		t.Errorf("after a refused rate the VAD is at %d Hz, want 16000", v.SampleRate())
	}
	if err := v.SetSampleRate(8000); err != nil || v.WindowFrames() != 256 {
		t.Errorf("SetSampleRate(8000) = %v with window %d, want nil and 256", err, v.WindowFrames())
	}
	if _, err := NewVAD(Options{Model: m, SampleRate: 44100}); err == nil {
		t.Error("NewVAD at 44100 Hz succeeded")
	}
	if _, err := NewVAD(Options{Model: m, Params: audio.VADParams{Confidence: 2}}); err == nil {
		t.Error("NewVAD with confidence 2 succeeded")
	}
}

// Reset clears the LSTM state and the context: the same audio after a reset
// scores exactly as it did the first time.
func TestScorerReset(t *testing.T) {
	m := testModel(t)
	samples, _ := readWAV(t, "speech-16k")
	s := NewScorer(m)
	score := func() []float64 {
		var p []float64
		for i := 0; i+512 <= 40*512; i += 512 {
			p = append(p, s.Confidence(samples[i:i+512]))
		}
		return p
	}
	first := score()
	again := score() // state carried over: different
	if cmp.Equal(first, again) {
		t.Fatal("scores do not depend on the carried state")
	}
	s.Reset(16000)
	if diff := cmp.Diff(first, score()); diff != "" {
		t.Errorf("after Reset (-first +now):\n%s", diff)
	}
}

func TestScorerBadInput(t *testing.T) {
	var zero Scorer
	if got := zero.Confidence(make([]int16, 512)); got != 0 {
		t.Errorf("zero Scorer scored %v, want 0", got)
	}
	if _, err := zero.Probability(make([]float32, 512)); err == nil {
		t.Error("zero Scorer Probability succeeded")
	}
	m := testModel(t)
	s := NewScorer(m)
	if got := s.Confidence(make([]int16, 100)); got != 0 {
		t.Errorf("100-sample window scored %v, want 0", got)
	}
	if _, err := s.Probability(make([]float32, 256)); err == nil || !strings.Contains(err.Error(), "want 512") {
		t.Errorf("Probability of 256 samples at 16 kHz = %v, want a window error", err)
	}
	s.Reset(22050)
	if got := s.Confidence(make([]int16, 512)); got != 0 || s.SampleRate() != 0 {
		t.Errorf("at 22050 Hz: scored %v at rate %d, want 0 and 0", got, s.SampleRate())
	}
}

// Probability on float samples gives what Confidence gives on the same
// samples as int16.
func TestProbabilityMatchesConfidence(t *testing.T) {
	m := testModel(t)
	samples, _ := readWAV(t, "speech-16k")
	a, b := NewScorer(m), NewScorer(m)
	f := make([]float32, 512)
	for i := 0; i+512 <= len(samples); i += 512 {
		for j, v := range samples[i : i+512] {
			f[j] = float32(v) / 32768
		}
		p, err := b.Probability(f)
		if err != nil {
			t.Fatal(err)
		}
		if c := a.Confidence(samples[i : i+512]); float32(c) != p {
			t.Fatalf("window %d: Confidence %v, Probability %v", i/512, c, p)
		}
	}
}

func TestLoadModelErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.onnx")
	_, err := LoadModel(missing)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "fetch-model.sh") {
		t.Errorf("LoadModel(missing) = %v, want ErrNotExist naming fetch-model.sh", err)
	}
	other := filepath.Join(dir, "other.onnx")
	if err := os.WriteFile(other, []byte("not a model"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadModel(other); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("LoadModel(other file) = %v, want a SHA-256 error", err)
	}
	if _, err := NewVAD(Options{ModelPath: missing}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NewVAD(missing model) = %v, want ErrNotExist", err)
	}
}

func TestDefaultModelPath(t *testing.T) {
	t.Setenv(ModelEnv, "/models/vad.onnx")
	if p, err := DefaultModelPath(); err != nil || p != "/models/vad.onnx" {
		t.Errorf("with %s set: %q, %v", ModelEnv, p, err)
	}
	t.Setenv(ModelEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/cache")
	t.Setenv("HOME", "/home/u")
	p, err := DefaultModelPath()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("framewire", ModelFile); !strings.HasSuffix(p, want) {
		t.Errorf("DefaultModelPath() = %q, want it to end in %s", p, want)
	}
}
