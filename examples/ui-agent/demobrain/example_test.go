package demobrain_test

import (
	"context"
	"fmt"

	"github.com/framewire/framewire/examples/ui-agent/demobrain"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

const page = `<ui_state>
- generic [ref=e20]:
  - main [ref=e1]:
    - list "Phone catalog" [cols=2] [ref=e2]:
      - listitem "Pixel 10" [ref=e3]:
        - paragraph "Google · 6.3″ display · $799" [ref=e4]
      - listitem "iPhone 17" [offscreen] [ref=e5]:
        - paragraph "Apple · 6.3″ display · $799" [offscreen] [ref=e6]
</ui_state>`

// The brain reads the page the way a model does, from the rendered
// <ui_state>, and decides on one tool call.
func ExampleDecide() {
	st, _ := demobrain.ParseUIState(page)
	call := demobrain.Decide("Where is the iPhone 17?", st, map[string]bool{demobrain.ReplyTool: true})
	r := call.Args.(demobrain.Reply)
	fmt.Println(call.Tool, r.ScrollTo, r.Highlight)
	fmt.Println(r.Answer)
	// Output:
	// reply e5 [e5]
	// The iPhone 17 is in row 1, column 2. I scrolled down to it. It starts at $799.
}

// As an llm.Provider the brain streams the call as a model would, so the
// LLM service runs it through the registered reply tool.
func ExampleBrain_Stream() {
	req := &frames.LLMContext{
		Messages: []frames.LLMMessage{llm.DeveloperMessage(page), llm.UserMessage("which phones are from Google?")},
		Tools:    []frames.LLMTool{{Name: demobrain.ReplyTool}},
	}
	for ev := range demobrain.New().Stream(context.Background(), req) {
		fmt.Println(ev.ToolCall.Name, ev.ToolCall.Arguments)
	}
	// Output:
	// reply {"answer":"Google makes one of these phones: the Pixel 10.","highlight":["e3"]}
}
