package ttstest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/tts"
)

// Result is what one Synthesize call yielded.
type Result struct {
	// Audio is the PCM of every chunk, joined.
	Audio []byte
	// Rate is the sample rate of the last chunk that had one.
	Rate int
	// Words are the word timestamps, in order.
	Words []tts.Word
	// Chunks counts the chunks that carried audio.
	Chunks int
	// Err is the error that ended the sequence, or nil.
	Err error
}

// Collect runs s.Synthesize(ctx, req) to its end (or its first error) and
// returns what it yielded.
func Collect(ctx context.Context, s tts.Synthesizer, req tts.Request) Result {
	var r Result
	for ch, err := range s.Synthesize(ctx, req) {
		if err != nil {
			r.Err = err
			break
		}
		if len(ch.Audio) > 0 {
			r.Chunks++
		}
		r.Audio = append(r.Audio, ch.Audio...)
		if ch.SampleRate != 0 {
			r.Rate = ch.SampleRate
		}
		r.Words = append(r.Words, ch.Words...)
	}
	return r
}

// Fixture reads testdata/name of the package under test, failing t if it
// cannot.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Conn is a client's open connection, as far as the lifetime check needs
// to see it.
type Conn interface {
	comparable
	// Dead reports whether the connection's reader has stopped.
	Dead() bool
}

// CheckConnectionEndsWithTheTask checks that the connection a TTS service
// over s warmed up lives as long as its task: for a task that is
// cancelled and one that ends, it waits for current to report the
// connection (its zero value until there is one), speaks "Hello world."
// (the fake's script must expect one generation), ends the task, and
// checks that the connection's reader had stopped by the time Run
// returned. newSynth gives each case a fresh client.
func CheckConnectionEndsWithTheTask[C Conn](t *testing.T, newSynth func(t *testing.T) (tts.Synthesizer, func() C)) {
	t.Helper()
	for _, tc := range []struct {
		name string
		end  func(*pipeline.Task)
	}{
		{"cancel", func(task *pipeline.Task) { task.Cancel("test") }},
		{"end", func(task *pipeline.Task) { task.EndWhenDone() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, current := newSynth(t)
			task := pipeline.NewTask(pipeline.New(tts.NewService(s, tts.Options{})), pipeline.TaskOptions{})
			spoken := make(chan struct{}, 1)
			pipeline.OnDownstream(task, func(*frames.TTSStopped) { spoken <- struct{}{} })
			done := make(chan error, 1)
			go func() { done <- task.Run(context.Background()) }()
			var zero C
			cn := zero
			for deadline := time.Now().Add(10 * time.Second); cn == zero; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the warm-up never connected")
				}
				cn = current()
			}
			task.QueueFrame(&frames.TTSSpeak{Text: "Hello world."})
			select {
			case <-spoken:
			case <-time.After(10 * time.Second):
				t.Fatal("nothing was spoken")
			}
			tc.end(task)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the task did not finish")
			}
			if !cn.Dead() {
				t.Fatal("the connection's reader was still running when Run returned")
			}
		})
	}
}
