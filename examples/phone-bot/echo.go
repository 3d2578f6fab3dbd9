package main

import (
	"context"
	"iter"
	"strings"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// echo is the offline stand-in for a model (as in examples/voice-bot): it
// repeats the caller's last words, streamed word by word like a model, so
// the call's loop (STT, turns, TTS, barge-in) works without any account.
type echo struct{}

// Model implements frames.Modeler.
func (echo) Model() string { return "echo" }

// Stream implements llm.Provider.
func (echo) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		said := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if m := req.Messages[i]; m.Role == "user" {
				said = strings.TrimSpace(m.Content)
				break
			}
		}
		answer := "I did not catch anything."
		if said != "" {
			answer = "You said: " + strings.TrimRight(said, ".!? ") + "."
		}
		for i, w := range strings.Fields(answer) {
			if ctx.Err() != nil {
				return
			}
			if i > 0 {
				w = " " + w
			}
			if !yield(llm.TextEvent(w), nil) {
				return
			}
		}
	}
}
