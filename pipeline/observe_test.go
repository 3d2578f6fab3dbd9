package pipeline_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

type observerIface = observers.Observer

// observerFunc adapts a frame callback to an observer that sees pushes.
func observerFunc(fn func(frames.Frame)) observers.Observer {
	return observers.Func(func(e observers.Event) {
		if e.Kind == observers.Pushed {
			fn(e.Frame)
		}
	})
}

// A slow observer never slows the pipeline: its buffer drops the oldest
// events and counts them (failure mode 16).
func TestSlowObserverDoesNotSlowThePipeline(t *testing.T) {
	release := make(chan struct{})
	slow := observers.Func(func(observers.Event) { <-release })
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}), pipeline.TaskOptions{
		Observers: []observers.Observer{slow}, ObserverBuffer: 64, DrainTimeout: time.Second,
	})
	done := runTask(t, task)
	for range 1000 {
		task.QueueFrame(text("x"))
	}
	task.EndWhenDone()
	select {
	case <-task.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("a blocked observer stalled the pipeline")
	}
	close(release)
	waitDone(t, done, time.Second)
	if task.ObserverDrops() == 0 {
		t.Fatal("no drops counted")
	}
}

// Every event an observer misses is counted, whether it was dropped while
// the observer was full or discarded because it had not caught up when
// the drain deadline passed: only the event it was stuck on is not a drop.
func TestObserverDropsAccountForEveryMissedEvent(t *testing.T) {
	run := func(o observers.Observer, buffer int) *pipeline.Task {
		task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}, pipeline.PassThrough{}), pipeline.TaskOptions{
			Observers: []observers.Observer{o}, ObserverBuffer: buffer, DrainTimeout: 50 * time.Millisecond,
		})
		done := runTask(t, task)
		for range 1000 {
			task.QueueFrame(text("x"))
		}
		task.EndWhenDone()
		waitDone(t, done, 3*time.Second)
		return task
	}
	var events atomic.Int64
	counted := run(observers.Func(func(observers.Event) { events.Add(1) }), 1<<16)
	if counted.ObserverDrops() != 0 {
		t.Fatalf("an observer with room for every event dropped %d", counted.ObserverDrops())
	}
	release := make(chan struct{})
	stuck := run(observers.Func(func(observers.Event) { <-release }), 64)
	close(release)
	if got, want := stuck.ObserverDrops(), uint64(events.Load()-1); got != want {
		t.Fatalf("drops = %d, want %d (all %d events but the one the observer was stuck on)", got, want, events.Load())
	}
}

// Observers get every buffered event before the task finishes, including
// the End frame's last hops.
func TestObserversDrainBeforeFinish(t *testing.T) {
	var mu sync.Mutex
	var lastEnd bool
	obs := observers.Func(func(e observers.Event) {
		time.Sleep(10 * time.Microsecond)
		mu.Lock()
		_, lastEnd = e.Frame.(*frames.End)
		mu.Unlock()
	})
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}, pipeline.PassThrough{}), pipeline.TaskOptions{Observers: []observers.Observer{obs}})
	done := runTask(t, task)
	for range 100 {
		task.QueueFrame(text("x"))
	}
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if !lastEnd {
		t.Fatal("the last event delivered was not End's")
	}
}

// An observer added while the task runs starts receiving events, even when
// the task started with none (Pipecat #5860).
func TestAddObserverWhileRunning(t *testing.T) {
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}), pipeline.TaskOptions{})
	up := started(task)
	done := runTask(t, task)
	<-up
	var texts atomic.Int32
	task.AddObserver(observerFunc(func(f frames.Frame) {
		if _, ok := f.(*frames.Text); ok {
			texts.Add(1)
		}
	}))
	task.QueueFrame(text("x"))
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	// One push into the processor, one out of it.
	if got := texts.Load(); got != 2 {
		t.Fatalf("observer saw %d text pushes, want 2", got)
	}
}

// FirstSeen is true exactly once per frame, so observers need no id sets.
func TestFirstSeenOncePerFrame(t *testing.T) {
	var firsts, pushes atomic.Int32
	obs := observers.Func(func(e observers.Event) {
		if _, ok := e.Frame.(*frames.Text); ok && e.Kind == observers.Pushed {
			pushes.Add(1)
			if e.FirstSeen {
				firsts.Add(1)
			}
		}
	})
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}, pipeline.PassThrough{}, pipeline.PassThrough{}), pipeline.TaskOptions{Observers: []observers.Observer{obs}})
	done := runTask(t, task)
	task.QueueFrames(text("a"), text("b"))
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	if firsts.Load() != 2 || pushes.Load() != 8 {
		t.Fatalf("firsts=%d pushes=%d, want 2 and 8", firsts.Load(), pushes.Load())
	}
}

// The idle timeout sees activity anywhere in the pipeline, even frames a
// processor swallows, and cancels the task once activity stops.
func TestIdleTimeoutSeesActivityAnywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		swallow := procFunc(func(_ ctxT, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
			if _, ok := f.(*frames.UserSpeaking); ok {
				h.Consume()
			}
			return nil
		})
		task := pipeline.NewTask(pipeline.New(swallow), pipeline.TaskOptions{IdleTimeout: time.Second})
		var idleAt time.Duration
		task.OnIdleTimeout(func() { idleAt = task.Clock().Now() })
		done := runTask(t, task)
		for range 5 {
			time.Sleep(500 * time.Millisecond)
			task.QueueFrame(&frames.UserSpeaking{})
		}
		<-done
		// Last activity at 2.5s, so idle at 3.5s.
		if idleAt < 3500*time.Millisecond || idleAt > 3600*time.Millisecond {
			t.Fatalf("idle fired at %v, want 3.5s", idleAt)
		}
	})
}

// Heartbeats are ordered frames: a job holding the ordered lane stalls
// them, and the heartbeat timeout fires.
func TestHeartbeatTimeoutFiresWhenOrderedLaneStalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBlocker()
		task := pipeline.NewTask(pipeline.New(b), pipeline.TaskOptions{
			Heartbeats: true, HeartbeatPeriod: 100 * time.Millisecond, HeartbeatMonitor: time.Second, IdleTimeout: -1,
		})
		fired := make(chan time.Duration, 10)
		task.OnHeartbeatTimeout(func() { fired <- task.Clock().Now() })
		done := runTask(t, task)
		time.Sleep(2 * time.Second)
		select {
		case <-fired:
			t.Fatal("heartbeat timeout fired while heartbeats flowed")
		default:
		}
		task.QueueFrame(text("block"))
		<-b.running
		at := <-fired
		if at < 3*time.Second || at > 3200*time.Millisecond {
			t.Fatalf("heartbeat timeout at %v, want about 3s", at)
		}
		close(b.release)
		task.EndWhenDone()
		<-done
	})
}

type ctxT = context.Context

// pairedProcessor comes with its observer.
type pairedProcessor struct {
	pipeline.PassThrough
	o *countingObserver
}

func (p *pairedProcessor) Observer() observers.Observer { return p.o }

// countingObserver counts the Start frames it sees processed.
type countingObserver struct{ starts atomic.Int32 }

func (c *countingObserver) Observe(e observers.Event) {
	if _, ok := e.Frame.(*frames.Start); ok && e.Kind == observers.Processed {
		c.starts.Add(1)
	}
}

// A processor that provides an observer gets it added by the task, once,
// even when the user also added it by hand.
func TestTaskAddsTheObserverAProcessorProvidesOnce(t *testing.T) {
	o := &countingObserver{}
	p := &pairedProcessor{o: o}
	task := pipeline.NewTask(pipeline.New(p), pipeline.TaskOptions{Observers: []observers.Observer{o}})
	task.OnStarted(func() { task.QueueFrame(&frames.End{}) })
	if err := waitDone(t, runTask(t, task), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := o.starts.Load(); got != 1 {
		t.Fatalf("observer saw Start processed %d times, want 1", got)
	}
}
