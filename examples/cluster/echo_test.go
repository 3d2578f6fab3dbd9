package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

func TestEchoSendsTheUsersAudioBackAsTheBots(t *testing.T) {
	task := pipeline.NewTask(pipeline.New(&echo{}), pipeline.TaskOptions{})
	got := make(chan frames.Frame, 4)
	pipeline.OnDownstream(task, func(f frames.Frame) {
		switch f.(type) {
		case *frames.InputAudioRaw, *frames.OutputAudioRaw:
			got <- f
		}
	})
	pcm := make([]byte, 640)
	task.QueueFrame(&frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 16000, Channels: 1}})
	task.EndWhenDone()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := task.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var in, out int
	for len(got) > 0 {
		switch f := (<-got).(type) {
		case *frames.InputAudioRaw:
			in++
		case *frames.OutputAudioRaw:
			out++
			if f.SampleRate != 16000 || &f.PCM[0] != &pcm[0] {
				t.Error("the echo changed the audio or copied it")
			}
		}
	}
	if in != 1 || out != 1 {
		t.Errorf("%d input and %d output frames came out, want 1 and 1", in, out)
	}
}

func TestWorkerRefusesAnUnknownBot(t *testing.T) {
	var stderr strings.Builder
	err := workerCommand(context.Background(), []string{"-bot", "parrot"}, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), `-bot "parrot"`) {
		t.Errorf("worker -bot parrot: %v", err)
	}
}
