// Package realtimeui wires the UI agent ([uiagent.Agent]) to an OpenAI
// Realtime speech-to-speech model ([openairealtime.Service]) in one call,
// as [uiagent.NewVoiceAgent] does for a cascaded pipeline:
//
//	va, err := realtimeui.NewVoiceAgent(realtimeui.Options{
//		Realtime:     openairealtime.Options{Model: "gpt-realtime"},
//		SystemPrompt: prompt,
//	})
//	va.OnClientReady(func(context.Context, *rtvi.ClientReadyFrame) { va.Say("Hi!") })
//	task := pipeline.NewTask(va.Pipeline(in, out), taskOptions)
//
// The model hears the user, sees the page (the agent's BeforeInference
// puts the <ui_state> into the conversation before each user turn's
// response), answers with the agent's reply tool and speaks the answer
// verbatim; the page gets the same ui-command, bot-output and transcript
// messages as from a cascaded pipeline.
package realtimeui

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/openairealtime"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/uiagent"
)

// Options configure a [VoiceAgent]. The zero value works: the model from
// the environment (openairealtime.Options), the agent's defaults.
type Options struct {
	// Realtime configures the model's session. Its BeforeResponse is the
	// agent's; its Functions come before the agent's tools.
	Realtime openairealtime.Options
	// SystemPrompt is the session's instructions; the agent's prompt
	// guide goes into the conversation after it. Empty keeps
	// Realtime.Instructions.
	SystemPrompt string
	// Tools returns the tools offered besides the reply tool, given the
	// agent: their handlers end the turn with a.Respond, start task
	// groups with a.Tasks() and speak with a.Say.
	Tools func(a *uiagent.Agent) []llm.Function
	// Agent configures the UI agent. The model speaks, so its Answer
	// stays AnswerSpeak: an answer is said verbatim.
	Agent uiagent.Options
	// RTVI configures the RTVI processor.
	RTVI rtvi.Options
}

// VoiceAgent is a UI agent on a Realtime model wired in one place: the
// RTVI processor, the [uiagent.Agent], and the model's session and
// function nodes with the reply tool and the other tools registered. Build
// one per session and place its processors with [VoiceAgent.Pipeline];
// the task adds the RTVI observer itself.
type VoiceAgent struct {
	agent  *uiagent.Agent
	rt     *rtvi.Processor
	model  *openairealtime.Service
	placed bool
}

// NewVoiceAgent builds a voice agent with o. It fails when the tools
// cannot be registered (two with one name, a schema that does not
// build).
func NewVoiceAgent(o Options) (*VoiceAgent, error) {
	ao := o.Agent
	ao.Answer = uiagent.AnswerSpeak
	v := &VoiceAgent{agent: uiagent.New(ao), rt: rtvi.NewProcessor(o.RTVI)}
	ro := o.Realtime
	if o.SystemPrompt != "" {
		ro.Instructions = o.SystemPrompt
	}
	ro.BeforeResponse = v.agent.BeforeInference
	tools := append([]llm.Function{}, ro.Functions...)
	tools = append(tools, v.agent.ReplyTool())
	if o.Tools != nil {
		tools = append(tools, o.Tools(v.agent)...)
	}
	seen := make(map[string]bool, len(tools))
	for _, f := range tools {
		if seen[f.Name] {
			return nil, fmt.Errorf("realtimeui: two of the voice agent's tools are named %q", f.Name)
		}
		seen[f.Name] = true
	}
	ro.Functions = nil
	v.model = openairealtime.New(ro)
	if err := v.model.Register(tools...); err != nil {
		return nil, fmt.Errorf("realtimeui: registering the voice agent's tools: %w", err)
	}
	return v, nil
}

// Processors returns the session's processors between the transport's
// input and output, in order:
//
//	in → rtvi.Processor → Agent → Realtime session → Realtime functions → out → played tap
//
// Call it once: processors belong to one pipeline.
func (v *VoiceAgent) Processors(in, out pipeline.Processor) []pipeline.Processor {
	if v.placed {
		panic("realtimeui: VoiceAgent.Processors called twice; build one VoiceAgent per pipeline")
	}
	v.placed = true
	return []pipeline.Processor{in, v.rt, v.agent, v.model.Pipeline(), out, v.model.PlayedTap()}
}

// Pipeline returns pipeline.New of [VoiceAgent.Processors].
func (v *VoiceAgent) Pipeline(in, out pipeline.Processor) *pipeline.Pipeline {
	return pipeline.New(v.Processors(in, out)...)
}

// Say tells the user text outside a turn (a greeting, the end of a
// background job): the model says it verbatim.
func (v *VoiceAgent) Say(text string) { v.agent.Say(text) }

// OnClientReady registers fn for the client's handshake; it runs once
// bot-ready has gone out, for the session's first client-ready only: a
// client that repeats client-ready gets bot-ready again but no second
// greeting (each costs a model response).
func (v *VoiceAgent) OnClientReady(fn func(ctx context.Context, r *rtvi.ClientReadyFrame)) {
	var ran atomic.Bool
	v.rt.OnClientReady(func(ctx context.Context, r *rtvi.ClientReadyFrame) {
		if ran.CompareAndSwap(false, true) {
			fn(ctx, r)
		}
	})
}

// Agent returns the UI agent: actions, event handlers, task groups, Ask.
func (v *VoiceAgent) Agent() *uiagent.Agent { return v.agent }

// RTVI returns the RTVI processor.
func (v *VoiceAgent) RTVI() *rtvi.Processor { return v.rt }

// Model returns the Realtime service (to register more functions).
func (v *VoiceAgent) Model() *openairealtime.Service { return v.model }
