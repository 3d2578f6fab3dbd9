package pipeline_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// A processor handles the frames it cares about; everything else passes
// through. This one replaces text with an upper-cased copy.
func ExampleProcessorFunc() {
	shout := pipeline.ProcessorFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
		if t, ok := f.(*frames.Text); ok {
			h.Consume()
			h.Push(&frames.Text{Text: strings.ToUpper(t.Text)}, dir)
		}
		return nil
	})
	task := pipeline.NewTask(pipeline.New(shout), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(t *frames.Text) { fmt.Println(t.Text) })
	task.QueueFrames(&frames.Text{Text: "hello"}, &frames.Text{Text: "world"})
	task.EndWhenDone()
	if err := task.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// HELLO
	// WORLD
}

// Slow work runs as a job that holds the ordered lane: the next ordered
// frame waits until the job is done, while system frames keep flowing.
func ExampleHandle_Go() {
	slow := pipeline.ProcessorFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
		if t, ok := f.(*frames.Text); ok {
			h.Consume()
			h.Go(func(ctx context.Context, out pipeline.Pusher) error {
				// An LLM or TTS request would go here, honouring ctx.
				out.Push(&frames.Text{Text: t.Text + " (done)"}, frames.Downstream)
				return nil
			})
		}
		return nil
	})
	task := pipeline.NewTask(pipeline.New(slow), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(t *frames.Text) { fmt.Println(t.Text) })
	task.QueueFrames(&frames.Text{Text: "first"}, &frames.Text{Text: "second"})
	task.EndWhenDone()
	_ = task.Run(context.Background())
	// Output:
	// first (done)
	// second (done)
}

// Parallel branches see every frame; what they emit is merged, and a frame
// that comes out of both branches is forwarded once.
func ExampleNewParallel() {
	tag := func(name string) pipeline.Processor {
		return pipeline.ProcessorFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
			if t, ok := f.(*frames.Text); ok && t.Text == "ping" {
				h.Push(&frames.Text{Text: "pong from " + name}, frames.Downstream)
				h.Consume()
			}
			return nil
		})
	}
	var got []string
	task := pipeline.NewTask(pipeline.New(
		pipeline.NewParallel(pipeline.New(tag("a")), pipeline.New(tag("b"))),
	), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(t *frames.Text) { got = append(got, t.Text) })
	task.QueueFrames(&frames.Text{Text: "ping"}, &frames.Text{Text: "shared"})
	task.EndWhenDone()
	_ = task.Run(context.Background())
	fmt.Println(len(got), "frames")
	// Output:
	// 3 frames
}
