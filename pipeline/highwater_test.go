package pipeline_test

import (
	"testing"
	"time"

	"github.com/framewire/framewire/pipeline"
)

// A processor that falls behind shows in the task's queue high-water mark:
// the frames that waited in its inbox while a job held the ordered lane.
func TestQueueHighWaterShowsAProcessorThatFellBehind(t *testing.T) {
	b := newBlocker()
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}, b), pipeline.TaskOptions{})
	if got := task.QueueHighWater(); got != 0 {
		t.Fatalf("high water %d before the task ran, want 0", got)
	}
	done := runTask(t, task)
	task.QueueFrame(text("block"))
	<-b.running
	const waiting = 100
	for range waiting {
		task.QueueFrame(text("x"))
	}
	waitFor(t, func() bool { return task.QueueHighWater() >= waiting })
	close(b.release)
	task.EndWhenDone()
	waitDone(t, done, 3*time.Second)
	if got := task.QueueHighWater(); got < waiting || got > waiting+2 {
		t.Errorf("high water %d after %d frames waited behind a job, want %d to %d", got, waiting, waiting, waiting+2)
	}
}
