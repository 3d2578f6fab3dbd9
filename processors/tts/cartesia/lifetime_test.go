package cartesia

import (
	"context"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/tts"
)

// The connection a TTS service warmed up lives as long as its task: when
// the task is cancelled or ends, the service closes the client and the
// connection's reader has stopped by the time Run returns.
func TestConnectionEndsWithTheServicesTask(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*pipeline.Task)
	}{
		{"cancel", func(task *pipeline.Task) { task.Cancel("test") }},
		{"end", func(task *pipeline.Task) { task.EndWhenDone() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, "hello.ws")
			defer f.close()
			c := newClient(f)
			task := pipeline.NewTask(pipeline.New(tts.NewService(c, tts.Options{})), pipeline.TaskOptions{})
			spoken := make(chan struct{}, 1)
			pipeline.OnDownstream(task, func(*frames.TTSStopped) { spoken <- struct{}{} })
			done := make(chan error, 1)
			go func() { done <- task.Run(context.Background()) }()
			var cn *conn
			for deadline := time.Now().Add(10 * time.Second); cn == nil; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the warm-up never connected")
				}
				cn = c.current()
			}
			// The script wants one generation on the connection.
			task.QueueFrame(&frames.TTSSpeak{Text: "Hello world."})
			select {
			case <-spoken:
			case <-time.After(10 * time.Second):
				t.Fatal("nothing was spoken")
			}
			tc.end(task)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the task did not finish")
			}
			if !cn.Dead() {
				t.Fatal("the connection's reader was still running when Run returned")
			}
		})
	}
}
