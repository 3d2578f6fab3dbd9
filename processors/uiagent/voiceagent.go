package uiagent

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
)

// VoiceAgentOptions configure a [VoiceAgent]. Provider is required; the
// rest is optional.
type VoiceAgentOptions struct {
	// Provider is the model. The agent wraps it (see [Agent.Provider]).
	Provider llm.Provider
	// SystemPrompt is the context's first message; the agent adds its
	// prompt guide after it. Empty starts with the guide alone.
	SystemPrompt string
	// Tools returns the tools offered besides the reply tool, given the
	// agent: their handlers end the turn with a.Respond, start task
	// groups with a.Tasks() and speak with a.Say. Each is put into the
	// context and registered with the service.
	Tools func(a *Agent) []llm.Function
	// STT is the speech input, in order (VAD, speech-to-text, turn
	// tracker); nil makes a text chat (RTVI send-text). Its turn tracker
	// interrupts the bot when the user starts speaking, so the user
	// aggregator is told not to do it again.
	STT []pipeline.Processor
	// TTS is the speech output; nil sends answers as bot text.
	TTS pipeline.Processor
	// Agent configures the UI agent. Its Answer follows TTS unless set
	// to another mode: AnswerSpeak with a TTS, AnswerText without one.
	Agent Options
	// RTVI configures the RTVI processor.
	RTVI rtvi.Options
	// LLM configures the LLM service.
	LLM llm.ServiceOptions
	// Assistant configures the assistant aggregator.
	Assistant llm.AssistantOptions
}

// VoiceAgent is a UI agent wired in one place: the RTVI processor, the
// [Agent], the LLM context with its aggregator pair, the LLM service
// with the reply tool and the other tools, and the speech processors,
// tied together as docs/ui-agent.md describes. Build one per session with
// [NewVoiceAgent] and place its processors with [VoiceAgent.Pipeline]
// (or [VoiceAgent.Processors]); the task adds the RTVI observer itself.
//
// For pipelines of another shape, wire the pieces by hand: [New],
// [Agent.ReplyTool], [Agent.BeforeInference], [Agent.Provider].
type VoiceAgent struct {
	agent  *Agent
	rt     *rtvi.Processor
	conv   *llm.Context
	pair   *llm.Pair
	svc    *llm.Service
	stt    []pipeline.Processor
	tts    pipeline.Processor
	placed bool
}

// NewVoiceAgent builds a voice agent with o. It fails when o has no
// Provider or when the tools cannot be registered (two with one name, a
// schema that does not build).
func NewVoiceAgent(o VoiceAgentOptions) (*VoiceAgent, error) {
	if o.Provider == nil {
		return nil, errors.New("uiagent: a voice agent needs a Provider")
	}
	ao := o.Agent
	if o.TTS == nil && ao.Answer == AnswerSpeak {
		ao.Answer = AnswerText // nothing could speak it
	}
	v := &VoiceAgent{agent: New(ao), rt: rtvi.NewProcessor(o.RTVI), stt: o.STT, tts: o.TTS}
	tools := []llm.Function{v.agent.ReplyTool()}
	if o.Tools != nil {
		tools = append(tools, o.Tools(v.agent)...)
	}
	seen := make(map[string]bool, len(tools))
	for _, f := range tools {
		if seen[f.Name] {
			return nil, fmt.Errorf("uiagent: two of the voice agent's tools are named %q", f.Name)
		}
		seen[f.Name] = true
	}
	if o.SystemPrompt != "" {
		v.conv = llm.NewContext(llm.SystemMessage(o.SystemPrompt))
	} else {
		v.conv = llm.NewContext()
	}
	v.conv.SetTools(llm.Tools(tools...))
	v.pair = llm.NewPair(v.conv, llm.PairOptions{
		BeforeInference: v.agent.BeforeInference,
		User:            llm.UserOptions{NoInterruptions: o.STT != nil},
		Assistant:       o.Assistant,
	})
	v.svc = llm.NewService(v.agent.Provider(o.Provider), o.LLM)
	if err := v.svc.Register(tools...); err != nil {
		return nil, fmt.Errorf("uiagent: registering the voice agent's tools: %w", err)
	}
	return v, nil
}

// Processors returns the session's processors between the transport's
// input and output, in order:
//
//	in → rtvi.Processor → STT… → Agent → user aggregator → llm.Service → TTS → out → assistant aggregator
//
// Call it once: processors belong to one pipeline.
func (v *VoiceAgent) Processors(in, out pipeline.Processor) []pipeline.Processor {
	if v.placed {
		panic("uiagent: VoiceAgent.Processors called twice; build one VoiceAgent per pipeline")
	}
	v.placed = true
	procs := make([]pipeline.Processor, 0, 8+len(v.stt))
	procs = append(procs, in, v.rt)
	procs = append(procs, v.stt...)
	procs = append(procs, v.agent, v.pair.User(), v.svc)
	if v.tts != nil {
		procs = append(procs, v.tts)
	}
	return append(procs, out, v.pair.Assistant())
}

// Pipeline returns pipeline.New of [VoiceAgent.Processors].
func (v *VoiceAgent) Pipeline(in, out pipeline.Processor) *pipeline.Pipeline {
	return pipeline.New(v.Processors(in, out)...)
}

// Say tells the user text outside a turn (a greeting, the end of a
// background job), as answers are told: see [Agent.Say].
func (v *VoiceAgent) Say(text string) { v.agent.Say(text) }

// OnClientReady registers fn for the client's handshake; it runs once
// bot-ready has gone out (unless RTVI.ManualBotReady leaves that to fn),
// so what fn says follows it.
//
// fn runs for the session's first client-ready only. A client that sends
// client-ready again (a page that reconnects its data channel, or one
// that floods: 200 at 20 a second) gets bot-ready again from the RTVI
// processor, as Pipecat answers each one, but no second greeting: what fn
// starts (a spoken greeting, a model run) costs a TTS or LLM request,
// which a client must not be able to repeat at will.
func (v *VoiceAgent) OnClientReady(fn func(ctx context.Context, r *rtvi.ClientReadyFrame)) {
	var ran atomic.Bool
	v.rt.OnClientReady(func(ctx context.Context, r *rtvi.ClientReadyFrame) {
		if ran.CompareAndSwap(false, true) {
			fn(ctx, r)
			return
		}
		v.agent.clientLog().Debug("client-ready again; the handlers of the first one do not run again")
	})
}

// Agent returns the UI agent: actions, event handlers, task groups, Ask.
func (v *VoiceAgent) Agent() *Agent { return v.agent }

// RTVI returns the RTVI processor, for client messages and server
// messages of the application's own.
func (v *VoiceAgent) RTVI() *rtvi.Processor { return v.rt }

// LLM returns the LLM service.
func (v *VoiceAgent) LLM() *llm.Service { return v.svc }

// Context returns the LLM context the aggregators keep.
func (v *VoiceAgent) Context() *llm.Context { return v.conv }
