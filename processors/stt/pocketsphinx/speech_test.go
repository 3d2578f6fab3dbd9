//go:build pocketsphinx && cgo

package pocketsphinx

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/processors/stt"
)

// newEngine returns an engine over the Debian models, skipping the test
// when they are not installed.
// decodeWait bounds a test's decoding: a guard against a hang, not a
// measure of speed. A decoder that takes 6 ms per 20 ms frame on a quiet
// machine took over 30 s for one utterance on a loaded CI machine under
// -race, so the bound is wide.
const decodeWait = 3 * time.Minute

func newEngine(t testing.TB, opts Options) *Engine {
	t.Helper()
	e, err := New(opts)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("PocketSphinx models not installed (Debian pocketsphinx-en-us): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// speak returns text spoken by espeak-ng in voice as 16 kHz mono PCM,
// with half a second of low noise before and after (a microphone is never
// digitally silent). It skips the test when espeak-ng is missing.
func speak(t testing.TB, voice, text string) []byte {
	t.Helper()
	bin, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Skip("espeak-ng not installed")
	}
	path := filepath.Join(t.TempDir(), "speech.wav")
	out, err := exec.Command(bin, "-v", voice, "-s", "150", "-w", path, text).CombinedOutput()
	if err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pcm, sr := parseWAV(t, wav)
	rs, err := dsp.NewResampler(sr, rate, 1, dsp.ResamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pad := noise(rate/2, 1)
	speech := rs.Resample(nil, pcm)
	mix(speech, 2)
	return append(append(append([]byte(nil), pad...), speech...), noise(rate/2, 2)...)
}

// parseWAV returns the PCM and rate of a 16-bit mono WAV file.
func parseWAV(t testing.TB, b []byte) ([]byte, int) {
	t.Helper()
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatal("not a WAV file")
	}
	var sr int
	for p := 12; p+8 <= len(b); {
		id, n := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8:]
		if n > len(body) || n < 0 {
			n = len(body) // espeak-ng writing to a file leaves sizes right; a pipe would not
		}
		switch id {
		case "fmt ":
			if binary.LittleEndian.Uint16(body[2:]) != 1 || binary.LittleEndian.Uint16(body[14:]) != 16 {
				t.Fatal("WAV is not 16-bit mono")
			}
			sr = int(binary.LittleEndian.Uint32(body[4:]))
		case "data":
			return body[:n&^1], sr
		}
		p += 8 + n + n&1
	}
	t.Fatal("WAV has no data chunk")
	return nil, 0
}

// noise returns n samples of deterministic low-level noise (about -60 dBFS).
func noise(n int, seed uint32) []byte {
	b := make([]byte, 2*n)
	mixSeed(b, seed)
	return b
}

// mix adds the low noise to pcm in place.
func mix(pcm []byte, seed uint32) { mixSeed(pcm, seed) }

func mixSeed(pcm []byte, seed uint32) {
	x := seed*2654435761 + 1
	for i := 0; i+1 < len(pcm); i += 2 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v := int32(int16(binary.LittleEndian.Uint16(pcm[i:]))) + int32(x%61) - 30
		binary.LittleEndian.PutUint16(pcm[i:], uint16(int16(max(-32768, min(32767, v)))))
	}
}

// recognize streams pcm in 20 ms frames through a new session, finalizes,
// and returns the final result.
func recognize(t testing.TB, e *Engine, pcm []byte) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), decodeWait)
	defer cancel()
	s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	return decodeUtterance(t, ctx, s, pcm)
}

// decodeUtterance sends pcm in 20 ms frames and finalizes, returning the
// final result that answers the Finalize (the texts of all finals joined,
// when the decoder's own endpointing ended an utterance before).
func decodeUtterance(t testing.TB, ctx context.Context, s *Session, pcm []byte) Result {
	t.Helper()
	return decodeParts(t, ctx, s, [][]byte{pcm}, nil)
}

// decodeParts is decodeUtterance for an utterance sent in parts, with
// between called after the first.
func decodeParts(t testing.TB, ctx context.Context, s *Session, parts [][]byte, between func()) Result {
	t.Helper()
	var finals []Result
	got := make(chan error, 1)
	go func() {
		for {
			r, err := s.Next(ctx)
			if err != nil {
				got <- err
				return
			}
			if r.Final {
				finals = append(finals, r)
				if r.Finalized {
					got <- nil
					return
				}
			}
		}
	}()
	for i, pcm := range parts {
		if i == 1 && between != nil {
			between()
		}
		for b := pcm; len(b) > 0; {
			n := min(len(b), 640)
			if err := s.SendAudio(ctx, b[:n]); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
	}
	if err := s.Finalize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, r := range finals {
		if r.Text != "" {
			texts = append(texts, r.Text)
		}
	}
	last := finals[len(finals)-1]
	if last.Text == "" && len(finals) > 1 {
		last = finals[len(finals)-2]
	}
	last.Text = strings.Join(texts, " ")
	return last
}

// wordAccuracy is 1 - (word edit distance / reference words).
func wordAccuracy(ref, hyp string) float64 {
	r, h := strings.Fields(ref), strings.Fields(hyp)
	if len(r) == 0 {
		return 0
	}
	d := make([]int, len(h)+1)
	for j := range d {
		d[j] = j
	}
	for i := 1; i <= len(r); i++ {
		prev := d[0]
		d[0] = i
		for j := 1; j <= len(h); j++ {
			cur := d[j]
			cost := 1
			if r[i-1] == h[j-1] {
				cost = 0
			}
			d[j] = min(d[j]+1, d[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return max(0, 1-float64(d[len(h)])/float64(len(r)))
}
