package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

// passThrough is the workloads' pass-through processor (bench/WORKLOADS.md): it counts frames of
// the workload's data type and forwards everything.
type passThrough struct {
	isData func(frames.Frame) bool
	count  atomic.Int64 // read by the benchmark while the node runs
}

func (p *passThrough) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if p.isData(f) {
		p.count.Add(1)
	}
	return nil
}

func isText(f frames.Frame) bool  { _, ok := f.(*frames.Text); return ok }
func isAudio(f frames.Frame) bool { _, ok := f.(*frames.InputAudioRaw); return ok }

// rig is a task around N pass-through processors (plus extras), started
// and waiting at the sink.
type rig struct {
	task  *pipeline.Task
	procs []*passThrough
	done  chan error
}

func newRig(n int, isData func(frames.Frame) bool, extra []pipeline.Processor, opts pipeline.TaskOptions, onSink func(frames.Frame)) *rig {
	r := &rig{done: make(chan error, 1)}
	var procs []pipeline.Processor
	for range n {
		p := &passThrough{isData: isData}
		r.procs = append(r.procs, p)
		procs = append(procs, p)
	}
	procs = append(procs, extra...)
	r.task = pipeline.NewTask(pipeline.New(procs...), opts)
	pipeline.OnDownstream(r.task, onSink)
	up := make(chan struct{})
	r.task.OnStarted(func() { close(up) })
	go func() { r.done <- r.task.Run(context.Background()) }()
	<-up // timing starts only after Start has reached the sink
	return r
}

func (r *rig) last() *passThrough { return r.procs[len(r.procs)-1] }

func measure(workload string, n int) Result {
	switch workload {
	case "W1":
		return w1(n, nil)
	case "W1-slow-observer":
		slow := observers.Func(func(observers.Event) { time.Sleep(time.Millisecond) })
		return w1(n, []observers.Observer{slow})
	case "W2":
		return w2(n)
	case "W3":
		return w3(n)
	case "W4":
		return w4(n)
	}
	fail(fmt.Errorf("unknown workload %q", workload))
	return Result{}
}

func w1(n int, obs []observers.Observer) Result {
	const count = 100_000
	rssStart := maxRSSKB()
	endAt := make(chan time.Time, 1)
	// A slow observer is not waited for at the end: its backlog is not
	// part of the workload.
	r := newRig(n, isText, nil, pipeline.TaskOptions{Observers: obs, DrainTimeout: time.Millisecond}, func(f frames.Frame) {
		if _, ok := f.(*frames.End); ok {
			endAt <- time.Now()
		}
	})
	fs := make([]*frames.Text, count)
	for i := range fs {
		fs[i] = &frames.Text{Text: "hello"}
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	for _, f := range fs {
		r.task.QueueFrame(f)
	}
	r.task.QueueFrame(&frames.End{})
	t1 := <-endAt
	cpu := cpuTime() - cpu0
	<-r.done
	wall := t1.Sub(t0)
	us := float64(wall.Microseconds())
	res := Result{Workload: "W1", N: n, OK: r.last().count.Load() == count,
		FramesPerS:          f64(count / wall.Seconds()),
		USPerFrame:          f64(us / count),
		USPerFramePerHop:    f64(us / count / float64(n)),
		CPUUSPerFramePerHop: f64(float64(cpu.Microseconds()) / count / float64(n)),
		RSSStartKB:          f64(rssStart),
		RSSPeakKB:           f64(maxRSSKB()),
	}
	if obs != nil {
		res.Workload = "W1-slow-observer"
	}
	return res
}

func w2(n int) Result {
	const warmup, iterations = 100, 10_000
	rssStart := maxRSSKB()
	arrived := make(chan time.Time, 1)
	r := newRig(n, isText, nil, pipeline.TaskOptions{}, func(f frames.Frame) {
		if _, ok := f.(*frames.Text); ok {
			arrived <- time.Now()
		}
	})
	lat := make([]time.Duration, 0, iterations)
	var cpu0 time.Duration
	for i := range warmup + iterations {
		if i == warmup {
			cpu0 = cpuTime()
		}
		f := &frames.Text{Text: "hello"}
		t0 := time.Now()
		r.task.QueueFrame(f)
		t1 := <-arrived
		if i >= warmup {
			lat = append(lat, t1.Sub(t0))
		}
	}
	cpu := cpuTime() - cpu0
	r.task.EndWhenDone()
	<-r.done
	slices.Sort(lat)
	pct := func(p float64) *float64 { return f64(float64(lat[int(p*float64(len(lat)))].Nanoseconds()) / 1000) }
	return Result{Workload: "W2", N: n, OK: r.last().count.Load() == warmup+iterations,
		P50US: pct(0.50), P90US: pct(0.90), P99US: pct(0.99),
		CPUUSPerIter: f64(float64(cpu.Microseconds()) / iterations),
		RSSStartKB:   f64(rssStart), RSSPeakKB: f64(maxRSSKB()),
	}
}

// playback stands for an output transport: while blocking, a data frame
// is "played" by a job that waits until its processing is cancelled, so
// the frames behind it queue in the ordered lane. The interruption cancels
// it; from then on it forwards everything.
type playback struct{ blocking bool }

func (p *playback) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	switch f.(type) {
	case *frames.Start:
		p.blocking = true
	case *frames.Interruption:
		p.blocking = false
	case *frames.Text:
		if p.blocking {
			h.Consume()
			h.Go(func(ctx context.Context, _ pipeline.Pusher) error {
				<-ctx.Done()
				return nil
			})
		}
	}
	return nil
}

func w3(n int) Result {
	const queued = 10_000
	rssStart := maxRSSKB()
	interruptAt := make(chan time.Time, 1)
	endAt := make(chan struct{})
	var stale, after int
	r := newRig(n, isText, []pipeline.Processor{&playback{}}, pipeline.TaskOptions{}, func(f frames.Frame) {
		switch f := f.(type) {
		case *frames.Interruption:
			interruptAt <- time.Now()
		case *frames.Text:
			if f.Text == "queued" {
				stale++
			} else if f.Text == "after" {
				after++
			}
		case *frames.End:
			close(endAt)
		}
	})
	for range queued {
		r.task.QueueFrame(&frames.Text{Text: "queued"})
	}
	for r.procsCount() < queued {
		time.Sleep(100 * time.Microsecond)
	}
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	r.task.QueueFrame(&frames.Interruption{})
	t1 := <-interruptAt
	r.task.QueueFrame(&frames.Text{Text: "after"})
	r.task.QueueFrame(&frames.End{})
	<-endAt
	<-r.done
	return Result{Workload: "W3", N: n, OK: stale == 0 && after == 1,
		InterruptLatencyUS: f64(float64(t1.Sub(t0).Nanoseconds()) / 1000),
		Flushed:            f64(queued - float64(stale)),
		StaleDelivered:     f64(float64(stale)),
		RSSStartKB:         f64(rssStart), RSSPeakKB: f64(maxRSSKB()),
	}
}

// procsCount reads the N-th pass-through's count.
func (r *rig) procsCount() int64 { return r.last().count.Load() }

func w4(n int) Result {
	const count = 3000
	rssStart := maxRSSKB()
	payload := make([]byte, 640)
	endAt := make(chan time.Time, 1)
	r := newRig(n, isAudio, nil, pipeline.TaskOptions{}, func(f frames.Frame) {
		if _, ok := f.(*frames.End); ok {
			endAt <- time.Now()
		}
	})
	cpu0 := cpuTime()
	t0 := time.Now()
	for range count {
		r.task.QueueFrame(&frames.InputAudioRaw{Audio: frames.Audio{PCM: payload, SampleRate: 16000, Channels: 1}})
	}
	r.task.QueueFrame(&frames.End{})
	t1 := <-endAt
	cpu := cpuTime() - cpu0
	<-r.done
	rtf := t1.Sub(t0).Seconds() / 60
	return Result{Workload: "W4", N: n, OK: r.last().count.Load() == count,
		RTF: f64(rtf), XRealtime: f64(1 / rtf), CPURTF: f64(cpu.Seconds() / 60),
		RSSStartKB: f64(rssStart), RSSPeakKB: f64(maxRSSKB()),
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func maxRSSKB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 0
	}
	return float64(ru.Maxrss)
}
