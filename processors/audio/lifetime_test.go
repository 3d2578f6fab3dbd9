package audio

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// goroutinesIn counts the goroutines whose stack runs through fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			n++
		}
	}
	return n
}

// The stop timer's goroutine is background work of the task: it runs
// while the task does, and has stopped by the time Run returns, whether
// the task was cancelled or ended.
func TestTurnTrackerTimerEndsWithTheTask(t *testing.T) {
	const timer = "(*TurnTracker).Setup.func1"
	for _, tc := range []struct {
		name string
		end  func(*pipeline.Task)
	}{
		{"cancel", func(task *pipeline.Task) { task.Cancel("test") }},
		{"end", func(task *pipeline.Task) { task.EndWhenDone() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := pipeline.NewTask(pipeline.New(NewTurnTracker(TurnTrackerOptions{})), pipeline.TaskOptions{})
			started := make(chan struct{})
			task.OnStarted(func() { close(started) })
			done := make(chan error, 1)
			go func() { done <- task.Run(context.Background()) }()
			ended := false
			defer func() {
				if !ended { // a failed check: leave nothing running for the next case
					task.Cancel("test failed")
					<-done
				}
			}()
			<-started
			// A turn in progress, its stop armed on the timer. The frames
			// are queued, so the tracker sees them a moment later.
			task.QueueFrame(&frames.VADUserStartedSpeaking{})
			task.QueueFrame(&frames.VADUserStoppedSpeaking{})
			n := 0
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if n = goroutinesIn(timer); n == 1 {
					break
				}
			}
			if n != 1 {
				t.Fatalf("%d timer goroutines while the task runs, want 1", n)
			}
			ended = true
			tc.end(task)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the task did not finish")
			}
			if n := goroutinesIn(timer); n != 0 {
				t.Fatalf("%d timer goroutines after Run returned, want 0", n)
			}
		})
	}
}
