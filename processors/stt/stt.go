package stt

import (
	"context"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
)

// Utterance is a stretch of user speech delimited by the VAD: what a
// segmented service sends in one request.
type Utterance struct {
	// PCM is signed 16-bit little-endian audio, interleaved when Channels
	// is more than one. It belongs to the transcriber for the duration of
	// the call.
	PCM []byte
	// SampleRate is in Hz.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
	// Language is the configured BCP 47 language tag, or "" to let the
	// service detect it.
	Language string
}

// Duration returns how long the utterance lasts.
func (u Utterance) Duration() time.Duration {
	if u.SampleRate <= 0 || u.Channels <= 0 {
		return 0
	}
	return time.Duration(int64(len(u.PCM)/(2*u.Channels)) * int64(time.Second) / int64(u.SampleRate))
}

// Result is the transcription of one utterance.
type Result struct {
	// Text is what was said ("" for silence or noise).
	Text string
	// Language is the detected or configured language as a BCP 47 tag,
	// when the service reports one.
	Language string
}

// Transcriber transcribes a whole utterance in one request: the interface
// behind [Segmented]. The OpenAI-compatible client in stt/openai
// implements it. Errors that implement Category() frames.ErrorCategory are
// classified by it.
type Transcriber interface {
	Transcribe(ctx context.Context, u Utterance) (Result, error)
}

// TranscriberFunc adapts a function to the [Transcriber] interface.
type TranscriberFunc func(ctx context.Context, u Utterance) (Result, error)

// Transcribe implements [Transcriber].
func (fn TranscriberFunc) Transcribe(ctx context.Context, u Utterance) (Result, error) {
	return fn(ctx, u)
}

// Format is the audio format of a streaming session.
type Format struct {
	// SampleRate is in Hz.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
}

// Streamer opens streaming recognition sessions: the interface behind
// [Streaming]. The Deepgram client in stt/deepgram implements it.
type Streamer interface {
	// Connect opens a session for audio in format f. Errors that implement
	// Category() frames.ErrorCategory and say ErrorPermanent (bad
	// credentials, bad parameters) stop the service from reconnecting.
	Connect(ctx context.Context, f Format) (Stream, error)
}

// Stream is one open recognition session. Recv runs on its own goroutine,
// concurrently with the other methods, which are called from one
// goroutine.
type Stream interface {
	// SendAudio sends PCM in the session's format.
	SendAudio(ctx context.Context, pcm []byte) error
	// Finalize tells the service the user stopped speaking, so it sends
	// its final results for the audio so far without waiting for more.
	Finalize(ctx context.Context) error
	// KeepAlive keeps an idle session open; the service calls it when no
	// audio was sent for a while.
	KeepAlive(ctx context.Context) error
	// Recv returns the next event. It returns io.EOF when the server ended
	// the session cleanly (after Close), another error when it broke.
	Recv(ctx context.Context) (Event, error)
	// Close asks the server to finish: it sends its last results, then
	// ends the session (Recv returns io.EOF). It does not wait.
	Close(ctx context.Context) error
	// Abort closes the connection at once.
	Abort() error
}

// EventKind says what an [Event] reports.
type EventKind uint8

const (
	// EventInterim is a partial transcript that may still change.
	EventInterim EventKind = iota + 1
	// EventFinal is a transcript that will not change.
	EventFinal
	// EventSpeechStarted is the service's own voice activity detection.
	EventSpeechStarted
	// EventUtteranceEnd is the service's own end-of-utterance detection.
	EventUtteranceEnd
)

// Event is something a streaming session reported.
type Event struct {
	Kind EventKind
	// Text is the transcript of interim and final results.
	Text string
	// Language is the detected language as a BCP 47 tag, when reported.
	Language string
	// Finalized is true on a final result that closes the utterance:
	// the answer to Finalize, or the service's own end of speech.
	Finalized bool
	// Confidence is the service's confidence in a final Text, in (0, 1];
	// 0 when it reports none. It becomes frames.Transcription.Confidence.
	Confidence float64
}

// permanent reports whether err says retrying cannot help.
func permanent(err error) bool { return frames.CategoryOf(err) == frames.ErrorPermanent }

// Timestamp formats t as Pipecat does for transcription frames: ISO 8601
// in UTC with milliseconds, "2025-01-02T15:04:05.123+00:00".
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000-07:00")
}

// clean trims a transcript; "" means nothing was said.
func clean(text string) string { return strings.TrimSpace(text) }

// recognitionError is err as the error frame a speech-to-text service
// reports: the client is told that speech recognition failed, in those
// words, never err's text.
func recognitionError(err error) *frames.Error {
	return &frames.Error{Err: err, Category: frames.CategoryOf(err), Subject: "Speech recognition"}
}
