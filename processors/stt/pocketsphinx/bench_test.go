//go:build pocketsphinx && cgo

package pocketsphinx

import (
	"context"
	"testing"
	"time"

	"github.com/framewire/framewire/processors/stt"
)

// benchmarkFrames streams a spoken phrase in 20 ms frames, one per
// iteration, finalizing at the end of each repetition: the cost of live
// decoding, with the end-of-utterance work spread over the frames. It
// reports the real-time factor (decoding time over audio time).
func benchmarkFrames(b *testing.B, g *Grammar) {
	e := newEngine(b, Options{Grammar: g})
	pcm := speak(b, "en-us", "Where is the iPhone 17?")
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	s, err := e.Open(ctx, stt.Format{SampleRate: rate, Channels: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Abort()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			if _, err := s.Next(ctx); err != nil {
				return
			}
		}
	}()
	defer func() { cancel(); <-drained }()
	const frame = 640
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	off := 0
	for range b.N {
		if off+frame > len(pcm) {
			if err := s.Finalize(ctx); err != nil {
				b.Fatal(err)
			}
			off = 0
		}
		if err := s.SendAudio(ctx, pcm[off:off+frame]); err != nil {
			b.Fatal(err)
		}
		off += frame
	}
	b.StopTimer()
	b.ReportMetric(float64(time.Since(start))/float64(time.Duration(b.N)*20*time.Millisecond), "rtf")
}

func BenchmarkFrame(b *testing.B) { benchmarkFrames(b, nil) }

func BenchmarkFrameWithGrammar(b *testing.B) {
	g, err := NewGrammar(demoPhrasings, demoItems)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkFrames(b, g)
}

func BenchmarkOpen(b *testing.B) {
	e := newEngine(b, Options{})
	b.ReportAllocs()
	for range b.N {
		s, err := e.Open(b.Context(), stt.Format{SampleRate: rate, Channels: 1})
		if err != nil {
			b.Fatal(err)
		}
		s.Abort()
	}
}

func BenchmarkNewGrammar(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := NewGrammar(demoPhrasings, demoItems); err != nil {
			b.Fatal(err)
		}
	}
}
