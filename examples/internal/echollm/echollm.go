// Package echollm is the examples' offline stand-in for a model: a
// provider that repeats the user's last message, streamed word by word
// like a real model, so a voice loop (STT, turns, TTS, barge-in) can be
// tried without any account. The voice bot and the phone bot use it.
package echollm

import (
	"context"
	"iter"
	"strings"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// Provider is the echo model.
type Provider struct{}

// Model implements frames.Modeler.
func (Provider) Model() string { return "echo" }

// Stream implements llm.Provider.
func (Provider) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
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
