package observers_test

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

// Observers watch every hop without being part of the pipeline; FirstSeen
// counts each frame once.
func ExampleFunc() {
	texts := 0
	count := observers.Func(func(e observers.Event) {
		if _, ok := e.Frame.(*frames.Text); ok && e.FirstSeen {
			texts++
		}
	})
	debug := &observers.Logger{Log: zap.NewNop(), Match: observers.Types(&frames.Text{})}
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}, pipeline.PassThrough{}), pipeline.TaskOptions{
		Observers: []observers.Observer{count, debug},
	})
	task.QueueFrames(&frames.Text{Text: "a"}, &frames.Text{Text: "b"})
	task.EndWhenDone()
	_ = task.Run(context.Background()) // observers are drained before Run returns
	fmt.Println(texts, "text frames")
	// Output:
	// 2 text frames
}
