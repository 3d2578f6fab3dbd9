package pipeline_test

import (
	"context"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// BenchmarkHops pushes b.N text frames, allocated before the timer starts,
// through ten pass-through processors. Allocations per op are the
// runtime's own per-frame cost across all ten hops: the target is zero.
func BenchmarkHops(b *testing.B) {
	const hops = 10
	var procs []pipeline.Processor
	for range hops {
		procs = append(procs, pipeline.PassThrough{})
	}
	task := pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{})
	arrived := make(chan struct{}, 1)
	want := 0
	seen := 0
	task.OnReachedDownstream(pipeline.OfType[*frames.Text](), func(frames.Frame) {
		seen++
		if seen == want {
			arrived <- struct{}{}
		}
	})
	up := make(chan struct{})
	task.OnStarted(func() { close(up) })
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	<-up
	// Warm the queues up so their blocks exist before measuring.
	warm := 4096
	want = warm
	for range warm {
		task.QueueFrame(&frames.Text{Text: "hello"})
	}
	<-arrived
	fs := make([]*frames.Text, b.N)
	for i := range fs {
		fs[i] = &frames.Text{Text: "hello"}
	}
	seen, want = 0, b.N
	b.ReportAllocs()
	b.ResetTimer()
	for _, f := range fs {
		task.QueueFrame(f)
	}
	<-arrived
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/hops, "ns/hop")
	task.StopWhenDone()
	<-done
}
