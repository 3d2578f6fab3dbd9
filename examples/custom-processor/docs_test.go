package main

// The code of docs/getting-started.md and docs/writing-a-processor.md,
// compiled and run here so the guides stay true to the API. Keep each
// piece as the page shows it.

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// docs/getting-started.md, "Your first pipeline".
func Example_gettingStarted() {
	greet := pipeline.ProcessorFunc(func(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
		if t, ok := f.(*frames.Text); ok {
			h.Consume()
			h.Push(&frames.Text{Text: "hello, " + t.Text}, dir)
		}
		return nil
	})
	task := pipeline.NewTask(pipeline.New(greet), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(t *frames.Text) {
		fmt.Println(t.Text) // hello, world
	})
	task.QueueFrame(&frames.Text{Text: "world"})
	task.EndWhenDone()
	if err := task.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	// Output: hello, world
}

// docs/writing-a-processor.md, rule 1.
type Redactor struct{ words []string }

func (r *Redactor) ProcessFrame(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	t, ok := f.(*frames.Transcription)
	if !ok {
		return nil // forwarded unchanged when we return
	}
	clean := *t                // frames are immutable once pushed: copy...
	clean.Base = frames.Base{} // ...with a fresh identity
	for _, w := range r.words {
		clean.Text = strings.ReplaceAll(clean.Text, w, "***")
	}
	h.Consume() // the original stops here
	h.Push(&clean, dir)
	return nil
}

// docs/writing-a-processor.md, "Testing".
func TestRedactor(t *testing.T) {
	res := pipelinetest.Run(t, &Redactor{words: []string{"secret"}}, pipelinetest.Options{
		Send: []frames.Frame{&frames.Transcription{Text: "the secret plan"}},
	})
	res.ExpectDown(t, &frames.Transcription{Text: "the *** plan"})
}

// docs/writing-a-processor.md, rule 2.
//
// Ticker sends a text frame downstream every period while the task runs.
type Ticker struct {
	out    pipeline.Outlet // a field: the zero value is ready
	period time.Duration
}

func (p *Ticker) Setup(ctx context.Context, s pipeline.Setup) error {
	s.Attach(&p.out)
	return p.out.Go("tick", func(ctx context.Context) error {
		t := time.NewTicker(p.period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				p.out.Push(&frames.Text{Text: "tick"}, frames.Downstream)
			}
		}
	})
}

func (p *Ticker) ProcessFrame(context.Context, *pipeline.Handle, frames.Frame, frames.Direction) error {
	return nil
}

// The Ticker's work runs while the task does and has stopped when Run
// returns (goleak, in TestMain, checks that no goroutine is left).
func TestTickerTicksUntilTheTaskEnds(t *testing.T) {
	ticks := make(chan struct{}, 100)
	task := pipeline.NewTask(pipeline.New(&Ticker{period: time.Millisecond}), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(*frames.Text) {
		select {
		case ticks <- struct{}{}:
		default:
		}
	})
	var end sync.Once
	pipeline.OnDownstream(task, func(*frames.Text) {
		if len(ticks) >= 3 {
			end.Do(task.EndWhenDone)
		}
	})
	if err := task.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(ticks) < 3 {
		t.Fatalf("%d ticks reached the end, want at least 3", len(ticks))
	}
}

// docs/writing-a-processor.md, rule 3.
type streamer struct{}

func (streamer) ProcessFrame(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.LLMContext:
		h.Consume()
		h.Go(func(ctx context.Context, out pipeline.Pusher) error {
			out.Push(&frames.LLMFullResponseStart{}, frames.Downstream)
			defer out.Push(&frames.LLMFullResponseEnd{}, frames.Downstream)
			return streamTokens(ctx, f, out) // honour ctx: an interruption cancels it
		})
	}
	return nil
}

func streamTokens(ctx context.Context, _ *frames.LLMContext, out pipeline.Pusher) error {
	for _, tok := range []string{"Hello", " there"} {
		if ctx.Err() != nil {
			return nil
		}
		out.Push(&frames.LLMText{Text: tok}, frames.Downstream)
	}
	return nil
}

func TestJobBracketsItsTokens(t *testing.T) {
	res := pipelinetest.Run(t, streamer{}, pipelinetest.Options{
		Send: []frames.Frame{&frames.LLMContext{}},
	})
	res.ExpectDown(t, &frames.LLMFullResponseStart{}, &frames.LLMText{Text: "Hello"},
		&frames.LLMText{Text: " there"}, &frames.LLMFullResponseEnd{})
}

// docs/writing-a-processor.md, rule 4.
func broadcastSpeaking(h *pipeline.Handle) {
	pipeline.Broadcast(h, func() *frames.BotStartedSpeaking { return &frames.BotStartedSpeaking{} })
}

// docs/writing-a-processor.md, rule 5.
type tone struct {
	block frames.Block[frames.OutputAudioRaw] // 50 frames per allocation
	pcm   frames.ByteBlock
}

func (t *tone) next() *frames.OutputAudioRaw {
	f := t.block.New()
	f.Audio = frames.Audio{PCM: t.pcm.Take(960), SampleRate: 24000, Channels: 1}
	return f
}

func TestToneFramesComeFromBlocks(t *testing.T) {
	var tn tone
	a, b := tn.next(), tn.next()
	if a == b || len(a.PCM) != 960 || len(b.PCM) != 960 {
		t.Fatalf("two frames %p %p with %d and %d bytes, want distinct frames of 960", a, b, len(a.PCM), len(b.PCM))
	}
	_ = broadcastSpeaking // compiled, not run: it needs a handle
}
