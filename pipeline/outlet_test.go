package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// worker starts one piece of background work through its outlet at Setup.
type worker struct {
	pipeline.PassThrough
	out  pipeline.Outlet
	name string
	fn   func(ctx context.Context) error
}

func (w *worker) Setup(_ context.Context, s pipeline.Setup) error {
	s.Attach(&w.out)
	if w.fn != nil {
		return w.out.Go(w.name, w.fn)
	}
	return nil
}

// Frames pushed through an outlet before the task runs wait, and go in
// after Start, in the order they were pushed.
func TestOutletPushesBeforeTheTaskRunsGoInAfterStartInOrder(t *testing.T) {
	w := &worker{}
	rec := &sink{}
	w.out.Push(text("one"), frames.Downstream)
	w.out.Push(text("two"), frames.Downstream)
	task := pipeline.NewTask(pipeline.New(w, rec), pipeline.TaskOptions{})
	task.OnStarted(func() { task.QueueFrame(&frames.End{}) })
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	want := []string{"StartFrame", "Text:one", "Text:two", "EndFrame"}
	if got := rec.names(); !slices.Equal(got, want) {
		t.Fatalf("sink saw %v, want %v", got, want)
	}
}

// What waits in an outlet before the task is bounded: past MaxPending the
// oldest frames are dropped.
func TestOutletKeepsAtMostMaxPendingFramesBeforeTheTaskRuns(t *testing.T) {
	w := &worker{}
	rec := &sink{}
	for range pipeline.MaxPending + 3 {
		w.out.Push(text("x"), frames.Downstream)
	}
	task := pipeline.NewTask(pipeline.New(w, rec), pipeline.TaskOptions{})
	task.OnStarted(func() { task.QueueFrame(&frames.End{}) })
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.texts(frames.Downstream)); got != pipeline.MaxPending {
		t.Fatalf("%d texts reached the sink, want %d", got, pipeline.MaxPending)
	}
}

// Background work lives as long as the task: its context ends when the
// task is cancelled, and the task waits for it.
func TestBackgroundWorkStopsOnCancel(t *testing.T) {
	stopped := make(chan struct{})
	w := &worker{name: "reader", fn: func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	}}
	task := pipeline.NewTask(pipeline.New(w), pipeline.TaskOptions{})
	task.OnStarted(func() { task.Cancel("test") })
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Run returned before the background work had stopped")
	}
}

// After End has gone through, the task tears down: background work's
// context ends and Run waits for it.
func TestBackgroundWorkStopsOnEnd(t *testing.T) {
	var live atomic.Bool
	w := &worker{name: "ticker", fn: func(ctx context.Context) error {
		live.Store(true)
		<-ctx.Done()
		live.Store(false)
		return nil
	}}
	task := pipeline.NewTask(pipeline.New(w), pipeline.TaskOptions{})
	task.OnStarted(func() { task.QueueFrame(&frames.End{}) })
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if live.Load() {
		t.Fatal("background work still running after Run returned")
	}
}

// Work that ignores its context does not hold the task past the cancel
// timeout, and the log names it.
func TestStuckBackgroundWorkIsNamedAndDoesNotBlockTeardown(t *testing.T) {
	release := make(chan struct{})
	ended := make(chan struct{})
	w := &worker{name: "stubborn", fn: func(context.Context) error {
		defer close(ended)
		<-release
		return nil
	}}
	core, logs := observer.New(zap.ErrorLevel)
	task := pipeline.NewTask(pipeline.New(w), pipeline.TaskOptions{
		Logger: zap.New(core), CancelTimeout: 200 * time.Millisecond,
	})
	task.OnStarted(func() { task.Cancel("test") })
	defer func() { close(release); <-ended }()
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	entries := logs.FilterMessageSnippet("work still running").All()
	if len(entries) != 1 {
		t.Fatalf("logged %d 'work still running' errors, want 1: %v", len(entries), logs.All())
	}
	names := entries[0].ContextMap()["background"]
	if got, _ := names.([]any); len(got) != 1 || !strings.HasSuffix(got[0].(string), "/stubborn") {
		t.Fatalf("stuck work named %v, want one name ending in /stubborn", names)
	}
}

// A panic in background work becomes an upstream ErrorFrame; the task
// carries on.
func TestBackgroundPanicBecomesAnErrorFrame(t *testing.T) {
	w := &worker{name: "bad", fn: func(context.Context) error { panic("boom") }}
	errs := make(chan *frames.Error, 1)
	task := pipeline.NewTask(pipeline.New(w), pipeline.TaskOptions{})
	task.OnError(func(e *frames.Error) { errs <- e })
	done := runTask(t, task)
	select {
	case e := <-errs:
		if !strings.Contains(e.Err.Error(), `panic in background work "bad": boom`) {
			t.Fatalf("error = %v", e.Err)
		}
		if !strings.HasPrefix(e.Processor, "worker#") {
			t.Fatalf("error names processor %q, want the worker", e.Processor)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no ErrorFrame for the panic")
	}
	task.QueueFrame(&frames.End{})
	if err := waitDone(t, done, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// An error returned while the task runs is reported; one returned because
// the context ended is not.
func TestBackgroundErrorIsReportedUnlessTheTaskEnded(t *testing.T) {
	w := &worker{name: "dial", fn: func(context.Context) error { return errors.New("dial refused") }}
	quiet := &worker{name: "quiet", fn: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	errs := make(chan error, 4)
	task := pipeline.NewTask(pipeline.New(w, quiet), pipeline.TaskOptions{})
	task.OnError(func(e *frames.Error) { errs <- e.Err })
	done := runTask(t, task)
	if err := <-errs; err.Error() != "dial refused" {
		t.Fatalf("error = %v, want dial refused", err)
	}
	task.Cancel("test")
	if err := waitDone(t, done, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(errs) != 0 {
		t.Fatalf("extra error reported: %v", <-errs)
	}
}

// Once the task has ended, an outlet starts nothing and drops what is
// pushed.
func TestOutletAfterTheTaskEnded(t *testing.T) {
	w := &worker{}
	task := pipeline.NewTask(pipeline.New(w), pipeline.TaskOptions{})
	task.OnStarted(func() { task.QueueFrame(&frames.End{}) })
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := w.out.Go("late", func(context.Context) error { return nil }); !errors.Is(err, pipeline.ErrTaskEnded) {
		t.Fatalf("Go after the end = %v, want ErrTaskEnded", err)
	}
	w.out.Push(text("late"), frames.Downstream) // must not block or panic
}

// Work started through an outlet before the task runs starts when the
// task sets the processor up.
func TestBackgroundWorkStartedBeforeTheTaskRunsStartsAtSetup(t *testing.T) {
	w := &worker{}
	ran := make(chan struct{})
	if err := w.out.Go("early", func(ctx context.Context) error { close(ran); <-ctx.Done(); return nil }); err != nil {
		t.Fatal(err)
	}
	task := pipeline.NewTask(pipeline.New(w), pipeline.TaskOptions{})
	task.OnStarted(func() { <-ran; task.QueueFrame(&frames.End{}) })
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
}
