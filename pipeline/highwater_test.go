package pipeline_test

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

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

// A processor whose inbox keeps growing is named in a warning at 1024
// queued frames and again each time the depth doubles, not once per frame.
func TestAGrowingInboxIsLoggedAsItDoubles(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	b := newBlocker()
	task := pipeline.NewTask(pipeline.New(b), pipeline.TaskOptions{Logger: zap.New(core)})
	done := runTask(t, task)
	task.QueueFrame(text("block"))
	<-b.running
	for range 3000 {
		task.QueueFrame(text("x"))
	}
	waitFor(t, func() bool { return task.QueueHighWater() >= 3000 })
	close(b.release)
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	var depths []int64
	for _, e := range logs.FilterMessage("the processor is falling behind: frames are piling up in its inbox").All() {
		depths = append(depths, e.ContextMap()["queued"].(int64))
	}
	if len(depths) != 2 || depths[0] != 1024 || depths[1] != 2048 {
		t.Errorf("warned at depths %v, want [1024 2048]", depths)
	}
}
