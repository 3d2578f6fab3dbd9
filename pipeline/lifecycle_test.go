package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// An End queued behind a slow frame survives an interruption and still
// reaches the end (failure mode 1).
func TestEndSurvivesInterruption(t *testing.T) {
	b := newBlocker()
	rec := &sink{}
	inside := &outKeeper{}
	task := pipeline.NewTask(pipeline.New(inside, b, rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrames(text("block"), text("dropped"), &frames.End{})
	<-b.running
	// The ingress takes nothing after End, so the request comes from inside.
	inside.out.Push(&frames.InterruptionTask{}, frames.Upstream)
	if err := waitDone(t, done, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := rec.names("StartFrame"); !slices.Contains(got, "EndFrame") || slices.Contains(got, "Text:dropped") {
		t.Fatalf("sink saw %v; want End and no flushed text", got)
	}
	select {
	case <-b.cancelled:
	default:
		t.Fatal("the in-flight interruptible job was not cancelled")
	}
}

// outKeeper has an outlet so a test can push from inside the pipeline.
type outKeeper struct {
	pipeline.PassThrough
	out pipeline.Outlet
}

func (o *outKeeper) Setup(_ context.Context, s pipeline.Setup) error { s.Attach(&o.out); return nil }

// A processor that never forwards End cannot keep Cancel from finishing
// the task within the cancel timeout (failure mode 2).
func TestCancelPreemptsStuckEnd(t *testing.T) {
	swallow := procFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if _, ok := f.(*frames.End); ok {
			h.Consume()
		}
		return nil
	})
	task := pipeline.NewTask(pipeline.New(swallow), pipeline.TaskOptions{CancelTimeout: time.Second})
	up := started(task)
	done := runTask(t, task)
	<-up
	task.EndWhenDone()
	time.Sleep(20 * time.Millisecond)
	task.Cancel("stuck")
	if err := waitDone(t, done, 3*time.Second); err != nil {
		t.Fatal(err)
	}
}

// A stuck End is also ended by the optional End timeout.
func TestEndTimeoutCancelsAStuckEnd(t *testing.T) {
	b := newBlocker()
	task := pipeline.NewTask(pipeline.New(b), pipeline.TaskOptions{EndTimeout: 50 * time.Millisecond})
	done := runTask(t, task)
	task.QueueFrames(text("block"), &frames.End{})
	if err := waitDone(t, done, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	<-b.cancelled
}

// Cancel during setup, during start and during end all finish (failure
// mode 3).
func TestCancelDuringEveryPhase(t *testing.T) {
	t.Run("setup", func(t *testing.T) {
		// With the default 20 s setup timeout, only Cancel itself can end
		// this setup within the test's 3 s.
		slow := &slowSetup{}
		task := pipeline.NewTask(pipeline.New(slow), pipeline.TaskOptions{})
		done := runTask(t, task)
		task.Cancel("now")
		if err := waitDone(t, done, 3*time.Second); err != nil {
			t.Fatalf("err = %v, want nil for a cancelled task", err)
		}
	})
	t.Run("setup timeout", func(t *testing.T) {
		slow := &slowSetup{}
		task := pipeline.NewTask(pipeline.New(slow), pipeline.TaskOptions{SetupTimeout: 100 * time.Millisecond})
		if err := waitDone(t, runTask(t, task), 3*time.Second); !errors.Is(err, pipeline.ErrSetupTimeout) {
			t.Fatalf("err = %v, want ErrSetupTimeout", err)
		}
	})
	t.Run("setup, caller's context", func(t *testing.T) {
		slow := &slowSetup{}
		task := pipeline.NewTask(pipeline.New(slow), pipeline.TaskOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- task.Run(ctx) }()
		cancel()
		if err := waitDone(t, done, 3*time.Second); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("start", func(t *testing.T) {
		stuck := procFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
			if _, ok := f.(*frames.Start); ok {
				h.Consume() // Start never reaches the sink
			}
			return nil
		})
		task := pipeline.NewTask(pipeline.New(stuck), pipeline.TaskOptions{CancelTimeout: 200 * time.Millisecond})
		done := runTask(t, task)
		time.Sleep(10 * time.Millisecond)
		task.Cancel("now")
		if err := waitDone(t, done, 3*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("start timeout", func(t *testing.T) {
		stuck := procFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
			if _, ok := f.(*frames.Start); ok {
				h.Consume()
			}
			return nil
		})
		task := pipeline.NewTask(pipeline.New(stuck), pipeline.TaskOptions{StartTimeout: 50 * time.Millisecond, CancelTimeout: 50 * time.Millisecond})
		if err := waitDone(t, runTask(t, task), 3*time.Second); !errors.Is(err, pipeline.ErrStartTimeout) {
			t.Fatalf("err = %v, want ErrStartTimeout", err)
		}
	})
	t.Run("end", func(t *testing.T) {
		b := newBlocker()
		task := pipeline.NewTask(pipeline.New(b), pipeline.TaskOptions{})
		done := runTask(t, task)
		task.QueueFrames(text("block"), &frames.End{})
		<-b.running
		task.Cancel("now")
		if err := waitDone(t, done, 3*time.Second); err != nil {
			t.Fatal(err)
		}
	})
}

// slowSetup blocks in Setup until its context ends.
type slowSetup struct{ pipeline.PassThrough }

func (s *slowSetup) Setup(ctx context.Context, _ pipeline.Setup) error {
	<-ctx.Done()
	return ctx.Err()
}

// A job that holds the ordered lane forever cannot keep End from
// terminating, with the default options: every hold has a deadline
// (failure mode 6). The bubble's clock runs the default minute at once.
func TestHeldLaneWithEndTerminatesByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBlocker()
		b.ignoreCtx = true // holds the lane until released, whatever happens
		rec := &sink{}
		task := pipeline.NewTask(pipeline.New(b, rec), pipeline.TaskOptions{})
		done := runTask(t, task)
		task.QueueFrames(text("block"), text("after"), &frames.End{})
		<-b.running
		start := time.Now()
		err := <-done // fake time: the default minute, then the cancel timeout for the stuck job
		close(b.release)
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < time.Minute || waited > 2*time.Minute {
			t.Fatalf("the task ended after %v, want the default end timeout of 1m (plus the job's cancel wait)", waited)
		}
		if slices.Contains(rec.names(), "EndFrame") {
			t.Fatal("End reached the sink; the task should have been cancelled at the deadline")
		}
	})
}

// Releasing a hold is not a frame queued behind the hold: when a job ends,
// the ordered frames behind it flow at once, even when the node has gone
// to sleep meanwhile (failure mode 7).
func TestJobEndReleasesTheOrderedLane(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBlocker()
		rec := &sink{}
		task := pipeline.NewTask(pipeline.New(b, rec), pipeline.TaskOptions{})
		done := runTask(t, task)
		task.QueueFrames(text("block"), text("next"))
		<-b.running
		synctest.Wait() // every node is parked: only the release can wake the blocker's
		close(b.release)
		synctest.Wait()
		if got := rec.texts(frames.Downstream); !slices.Equal(got, []string{"block", "next"}) {
			t.Fatalf("after the release the sink saw %v, want [block next]", got)
		}
		task.EndWhenDone()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// An interruption cancels a slow interruptible job at once, even with an
// uninterruptible frame queued behind it (failure mode 8), and that frame
// survives (failure mode 9).
func TestInterruptionCancelsInFlightWorkAndKeepsUninterruptibleFrames(t *testing.T) {
	b := newBlocker()
	rec := &sink{}
	interrupter := &interruptOn{word: "stop"}
	task := pipeline.NewTask(pipeline.New(b, interrupter, rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	result := &frames.FunctionCallResult{FunctionCall: frames.FunctionCall{Name: "f", ToolCallID: "1"}}
	task.QueueFrames(text("block"), text("flushed"), result)
	<-b.running
	task.QueueFrame(&frames.InterruptionTask{})
	select {
	case <-b.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the interruption did not cancel the in-flight job")
	}
	waitFor(t, func() bool { return slices.Contains(rec.names(), "FunctionCallResultFrame") })
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	if slices.Contains(rec.texts(frames.Downstream), "flushed") {
		t.Fatal("an interruptible frame queued behind the job was not flushed")
	}
}

// interruptOn starts an interruption when it sees a text frame with word.
type interruptOn struct{ word string }

func (p *interruptOn) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if t, ok := f.(*frames.Text); ok && t.Text == p.word {
		h.Interrupt()
	}
	return nil
}

// A processor's own Interrupt flushes downstream queues, and the
// interruption travels both ways as a broadcast pair.
func TestProcessorInterruptGoesBothWays(t *testing.T) {
	top := &sink{}
	bottom := &sink{}
	task := pipeline.NewTask(pipeline.New(top, &interruptOn{word: "stop"}, bottom), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrame(text("stop"))
	waitFor(t, func() bool {
		return slices.Contains(top.names(), "InterruptionFrame") && slices.Contains(bottom.names(), "InterruptionFrame")
	})
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	var up, down *frames.Interruption
	for _, f := range top.frames {
		if i, ok := f.(*frames.Interruption); ok {
			up = i
		}
	}
	for _, f := range bottom.frames {
		if i, ok := f.(*frames.Interruption); ok {
			down = i
		}
	}
	if up.SiblingID != down.ID() || down.SiblingID != up.ID() {
		t.Fatalf("interruption copies are not siblings: up %d->%d, down %d->%d", up.ID(), up.SiblingID, down.ID(), down.SiblingID)
	}
}

// Two quick responses produced by jobs come out as balanced, ordered
// start/end pairs (failure mode 13).
func TestJobResponsesStayBracketed(t *testing.T) {
	responder := procFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if _, ok := f.(*frames.LLMRun); ok {
			h.Consume()
			h.Go(func(ctx context.Context, out pipeline.Pusher) error {
				out.Push(&frames.LLMFullResponseStart{}, frames.Downstream)
				time.Sleep(5 * time.Millisecond)
				out.Push(&frames.LLMText{Text: "hi"}, frames.Downstream)
				out.Push(&frames.LLMFullResponseEnd{}, frames.Downstream)
				return nil
			})
		}
		return nil
	})
	rec := &sink{}
	task := pipeline.NewTask(pipeline.New(responder, rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrames(&frames.LLMRun{}, &frames.LLMRun{}, &frames.End{})
	waitDone(t, done, 3*time.Second)
	got := rec.names("StartFrame", "EndFrame")
	want := []string{"LLMFullResponseStartFrame", "LLMTextFrame", "LLMFullResponseEndFrame", "LLMFullResponseStartFrame", "LLMTextFrame", "LLMFullResponseEndFrame"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A job that ignores its context cannot block teardown past the cancel
// timeout (failure mode 15).
func TestStubbornJobCannotBlockTeardown(t *testing.T) {
	b := newBlocker()
	b.ignoreCtx = true
	defer close(b.release) // let the goroutine go before goleak looks
	task := pipeline.NewTask(pipeline.New(b), pipeline.TaskOptions{CancelTimeout: 100 * time.Millisecond, JobCancelTimeout: 50 * time.Millisecond})
	done := runTask(t, task)
	task.QueueFrame(text("block"))
	<-b.running
	task.Cancel("bye")
	t0 := time.Now()
	waitDone(t, done, 3*time.Second)
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("teardown took %v", d)
	}
}

// A panic or an error in a processor becomes an upstream error frame, and
// the processor keeps handling frames.
func TestPanicsAndErrorsBecomeUpstreamErrors(t *testing.T) {
	flaky := procFunc(func(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if t, ok := f.(*frames.Text); ok {
			switch t.Text {
			case "panic":
				panic("boom")
			case "fail":
				return errors.New("bad input")
			}
		}
		return nil
	})
	rec := &sink{}
	task := pipeline.NewTask(pipeline.New(flaky, rec), pipeline.TaskOptions{})
	var errs []string
	task.OnError(func(e *frames.Error) { errs = append(errs, e.Err.Error()) })
	done := runTask(t, task)
	task.QueueFrames(text("panic"), text("fail"), text("ok"))
	waitFor(t, func() bool { return slices.Contains(rec.texts(frames.Downstream), "ok") })
	waitFor(t, func() bool { return task.ObserverDrops() == 0 && len(rec.texts(frames.Downstream)) == 3 })
	time.Sleep(20 * time.Millisecond)
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	if len(errs) != 2 || errs[0] != "panic while processing TextFrame: boom" || errs[1] != "bad input" {
		t.Fatalf("errors = %q", errs)
	}
}

// Stop drains like End but keeps processors set up; End cleans them up.
func TestStopKeepsProcessorsEndCleansUp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		last    frames.Frame
		cleaned bool
	}{{"end", &frames.End{}, true}, {"stop", &frames.Stop{}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &cleanupCounter{}
			task := pipeline.NewTask(pipeline.New(c), pipeline.TaskOptions{})
			done := runTask(t, task)
			task.QueueFrames(text("x"), tc.last)
			waitDone(t, done, 3*time.Second)
			if got := c.n.Load() == 1; got != tc.cleaned {
				t.Fatalf("cleaned up = %v, want %v", got, tc.cleaned)
			}
		})
	}
}

type cleanupCounter struct {
	pipeline.PassThrough
	n atomic.Int32
}

func (c *cleanupCounter) Cleanup(context.Context) error { c.n.Add(1); return nil }

// A permanent error makes its processor unusable and applies the policy.
func TestUnusableProcessorPolicy(t *testing.T) {
	broken := procFunc(func(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if _, ok := f.(*frames.Text); ok {
			return errors.Join(errors.New("auth rejected"), frames.ErrPermanent)
		}
		return nil
	})
	task := pipeline.NewTask(pipeline.New(broken), pipeline.TaskOptions{Unusable: pipeline.EndWhenUnusable})
	var reason string
	task.OnFinished(func(r string) { reason = r })
	done := runTask(t, task)
	task.QueueFrame(text("x"))
	waitDone(t, done, 3*time.Second)
	if reason != "ended" {
		t.Fatalf("finished with %q, want ended by policy", reason)
	}
}

// Handlers may stop the task from inside an event without deadlocking,
// and run in registration order (failure mode 17).
func TestHandlersRunInOrderAndMayCancelTheTask(t *testing.T) {
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}), pipeline.TaskOptions{})
	var order []int
	task.OnStarted(func() { order = append(order, 1) })
	task.OnStarted(func() { order = append(order, 2); task.Cancel("from handler") })
	task.OnStarted(func() { order = append(order, 3) })
	if err := waitDone(t, runTask(t, task), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int{1, 2, 3}) {
		t.Fatalf("order = %v", order)
	}
}

// Cancelling the context given to Run cancels the task.
func TestRunContextCancels(t *testing.T) {
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}), pipeline.TaskOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	up := started(task)
	done := make(chan error, 1)
	go func() { done <- task.Run(ctx) }()
	<-up
	cancel()
	if err := waitDone(t, done, 3*time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// A job that closes its response when cancelled (the LLM's end-of-response
// frame) has that frame pushed after the interruption, so the next
// processor does not flush it: responses stay bracketed across
// interruptions.
func TestFramesPushedByCancelledJobsFollowTheInterruption(t *testing.T) {
	streaming := make(chan struct{})
	responder := procFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if _, ok := f.(*frames.LLMRun); ok {
			h.Consume()
			h.Go(func(ctx context.Context, out pipeline.Pusher) error {
				out.Push(&frames.LLMFullResponseStart{}, frames.Downstream)
				defer out.Push(&frames.LLMFullResponseEnd{}, frames.Downstream)
				close(streaming)
				<-ctx.Done()
				return nil
			})
		}
		return nil
	})
	rec := &sink{}
	inside := &outKeeper{}
	task := pipeline.NewTask(pipeline.New(inside, responder, pipeline.PassThrough{}, rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrame(&frames.LLMRun{})
	<-streaming
	// The response start has gone through; only the end is still to come.
	waitFor(t, func() bool { return slices.Contains(rec.names(), "LLMFullResponseStartFrame") })
	inside.out.Push(&frames.InterruptionTask{}, frames.Upstream)
	waitFor(t, func() bool { return slices.Contains(rec.names(), "LLMFullResponseEndFrame") })
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	got := rec.names("StartFrame", "EndFrame")
	want := []string{"LLMFullResponseStartFrame", "InterruptionFrame", "LLMFullResponseEndFrame"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Flush returns once everything queued before it has gone through the
// pipeline, and gives up with ctx when a processor holds the lane.
func TestFlushWaitsForQueuedFrames(t *testing.T) {
	b := newBlocker()
	rec := &sink{}
	task := pipeline.NewTask(pipeline.New(b, rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrames(text("a"), text("block"), text("b"))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := task.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("flush with a held lane: %v", err)
	}
	close(b.release)
	if err := task.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.texts(frames.Downstream); !slices.Equal(got, []string{"a", "block", "b"}) {
		t.Fatalf("after flush the sink saw %v", got)
	}
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
}

// The processor that starts an interruption keeps its own queue: what
// waits there came from upstream (user input), not stale bot output.
func TestInterruptKeepsTheOriginsOwnQueue(t *testing.T) {
	release := make(chan struct{})
	origin := procFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		switch f := f.(type) {
		case *frames.Text:
			if f.Text == "block" {
				h.Go(func(context.Context, pipeline.Pusher) error { <-release; return nil })
			}
		case *frames.UserStartedSpeaking:
			h.Interrupt()
		}
		return nil
	})
	rec := &sink{}
	task := pipeline.NewTask(pipeline.New(origin, rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrames(text("block"), text("final transcription"), &frames.UserStartedSpeaking{})
	waitFor(t, func() bool { return slices.Contains(rec.names(), "InterruptionFrame") })
	close(release)
	waitFor(t, func() bool { return slices.Contains(rec.texts(frames.Downstream), "final transcription") })
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
}

type authError struct{}

func (authError) Error() string                  { return "401 unauthorized" }
func (authError) Category() frames.ErrorCategory { return frames.ErrorPermanent }

// Errors that classify themselves keep their category.
func TestErrorsClassifyThemselves(t *testing.T) {
	failing := procFunc(func(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if _, ok := f.(*frames.Text); ok {
			return fmt.Errorf("calling the model: %w", authError{})
		}
		return nil
	})
	task := pipeline.NewTask(pipeline.New(failing), pipeline.TaskOptions{})
	var got frames.ErrorCategory
	task.OnError(func(e *frames.Error) { got = e.Category })
	done := runTask(t, task)
	task.QueueFrame(text("x"))
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	if got != frames.ErrorPermanent {
		t.Fatalf("category = %v, want permanent", got)
	}
}

type ctxKey struct{}

// cleanupContext records the context its Cleanup was given.
type cleanupContext struct {
	pipeline.PassThrough
	value any
	err   error
}

func (c *cleanupContext) Cleanup(ctx context.Context) error {
	c.value, c.err = ctx.Value(ctxKey{}), ctx.Err()
	return nil
}

// Cleanup runs with the values of the context the task ran under (its
// logger, its trace span) even when that context was cancelled, and is
// not cancelled with it.
func TestCleanupKeepsTheRunContextsValues(t *testing.T) {
	c := &cleanupContext{}
	task := pipeline.NewTask(pipeline.New(c), pipeline.TaskOptions{})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "session-7"))
	done := make(chan error, 1)
	go func() { done <- task.Run(ctx) }()
	cancel()
	task.Cancel("test over")
	waitDone(t, done, 3*time.Second)
	if c.value != "session-7" || c.err != nil {
		t.Errorf("Cleanup saw value %v and err %v, want session-7 and nil", c.value, c.err)
	}
}
