package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// Ending the runner's context ends every task gracefully, and cancels the
// ones that are still stuck after the grace period.
func TestRunnerEndsGracefullyThenCancels(t *testing.T) {
	b := newBlocker()
	stuck := pipeline.NewTask(pipeline.New(b), pipeline.TaskOptions{})
	fine := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}), pipeline.TaskOptions{})
	var fineReason, stuckReason string
	fine.OnFinished(func(r string) { fineReason = r })
	stuck.OnFinished(func(r string) { stuckReason = r })
	stuck.QueueFrame(&frames.Text{Text: "block"})
	ctx, cancel := context.WithCancel(context.Background())
	r := &pipeline.Runner{GracePeriod: 100 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, stuck, fine) }()
	<-b.running
	cancel()
	if err := waitDone(t, done, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if fineReason != "ended" || stuckReason != "cancelled: grace period over" {
		t.Fatalf("reasons: fine=%q stuck=%q", fineReason, stuckReason)
	}
}
