package pipeline_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// delay sleeps before handling every text frame, to make a slow branch.
type delay struct{ d time.Duration }

func (p delay) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if _, ok := f.(*frames.Text); ok {
		time.Sleep(p.d)
	}
	return nil
}

// emitAtStart pushes a frame of its own right after forwarding Start.
type emitAtStart struct{ text string }

func (p emitAtStart) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if _, ok := f.(*frames.Start); ok {
		h.Forward()
		h.Push(text(p.text), frames.Downstream)
	}
	return nil
}

// Branches of unequal speed: every frame fanned out comes out once, End
// leaves only after the slow branch has flushed, and frames emitted by a
// branch at Start leave after Start (failure mode 5).
func TestParallelBranchesOfUnequalSpeed(t *testing.T) {
	rec := &sink{}
	par := pipeline.NewParallel(
		pipeline.New(emitAtStart{"fast-hello"}),
		pipeline.New(delay{2 * time.Millisecond}, emitAtStart{"slow-hello"}),
	)
	task := pipeline.NewTask(pipeline.New(par, rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	for _, s := range []string{"a", "b", "c"} {
		task.QueueFrame(text(s))
	}
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	got := rec.names()
	if got[0] != "StartFrame" || got[len(got)-1] != "EndFrame" {
		t.Fatalf("lifecycle frames escaped the barrier: %v", got)
	}
	texts := rec.texts(frames.Downstream)
	slices.Sort(texts)
	if want := []string{"a", "b", "c", "fast-hello", "slow-hello"}; !slices.Equal(texts, want) {
		t.Fatalf("texts = %v, want each once: %v", texts, want)
	}
}

// Cancel passes the barrier too, even while an End is waiting in it.
func TestParallelCancelOvertakesPendingEnd(t *testing.T) {
	b := newBlocker()
	par := pipeline.NewParallel(pipeline.New(pipeline.PassThrough{}), pipeline.New(b))
	task := pipeline.NewTask(pipeline.New(par), pipeline.TaskOptions{CancelTimeout: 2 * time.Second})
	done := runTask(t, task)
	task.QueueFrames(text("block"), &frames.End{})
	<-b.running
	time.Sleep(10 * time.Millisecond)
	task.Cancel("now")
	if err := waitDone(t, done, 3*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Upstream frames from the branches are merged and deduplicated as well.
func TestParallelUpstreamDedupe(t *testing.T) {
	top := &sink{}
	par := pipeline.NewParallel(pipeline.New(pipeline.PassThrough{}), pipeline.New(pipeline.PassThrough{}), pipeline.New())
	task := pipeline.NewTask(pipeline.New(top, par, bounce{}), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrame(text("x"))
	waitFor(t, func() bool { return len(top.texts(frames.Upstream)) >= 1 })
	time.Sleep(20 * time.Millisecond)
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	if got := top.texts(frames.Upstream); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("upstream = %v, want one x", got)
	}
}

// Many frames through parallel branches with an observer reading the same
// frame instances: run under -race (failure mode 19).
func TestParallelBranchesAndObserversShareFramesSafely(t *testing.T) {
	rec := &sink{}
	var seen int
	obs := observerFunc(func(f frames.Frame) {
		if tf, ok := f.(*frames.Text); ok {
			seen += len(tf.Text)
		}
	})
	par := pipeline.NewParallel(pipeline.New(pipeline.PassThrough{}, pipeline.PassThrough{}), pipeline.New(pipeline.PassThrough{}))
	task := pipeline.NewTask(pipeline.New(par, rec), pipeline.TaskOptions{Observers: []observerIface{obs}})
	done := runTask(t, task)
	for range 2000 {
		task.QueueFrame(text("x"))
	}
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	if got := len(rec.texts(frames.Downstream)); got != 2000 {
		t.Fatalf("sink saw %d texts, want 2000", got)
	}
	if seen == 0 {
		t.Fatal("observer saw nothing")
	}
}
