package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// A processor sees Start before anything else, even a system frame that a
// neighbour pushed to it during setup (failure mode 4).
func TestStartIsProcessedFirstEvenAfterEarlyPushes(t *testing.T) {
	rec := &sink{}
	early := &setupPusher{}
	task := pipeline.NewTask(pipeline.New(early, rec), pipeline.TaskOptions{})
	up := started(task)
	done := runTask(t, task)
	<-up
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	got := rec.names("EndFrame")
	want := []string{"StartFrame", "UserSpeakingFrame", "Text:early"}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

// setupPusher pushes a system and an ordered frame during Setup, before
// the pipeline has started.
type setupPusher struct {
	pipeline.PassThrough
	out pipeline.Outlet
}

func (p *setupPusher) Setup(_ context.Context, s pipeline.Setup) error {
	s.Attach(&p.out)
	p.out.Push(text("early"), frames.Downstream)
	p.out.Push(&frames.UserSpeaking{}, frames.Downstream)
	return nil
}

// While a job holds the ordered lane, system frames overtake the ordered
// frames queued behind it; within each lane the order is FIFO.
func TestSystemFramesOvertakeOrderedOnesFIFOWithinLanes(t *testing.T) {
	b := newBlocker()
	rec := &sink{}
	task := pipeline.NewTask(pipeline.New(b, rec), pipeline.TaskOptions{})
	up := started(task)
	done := runTask(t, task)
	<-up
	task.QueueFrames(text("block"), text("o1"), text("o2"))
	<-b.running
	waitFor(t, func() bool { return len(rec.texts(frames.Downstream)) == 1 })
	task.QueueFrames(&frames.UserSpeaking{}, &frames.BotSpeaking{})
	waitFor(t, func() bool { return len(rec.names("StartFrame")) == 3 })
	close(b.release)
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	got := rec.names("StartFrame", "EndFrame")
	want := []string{"Text:block", "UserSpeakingFrame", "BotSpeakingFrame", "Text:o1", "Text:o2"}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

// Frames keep their order through many hops, in both directions.
func TestFIFOThroughManyHopsBothDirections(t *testing.T) {
	top := &sink{}
	bottom := &bounce{}
	procs := []pipeline.Processor{top}
	for range 8 {
		procs = append(procs, pipeline.PassThrough{})
	}
	procs = append(procs, bottom)
	task := pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{})
	done := runTask(t, task)
	var want []string
	for i := range 500 {
		s := string(rune('a'+i%26)) + string(rune('0'+i%10))
		want = append(want, s)
		task.QueueFrame(text(s))
	}
	waitFor(t, func() bool { return len(top.texts(frames.Upstream)) == len(want) })
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	if got := top.texts(frames.Downstream); !slices.Equal(got, want) {
		t.Fatalf("downstream order broken: got %d frames", len(got))
	}
	if got := top.texts(frames.Upstream); !slices.Equal(got, want) {
		t.Fatalf("upstream order broken: got %d frames", len(got))
	}
}

// bounce sends a copy of every text frame back upstream.
type bounce struct{}

func (bounce) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if t, ok := f.(*frames.Text); ok && dir == frames.Downstream {
		h.Push(&frames.Text{Text: t.Text}, frames.Upstream)
	}
	return nil
}

// Nested pipelines are flattened: frames pass through every child once,
// in order.
func TestNestedPipelinesRunEveryChildInOrder(t *testing.T) {
	var seen []string
	tag := func(name string) pipeline.Processor {
		return procFunc(func(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
			if _, ok := f.(*frames.Text); ok {
				seen = append(seen, name) // one frame at a time passes; no race
			}
			return nil
		})
	}
	inner := pipeline.New(tag("b"), pipeline.New(tag("c"), tag("d")))
	rec := &sink{}
	task := pipeline.NewTask(pipeline.New(tag("a"), inner, pipeline.New(), tag("e"), rec), pipeline.TaskOptions{})
	done := runTask(t, task)
	task.QueueFrame(text("x"))
	task.EndWhenDone()
	waitDone(t, done, 5*time.Second)
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(seen, want) {
		t.Fatalf("visited %v, want %v", seen, want)
	}
	if got := rec.texts(frames.Downstream); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("sink saw %v", got)
	}
}

// Every external injection shares the one ordered ingress, so the End that
// a request from inside the pipeline (EndTask) asks for cannot overtake a
// frame the application queued before the request (failure mode 18). To
// make the race certain, the task's own goroutine is held in an error
// handler while "after" is queued and the EndTask is sent: when the handler
// returns, the task finds the request with "after" still in the ingress.
func TestExternalInjectionsShareOneIngress(t *testing.T) {
	rec := &sink{}
	proceed, sent := make(chan struct{}), make(chan struct{})
	ender := procFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if t, ok := f.(*frames.Text); ok && t.Text == "end" {
			h.PushError(errors.New("hold the task's loop"))
			<-proceed
			h.Push(&frames.EndTask{Reason: "asked"}, frames.Upstream)
			close(sent)
		}
		return nil
	})
	task := pipeline.NewTask(pipeline.New(ender, rec), pipeline.TaskOptions{})
	task.OnError(func(*frames.Error) {
		task.QueueFrame(text("after"))
		close(proceed)
		<-sent
	})
	done := runTask(t, task)
	task.QueueFrames(text("1"), text("end"))
	if err := waitDone(t, done, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	want := []string{"StartFrame", "Text:1", "Text:end", "Text:after", "EndFrame"}
	if got := rec.names(); !slices.Equal(got, want) {
		t.Fatalf("sink saw %v, want %v", got, want)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
