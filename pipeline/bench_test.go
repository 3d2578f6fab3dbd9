package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

// BenchmarkHops pushes b.N text frames, allocated before the timer starts,
// through ten pass-through processors. Allocations per op are the
// runtime's own per-frame cost across all ten hops: the target is zero.
func BenchmarkHops(b *testing.B) {
	b.Run("observers=0", func(b *testing.B) { benchmarkHops(b, pipeline.TaskOptions{}) })
	// A slow observer (1 ms per event) is full nearly all the time: the
	// target is that it costs the hops at most 5%.
	slow := observers.Func(func(observers.Event) { time.Sleep(time.Millisecond) })
	b.Run("observers=slow", func(b *testing.B) {
		benchmarkHops(b, pipeline.TaskOptions{Observers: []observers.Observer{slow}, DrainTimeout: time.Millisecond})
	})
}

func benchmarkHops(b *testing.B, opts pipeline.TaskOptions) {
	const hops = 10
	var procs []pipeline.Processor
	for range hops {
		procs = append(procs, pipeline.PassThrough{})
	}
	task := pipeline.NewTask(pipeline.New(procs...), opts)
	arrived := make(chan struct{}, 1)
	want := 0
	seen := 0
	pipeline.OnDownstream(task, func(*frames.Text) {
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
	task.EndWhenDone()
	<-done
}
