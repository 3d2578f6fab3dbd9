package tmpcheck

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/espeak"
)

type counter struct{ n map[string]int }

func (c *counter) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	c.n[frames.TypeName(f)]++
	return nil
}

func TestEspeak(t *testing.T) {
	c := &counter{n: map[string]int{}}
	task := pipeline.NewTask(pipeline.New(tts.NewService(espeak.New(espeak.Options{}), tts.Options{}), c), pipeline.TaskOptions{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		task.QueueFrame(&frames.TTSSpeak{Text: "Hello there. How are you?"})
		time.Sleep(3 * time.Second)
		task.StopWhenDone()
	}()
	if err := task.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	fmt.Println(c.n)
}
