package tts

import (
	"context"
	"iter"
	"time"
)

// Request is one synthesis request: one sentence of an LLM answer, or the
// text of a [frames.TTSSpeak].
type Request struct {
	// Text is what to say.
	Text string
	// ContextID identifies the request; the frames it produces carry it.
	ContextID string
	// SampleRate is the pipeline's output rate in Hz. A synthesizer that
	// can produce any rate should produce this one, which spares the
	// service a resampling step.
	SampleRate int
}

// Chunk is a piece of synthesized speech. A chunk may carry audio, word
// timestamps or both.
type Chunk struct {
	// Audio is mono signed 16-bit little-endian PCM. It is only valid until
	// the iteration continues (the service copies it), so a synthesizer may
	// reuse its read buffer. It may end inside a sample.
	Audio []byte
	// SampleRate is the rate of Audio in Hz; required when Audio is set.
	SampleRate int
	// Words are word timestamps relative to the start of the request's
	// audio, in order.
	Words []Word
}

// Word is one spoken word and when it starts.
type Word struct {
	// Text is the word as spoken (it may carry punctuation).
	Text string
	// Start is the offset of the word in the request's audio.
	Start time.Duration
}

// Synthesizer turns text into speech. It is the small interface behind
// [Service]: the OpenAI-compatible, Cartesia and espeak-ng clients
// implement it, and so can any other engine.
//
// Synthesize streams the speech of req as it is produced. It must stop
// promptly (closing connections, killing processes) when ctx is cancelled
// or the consumer stops iterating, and yield an error (then stop) when the
// request fails. Errors that implement Category() frames.ErrorCategory are
// classified by it.
type Synthesizer interface {
	Synthesize(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}

// SynthesizerFunc adapts a function to the [Synthesizer] interface.
type SynthesizerFunc func(ctx context.Context, req Request) iter.Seq2[Chunk, error]

// Synthesize implements [Synthesizer].
func (fn SynthesizerFunc) Synthesize(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return fn(ctx, req)
}

// WordTimer is implemented by synthesizers that report word timestamps.
// The service then releases one [frames.TTSText] per word, in step with the
// audio, instead of one per sentence after it.
type WordTimer interface {
	WordTimestamps() bool
}

// Warmer is implemented by synthesizers that keep a connection: the
// service calls Warm in the background when the pipeline starts, so the
// first sentence does not wait for a handshake. A failed warm-up is only
// logged; the first request tries again.
type Warmer interface {
	Warm(ctx context.Context) error
}
