package llm_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
)

// demoBrain is an offline provider: it answers from rules instead of a
// model. Any type with a Stream method plugs into the service.
type demoBrain struct{}

func (demoBrain) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == llm.RoleTool:
			// A tool answered: say so, streaming word by word.
			for _, w := range strings.Fields("Done, I highlighted it.") {
				if ctx.Err() != nil || !yield(llm.TextEvent(w+" "), nil) {
					return
				}
			}
		case strings.Contains(last.Content, "highlight"):
			yield(llm.ToolCallEvent(frames.LLMToolCall{ID: "call_1", Name: "highlight", Arguments: `{"ref":"e12"}`}), nil)
		default:
			yield(llm.TextEvent("Hello!"), nil)
		}
	}
}

type highlightArgs struct {
	Ref string `json:"ref" jsonschema_description:"The ref of the element to highlight, from <ui_state>"`
}

// Example shows the pieces an application wires together: a context with a
// tool, a handler, the aggregator pair and the service over a custom
// provider.
func Example() {
	// A tool from a Go args struct; its JSON Schema is generated.
	highlight := llm.NewFunction("highlight", "Highlight an element on the page.",
		func(ctx context.Context, call llm.FunctionCallParams, args highlightArgs) error {
			// Do the work (push frames with call.Out if needed), then settle
			// once. Result(v) asks for another inference when v is not empty;
			// ResultWith(..., RerunNever) settles without running the model again.
			return call.Result(map[string]string{"highlighted": args.Ref})
		})

	conv := llm.NewContext(llm.SystemMessage("You drive a web page for the user."))
	conv.SetTools(llm.Tools(highlight))

	svc := llm.NewService(demoBrain{}, llm.ServiceOptions{})
	if err := svc.Register(highlight); err != nil {
		panic(err)
	}

	pair := llm.NewPair(conv, llm.PairOptions{
		// Injected right before each inference the aggregators start.
		BeforeInference: func(c *llm.Context) {
			msgs := c.Messages()
			if len(msgs) > 0 && msgs[len(msgs)-1].Role == llm.RoleUser {
				c.Add(llm.DeveloperMessage("<ui_state>…</ui_state>"))
			}
		},
	})
	p := pipeline.New(pair.User(), svc, pair.Assistant()) // with STT, TTS and transports around them in a real app
	_ = p
	fmt.Println(conv.Len(), len(conv.Tools()))
	// Output: 1 1
}

// A handler that finishes the turn itself (for example by speaking a fixed
// answer) settles without asking the model to run again.
func ExampleFunctionCallParams_ResultWith() {
	reply := llm.NewFunction("reply", "Answer the user.", func(ctx context.Context, call llm.FunctionCallParams, args struct {
		Answer string `json:"answer"`
	}) error {
		call.Out.Push(&frames.TTSSpeak{Text: args.Answer}, frames.Downstream)
		return call.ResultWith(nil, llm.ResultOptions{Rerun: llm.RerunNever})
	})
	fmt.Println(reply.Name)
	// Output: reply
}

// A developer message can also be added through the pipeline: queue it
// with RunLLM false to have it in the next inference, or true to run one.
func ExampleDeveloperMessage() {
	f := &frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.DeveloperMessage(`<ui_event name="click">{"ref":"e3"}</ui_event>`)}}
	fmt.Println(f.Messages[0].Role)
	// Output: developer
}

// A function the browser runs: the page registers a handler for it with
// client-js registerFunctionCallHandler, and the service waits for the
// page's llm-function-call-result (the RTVI processor pushes it) instead
// of running Go code.
func ExampleClientFunction() {
	type fieldArgs struct {
		Field string `json:"field" jsonschema_description:"The form field to read"`
	}
	read := llm.ClientFunction("read_form_field", "Reads a field of the form the user is filling in.", llm.Schema[fieldArgs]())
	read.Timeout = 5 * time.Second // the page answers quickly, or the model is told it did not

	svc := llm.NewService(demoBrain{}, llm.ServiceOptions{})
	if err := svc.Register(read); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(svc.IsClientFunction("read_form_field"))
	// Output: true
}
