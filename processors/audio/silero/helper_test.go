package silero

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/framewire/framewire/dsp"
)

// testModel loads the model from DefaultModelPath, or skips the test when
// the file is absent: it is not committed, fetch-model.sh brings it.
func testModel(tb testing.TB) *Model {
	tb.Helper()
	path, err := DefaultModelPath()
	if err != nil {
		tb.Skipf("silero model: %v", err)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		tb.Skipf("silero model not found at %s: run processors/audio/silero/fetch-model.sh (or set %s) to run this test", path, ModelEnv)
	}
	m, err := LoadModel(path)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// reference is a testdata/*.json file written by tools/silero-ref.
type reference struct {
	ModelSHA256   string    `json:"model_sha256"`
	SampleRate    int       `json:"sample_rate"`
	Window        int       `json:"window"`
	Context       int       `json:"context"`
	Probabilities []float64 `json:"probabilities"`
}

func readReference(tb testing.TB, name string) reference {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(data, &r); err != nil {
		tb.Fatalf("%s.json: %v", name, err)
	}
	return r
}

// readWAV returns the mono samples and rate of testdata/name.wav.
func readWAV(tb testing.TB, name string) ([]int16, int) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".wav"))
	if err != nil {
		tb.Fatal(err)
	}
	w, err := dsp.DecodeWAV(data)
	if err != nil {
		tb.Fatalf("%s.wav: %v", name, err)
	}
	if w.Channels != 1 {
		tb.Fatalf("%s.wav: %d channels, want 1", name, w.Channels)
	}
	s := make([]int16, len(w.PCM)/2)
	for i := range s {
		s[i] = int16(uint16(w.PCM[2*i]) | uint16(w.PCM[2*i+1])<<8)
	}
	return s, w.SampleRate
}
