package tts

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/pipeline"
)

// warmingSynth's Warm runs until its context ends, or until release is
// closed when ignoreCtx is set.
type warmingSynth struct {
	fakeSynth
	ignoreCtx         bool
	started, returned chan struct{}
	release           chan struct{}
}

func newWarmingSynth(ignoreCtx bool) *warmingSynth {
	return &warmingSynth{fakeSynth: fakeSynth{rate: 24000, chunk: 4800}, ignoreCtx: ignoreCtx,
		started: make(chan struct{}), returned: make(chan struct{}), release: make(chan struct{})}
}

func (w *warmingSynth) Warm(ctx context.Context) error {
	defer close(w.returned)
	close(w.started)
	if w.ignoreCtx {
		<-w.release
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// The warm-up is background work of the task: Cancel and the end of the
// task (after End) end its context, and Run returns only once it has
// returned.
func TestServiceWarmUpEndsWithTheTask(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*pipeline.Task)
	}{
		{"cancel", func(task *pipeline.Task) { task.Cancel("test") }},
		{"end", func(task *pipeline.Task) { task.EndWhenDone() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synth := newWarmingSynth(false)
			task := pipeline.NewTask(pipeline.New(NewService(synth, Options{})), pipeline.TaskOptions{})
			done := make(chan error, 1)
			go func() { done <- task.Run(context.Background()) }()
			select {
			case <-synth.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the warm-up never started")
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
			select {
			case <-synth.returned:
			default:
				t.Fatal("the warm-up was still running when Run returned")
			}
		})
	}
}

// A warm-up that ignores its context does not hold the task past its
// cancel timeout, and the log names it.
func TestServiceStuckWarmUpIsNamed(t *testing.T) {
	synth := newWarmingSynth(true)
	core, logs := observer.New(zap.ErrorLevel)
	task := pipeline.NewTask(pipeline.New(NewService(synth, Options{})), pipeline.TaskOptions{Logger: zap.New(core), CancelTimeout: 100 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	defer func() { close(synth.release); <-synth.returned }()
	<-synth.started
	task.Cancel("test")
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	entries := logs.FilterMessageSnippet("work still running").All()
	if len(entries) != 1 {
		t.Fatalf("logged %d 'work still running' errors, want 1: %v", len(entries), logs.All())
	}
	names, _ := entries[0].ContextMap()["background"].([]any)
	if len(names) != 1 || !strings.HasSuffix(names[0].(string), "/warm-up") {
		t.Fatalf("stuck work named %v, want one name ending in /warm-up", names)
	}
}
