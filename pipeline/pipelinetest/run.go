package pipelinetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// Options says what to send through the processor under test.
type Options struct {
	// Send is queued downstream through the task's ingress, in order.
	Send []frames.Frame
	// SendUpstream is pushed upstream into the processor from below, in
	// order, right after Start has passed.
	SendUpstream []frames.Frame
	// Keep selects the frames to record; by default everything except
	// Start, End, Stop and Cancel.
	Keep func(frames.Frame) bool
	// NoEnd leaves the task running after Send: the test ends it itself
	// with [Result.Task] (for example with Cancel).
	NoEnd bool
	// Task configures the task; the zero value is fine.
	Task pipeline.TaskOptions
	// Timeout bounds the whole run. Default: 10s.
	Timeout time.Duration
}

// Result is what came out of the processor.
type Result struct {
	// Task is the task that ran the processor.
	Task *pipeline.Task
	// Err is what Task.Run returned.
	Err error

	mu   sync.Mutex
	down []frames.Frame
	up   []frames.Frame
	done chan struct{}
}

// Down returns the recorded frames that left the processor downstream.
func (r *Result) Down() []frames.Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]frames.Frame(nil), r.down...)
}

// Up returns the recorded frames that left the processor upstream.
func (r *Result) Up() []frames.Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]frames.Frame(nil), r.up...)
}

// Wait blocks until the task has finished.
func (r *Result) Wait() { <-r.done }

func defaultKeep(f frames.Frame) bool {
	switch f.(type) {
	case *frames.Start, *frames.End, *frames.Stop, *frames.Cancel:
		return false
	}
	return true
}

// recorder sits at one end of the processor under test.
type recorder struct {
	res  *Result
	keep func(frames.Frame) bool
	dir  frames.Direction // the direction it records
	send []frames.Frame   // pushed upstream once Start has passed
}

func (rec *recorder) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if _, ok := f.(*frames.Start); ok && len(rec.send) > 0 {
		h.Forward()
		for _, s := range rec.send {
			h.Push(s, frames.Upstream)
		}
		rec.send = nil
		return nil
	}
	if dir == rec.dir && rec.keep(f) {
		rec.res.mu.Lock()
		if dir == frames.Downstream {
			rec.res.down = append(rec.res.down, f)
		} else {
			rec.res.up = append(rec.res.up, f)
		}
		rec.res.mu.Unlock()
	}
	return nil
}

// Start runs p in a task and returns at once; use [Result.Wait].
func Start(tb testing.TB, p pipeline.Processor, o Options) *Result {
	tb.Helper()
	if o.Keep == nil {
		o.Keep = defaultKeep
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	res := &Result{done: make(chan struct{})}
	top := &recorder{res: res, keep: o.Keep, dir: frames.Upstream}
	bottom := &recorder{res: res, keep: o.Keep, dir: frames.Downstream, send: o.SendUpstream}
	task := pipeline.NewTask(pipeline.New(top, p, bottom), o.Task)
	res.Task = task
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	go func() {
		defer close(res.done)
		defer cancel()
		res.Err = task.Run(ctx)
	}()
	task.QueueFrames(o.Send...)
	if !o.NoEnd {
		task.EndWhenDone()
	}
	return res
}

// Run runs p in a task with o, waits for it to finish and returns what came
// out. It fails the test if the task does not finish within o.Timeout.
func Run(tb testing.TB, p pipeline.Processor, o Options) *Result {
	tb.Helper()
	res := Start(tb, p, o)
	res.Wait()
	if res.Err != nil {
		tb.Fatalf("pipelinetest: task ended with %v", res.Err)
	}
	return res
}

// CmpOptions returns the go-cmp options that compare frames by content:
// identity (id, sibling, pushed flag) is ignored.
func CmpOptions() cmp.Options {
	return cmp.Options{
		cmpopts.IgnoreTypes(frames.Base{}),
		cmpopts.EquateEmpty(),
		cmpopts.EquateErrors(),
	}
}

// Diff returns a readable difference between two frame lists, or "" when
// they are equal by content.
func Diff(want, got []frames.Frame) string {
	return cmp.Diff(want, got, CmpOptions())
}

// ExpectDown fails the test unless the frames that left downstream equal want.
func (r *Result) ExpectDown(tb testing.TB, want ...frames.Frame) {
	tb.Helper()
	if d := Diff(want, r.Down()); d != "" {
		tb.Errorf("downstream frames mismatch (-want +got):\n%s", d)
	}
}

// ExpectUp fails the test unless the frames that left upstream equal want.
func (r *Result) ExpectUp(tb testing.TB, want ...frames.Frame) {
	tb.Helper()
	if d := Diff(want, r.Up()); d != "" {
		tb.Errorf("upstream frames mismatch (-want +got):\n%s", d)
	}
}

// OfType returns the frames of type T in fs, in order: the text frames a
// processor pushed, say, without the lifecycle and metrics frames around
// them.
func OfType[T frames.Frame](fs []frames.Frame) []T {
	var out []T
	for _, f := range fs {
		if t, ok := f.(T); ok {
			out = append(out, t)
		}
	}
	return out
}
