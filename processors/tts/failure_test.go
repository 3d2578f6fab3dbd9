package tts

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// texts lists the TTSText frames among fs as "text" or "text (unspoken)".
func texts(fs []frames.Frame) []string {
	var out []string
	for _, f := range fs {
		if t, ok := f.(*frames.TTSText); ok {
			s := t.Text
			if t.Unspoken {
				s += " (unspoken)"
			}
			out = append(out, s)
		}
	}
	return out
}

func errorsIn(fs []frames.Frame) []*frames.Error {
	var out []*frames.Error
	for _, f := range fs {
		if e, ok := f.(*frames.Error); ok {
			out = append(out, e)
		}
	}
	return out
}

// Issue 18 item 1: a TTS that fails never swallows the answer. Each text
// whose audio never came goes on, in order, marked unspoken; the user is
// told once per outage that speech is unavailable, and again only after
// speech came back and failed anew.
func TestAFailingSynthesizerLetsTheTextThroughUnspokenAndTellsOnce(t *testing.T) {
	down := errors.New("503 from the TTS host")
	synth := &fakeSynth{rate: 24000, chunk: 4800, fail: map[string]error{
		"One.": down, "Two.": down, "Four.": down,
	}}
	res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{
		Send: llmResponse("One. ", "Two. ", "Three. ", "Four."),
	})
	want := []string{"One. (unspoken)", "Two. (unspoken)", "Three.", "Four. (unspoken)"}
	if d := cmp.Diff(want, texts(res.Down())); d != "" {
		t.Errorf("text frames (-want +got):\n%s", d)
	}
	errs := errorsIn(res.Up())
	if len(errs) != 2 {
		t.Fatalf("%d errors for two outages, want 2: %v", len(errs), errs)
	}
	for _, e := range errs {
		if e.Subject != "Speech output" || !errors.Is(e, down) {
			t.Errorf("error %v with subject %q, want the synthesizer's error about Speech output", e, e.Subject)
		}
	}
}

// hangingSynth never answers: it waits until its request is cancelled.
type hangingSynth struct{}

func (hangingSynth) Synthesize(ctx context.Context, _ Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		<-ctx.Done()
		yield(Chunk{}, ctx.Err())
	}
}

// A TTS that never answers fails after AudioTimeout: the text goes on
// unspoken, the user is told, and the next sentence is tried.
func TestAHangingSynthesizerTimesOutAndTheTextGoesOnUnspoken(t *testing.T) {
	start := time.Now()
	res := pipelinetest.Run(t, NewService(hangingSynth{}, Options{AudioTimeout: 100 * time.Millisecond}), pipelinetest.Options{
		Send: llmResponse("Where is it? ", "Here."),
	})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("two hanging requests took %v, want about 2 × 100 ms", d)
	}
	if d := cmp.Diff([]string{"Where is it? (unspoken)", "Here. (unspoken)"}, texts(res.Down())); d != "" {
		t.Errorf("text frames (-want +got):\n%s", d)
	}
	errs := errorsIn(res.Up())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "no audio in time within 100ms") {
		t.Errorf("errors %v, want one that says no audio came within 100ms", errs)
	}
}

// The timeout bounds the gap between chunks too, and a slow but steady
// synthesizer is not cut.
func TestAudioTimeoutBoundsEachGapNotTheWholeRequest(t *testing.T) {
	steady := &pacedSynth{gap: 50 * time.Millisecond, chunks: 12} // 600 ms in all
	res := pipelinetest.Run(t, NewService(steady, Options{AudioTimeout: 300 * time.Millisecond}), pipelinetest.Options{
		Send: []frames.Frame{&frames.TTSSpeak{Text: "A long answer."}},
	})
	if d := cmp.Diff([]string{"A long answer."}, texts(res.Down())); d != "" || len(errorsIn(res.Up())) != 0 {
		t.Errorf("a request of 12 chunks 50 ms apart failed (-want +got):\n%s\nerrors %v", d, errorsIn(res.Up()))
	}
}

// pacedSynth sends chunks of audio gap apart.
type pacedSynth struct {
	gap    time.Duration
	chunks int
}

func (p *pacedSynth) Synthesize(ctx context.Context, _ Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for range p.chunks {
			select {
			case <-ctx.Done():
				yield(Chunk{}, ctx.Err())
				return
			case <-time.After(p.gap):
			}
			if !yield(Chunk{Audio: make([]byte, 960), SampleRate: 24000}, nil) {
				return
			}
		}
	}
}
