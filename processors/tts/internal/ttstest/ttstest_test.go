package ttstest

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/processors/tts"
)

// script is a Synthesizer that yields its chunks, then err if set.
type script struct {
	chunks []tts.Chunk
	err    error
}

func (s script) Synthesize(context.Context, tts.Request) iter.Seq2[tts.Chunk, error] {
	return func(yield func(tts.Chunk, error) bool) {
		for _, ch := range s.chunks {
			if !yield(ch, nil) {
				return
			}
		}
		if s.err != nil {
			yield(tts.Chunk{}, s.err)
		}
	}
}

func TestCollectJoinsWhatSynthesizeYields(t *testing.T) {
	boom := errors.New("boom")
	s := script{chunks: []tts.Chunk{
		{Audio: []byte{1, 2}, SampleRate: 24000},
		{Words: []tts.Word{{Text: "Hi", Start: time.Millisecond}}},
		{Audio: []byte{3}, SampleRate: 16000},
	}, err: boom}
	got := Collect(context.Background(), s, tts.Request{Text: "Hi"})
	want := Result{Audio: []byte{1, 2, 3}, Rate: 16000, Words: []tts.Word{{Text: "Hi", Start: time.Millisecond}}, Chunks: 2, Err: boom}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
}
