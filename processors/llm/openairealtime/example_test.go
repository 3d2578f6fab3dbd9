package openairealtime_test

import (
	"context"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/openairealtime"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/uiagent"
)

// A speech-to-speech voice and UI agent: the Realtime model replaces STT,
// LLM and TTS. in and out are the transport's input and output (for
// example a transports/webrtc session's Input() and Output()).
func Example() {
	var in, out pipeline.Processor = pipeline.PassThrough{}, pipeline.PassThrough{}

	agent := uiagent.New(uiagent.Options{})
	type lookup struct {
		Order string `json:"order" jsonschema_description:"The order number."`
	}
	track := llm.NewFunction("track_order", "Where an order is.", func(ctx context.Context, call llm.FunctionCallParams, a lookup) error {
		return call.Result(map[string]string{"order": a.Order, "status": "shipped"})
	})
	// OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_REALTIME_MODEL are read
	// when the options leave them empty.
	rt := openairealtime.New(openairealtime.Options{
		Voice:          "marin",
		Instructions:   "You help the user with this shop.",
		Functions:      []llm.Function{track},
		BeforeResponse: agent.BeforeInference, // <ui_state> before each turn
	})
	if err := rt.Register(agent.ReplyTool()); err != nil {
		panic(err)
	}
	p := pipeline.New(in, rtvi.NewProcessor(rtvi.Options{}), agent, rt.Pipeline(), out, rt.PlayedTap())
	_ = pipeline.NewTask(p, pipeline.TaskOptions{})
}
