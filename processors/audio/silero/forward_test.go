package silero

import (
	"math"
	"testing"
)

// The Go forward pass gives the ONNX runtime's probabilities, window by
// window with the state carried over, to within 1e-4.
func TestMatchesONNXRuntime(t *testing.T) {
	const tolerance = 1e-4
	m := testModel(t)
	for _, name := range []string{"speech-16k", "speech-pink-16k", "speech-8k", "white-16k"} {
		t.Run(name, func(t *testing.T) {
			ref := readReference(t, name)
			if ref.ModelSHA256 != ModelSHA256 {
				t.Fatalf("reference made with model %s, want %s", ref.ModelSHA256, ModelSHA256)
			}
			samples, rate := readWAV(t, name)
			if rate != ref.SampleRate || WindowSamples(rate) != ref.Window {
				t.Fatalf("wav at %d Hz, reference at %d Hz with window %d", rate, ref.SampleRate, ref.Window)
			}
			s := NewScorer(m)
			s.Reset(rate)
			n := len(samples) / ref.Window
			if n != len(ref.Probabilities) {
				t.Fatalf("%d windows, reference has %d", n, len(ref.Probabilities))
			}
			worst, at := 0.0, 0
			for i := range n {
				got := s.Confidence(samples[i*ref.Window : (i+1)*ref.Window])
				if d := math.Abs(got - ref.Probabilities[i]); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%d windows, max abs diff %.2g at window %d", n, worst, at)
			if worst > tolerance {
				t.Errorf("max abs diff %.3g at window %d (got vs reference %v), want <= %g", worst, at, ref.Probabilities[at], tolerance)
			}
		})
	}
}

func BenchmarkSileroFrame(b *testing.B) {
	m := testModel(b)
	samples, _ := readWAV(b, "speech-16k")
	s := NewScorer(m)
	s.Reset(16000)
	windows := len(samples) / 512
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w := i % windows
		s.Confidence(samples[w*512 : (w+1)*512])
	}
}
