package uibus

import (
	"context"
	"testing"
	"time"

	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/pipeline"
)

// The adapters are tested over every bus with package bustest's harness
// (bustest.Each), as package bus tests its calls: in-process, and NATS
// with an embedded server.

// testOptions beat fast, so a dead callee is seen within 200 ms, and cap
// payloads at 4 KiB.
var testOptions = bustest.Options()

// runTask runs task, named what in the failures, until the test ends,
// and returns once it has started. At the end the task is ended, and
// cancelled if it has not ended within bustest.Wait.
func runTask(t *testing.T, task *pipeline.Task, what string) {
	t.Helper()
	started := make(chan struct{})
	task.OnStarted(func() { close(started) })
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	bustest.Within(t, started, bustest.Wait, what+" started")
	t.Cleanup(func() {
		task.EndWhenDone()
		select {
		case <-done:
		case <-time.After(bustest.Wait):
			task.Cancel("test over")
			<-done
		}
	})
}
