package pipeline_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
)

// losslessCounter counts the Text frames pushed to it, slowly, and asks
// for every event it wants.
type losslessCounter struct {
	n atomic.Int64
}

func (c *losslessCounter) Observe(e observers.Event) {
	if _, ok := e.Frame.(*frames.Text); ok && e.Kind == observers.Pushed {
		time.Sleep(50 * time.Microsecond)
		c.n.Add(1)
	}
}
func (*losslessCounter) Lossless() bool { return true }

// A lossless observer (one that turns frames into messages a client must
// get) sees every event even when it is slower than the pipeline and its
// buffer is small: the pipeline waits for it instead of dropping. A plain
// observer in the same task still drops, and the task still ends.
func TestALosslessObserverSeesEveryEventWhileOthersDrop(t *testing.T) {
	lossless := &losslessCounter{}
	release := make(chan struct{})
	plain := observers.Func(func(observers.Event) { <-release })
	task := pipeline.NewTask(pipeline.New(pipeline.PassThrough{}, pipeline.PassThrough{}), pipeline.TaskOptions{
		Observers: []observers.Observer{lossless, plain}, ObserverBuffer: 16, DrainTimeout: 5 * time.Second,
	})
	done := runTask(t, task)
	const frames = 2000
	for range frames {
		task.QueueFrame(text("x"))
	}
	task.EndWhenDone()
	go func() { time.Sleep(200 * time.Millisecond); close(release) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the task did not end")
	}
	// Each Text is pushed by the task into the first node and by each of
	// the two nodes on: three pushes per frame.
	if got := lossless.n.Load(); got != 3*frames {
		t.Errorf("the lossless observer saw %d pushes of %d frames, want %d", got, frames, 3*frames)
	}
	if task.ObserverDrops() == 0 {
		t.Error("the plain observer dropped nothing; the test did not fill its buffer")
	}
}
