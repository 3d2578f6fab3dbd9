package main

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/openairealtime/realtimeui"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/inspector"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket"
)

const systemPrompt = `You are the assistant of a demo web page with three areas: a grid of phones, an essay about octopus cognition, and a job application form. The user talks or types to you while looking at the page, and you can see and act on it.

Answer every turn by calling exactly one tool: "reply" for everything, or "research" when the user asks you to research something or compare prices. Never answer in plain text.

- Pointing: when the user asks where a phone is, highlight its card, and scroll to it first when it is offscreen. Say where it is (row and column). Highlight every phone your answer names. "Add X to my cart" clicks the card's "Add X to cart" button.
- The essay: when the user selects text and says "explain this", explain the <selection> in one or two plain sentences, and do not point at it again. When they ask where the essay talks about something, select_text that paragraph (scroll to it first when offscreen) and say which part it is.
- The form: when the user dictates details, fill the matching fields with fills (normalize spoken emails and numbers), then confirm what you filled. "What have I entered?" reads the values from <ui_state>. "Submit" clicks "Submit application" once the first name, last name and email are filled; otherwise say what is missing.
- Keep answers to one or two short sentences, with no markdown or symbols: they may be spoken.`

const greeting = "Hi! I can see this page. Ask me where the iPhone 17 is, select a paragraph and say explain this, or tell me your name and email for the form."

// bot builds the pipeline of every session.
type bot struct {
	brain brain
	voice voice
	log   *zap.Logger
	// researchStep paces the simulated research workers.
	researchStep time.Duration
	// trace logs every frame push except audio (UI_AGENT_TRACE=1).
	trace bool
	// tel exports each session's traces and metrics (nil or off: none);
	// ins shows the sessions in the inspector (nil: off).
	tel *telemetry.Telemetry
	ins *inspector.Inspector
	// watchdog bounds a turn (0: 45s).
	watchdog time.Duration
}

// newPipeline is the webrtc.PipelineFactory: one pipeline per browser.
func (b *bot) newPipeline(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
	return b.session(ctx, "webrtc", s.ID(), s.Input(), s.Output())
}

// newWebSocketPipeline is the websocket.PipelineFactory: the same bot for
// a browser on Pipecat's WebSocket transport.
func (b *bot) newWebSocketPipeline(ctx context.Context, s *websocket.Session) (*pipeline.Task, error) {
	return b.session(ctx, "websocket", s.ID(), s.Input(), s.Output())
}

// session builds the pipeline of session id between its transport's in
// and out, and attaches telemetry and the inspector to it; transport
// names the transport in the logs and the session span.
func (b *bot) session(ctx context.Context, transport, id string, in, out pipeline.Processor) (*pipeline.Task, error) {
	task, err := b.build(in, out, b.log.With(zap.String("session", id), zap.String("transport", transport)))
	if err != nil {
		return nil, err
	}
	b.tel.StartSession(ctx, telemetry.SessionOptions{ID: id, Transport: transport}).Attach(task)
	b.ins.StartSession(ctx, id).Attach(task)
	return task, nil
}

// agentOptions are the UI agent's options in every shape of the bot.
func (b *bot) agentOptions(log *zap.Logger) uiagent.Options {
	watchdog := b.watchdog
	if watchdog <= 0 {
		watchdog = 45 * time.Second
	}
	return uiagent.Options{
		Watchdog:       watchdog,
		FallbackAnswer: "Sorry, I lost my train of thought. Could you say that again?",
		Logger:         log,
		OnTurnEnd: func(a uiagent.Answer) {
			log.Info("turn", zap.String("brain", b.brain.Label), zap.Stringer("outcome", a.Outcome),
				zap.String("answer", a.Text), zap.Strings("skipped_refs", a.SkippedRefs))
		},
	}
}

// rtviOptions are the RTVI processor's options in every shape of the bot.
func (b *bot) rtviOptions(log *zap.Logger) rtvi.Options {
	return rtvi.Options{
		About: wire.JSON(map[string]string{
			"library": "framewire", "library_version": rtvi.LibraryVersion, "demo": "ui-agent", "brain": b.brain.Label,
		}),
		Observer: rtvi.ObserverOptions{Logger: log},
	}
}

// taskOptions are the task's options in every shape of the bot.
func (b *bot) taskOptions(log *zap.Logger) pipeline.TaskOptions {
	var obs []observers.Observer
	if b.trace {
		obs = append(obs, &observers.Logger{Log: log.Named("trace"), Match: notAudio})
	}
	return pipeline.TaskOptions{
		Logger:    log,
		Observers: obs,
		// The services' metrics frames feed the traces (models, tokens,
		// time to first byte) and the inspector's waterfall.
		EnableMetrics:      b.tel.Enabled() || b.ins != nil,
		EnableUsageMetrics: b.tel.Enabled() || b.ins != nil,
		// A text chat has no speech to count as activity: typing, scrolling
		// (snapshots) and answers keep the session alive too.
		IdleTimeout: 15 * time.Minute,
		IsActivity:  isActivity,
	}
}

// buildRealtime assembles a session's pipeline around a speech-to-speech
// model, which hears, thinks and speaks in one service:
//
//	in → RTVI → agent → Realtime → out → played-audio tap
func (b *bot) buildRealtime(in, out pipeline.Processor, log *zap.Logger) (*pipeline.Task, error) {
	va, err := realtimeui.NewVoiceAgent(realtimeui.Options{
		Realtime:     *b.brain.realtime,
		SystemPrompt: systemPrompt,
		Tools: func(a *uiagent.Agent) []llm.Function {
			return []llm.Function{researchTool(a, b.researchStep, a.Say)}
		},
		Agent: b.agentOptions(log),
		RTVI:  b.rtviOptions(log),
	})
	if err != nil {
		return nil, err
	}
	va.OnClientReady(func(ctx context.Context, r *rtvi.ClientReadyFrame) {
		log.Info("client ready", zap.String("version", r.Version), zap.String("library", r.About.Library),
			zap.String("brain", b.brain.Label))
		va.Say(greeting)
	})
	return pipeline.NewTask(va.Pipeline(in, out), b.taskOptions(log)), nil
}

// build assembles a session's pipeline between in and out.
func (b *bot) build(in, out pipeline.Processor, log *zap.Logger) (*pipeline.Task, error) {
	if b.brain.realtime != nil {
		return b.buildRealtime(in, out, log)
	}
	var speech []pipeline.Processor
	if b.voice.newSTT != nil {
		speech = b.voice.newSTT()
	}
	var tts pipeline.Processor // nil: answers are bot text (bot-llm-text)
	if b.voice.newTTS != nil {
		tts = b.voice.newTTS()
	}
	ua, err := uiagent.NewVoiceAgent(uiagent.VoiceAgentOptions{
		Provider:     b.brain.provider,
		SystemPrompt: systemPrompt,
		Tools: func(a *uiagent.Agent) []llm.Function {
			return []llm.Function{researchTool(a, b.researchStep, a.Say)}
		},
		STT:   speech,
		TTS:   tts,
		Agent: b.agentOptions(log),
		RTVI:  b.rtviOptions(log),
		LLM:   llm.ServiceOptions{Name: "LLM (" + b.brain.Label + ")"},
	})
	if err != nil {
		return nil, err
	}
	ua.OnClientReady(func(ctx context.Context, r *rtvi.ClientReadyFrame) {
		log.Info("client ready", zap.String("version", r.Version), zap.String("library", r.About.Library),
			zap.String("brain", b.brain.Label))
		ua.Say(greeting)
	})
	return pipeline.NewTask(ua.Pipeline(in, out), b.taskOptions(log)), nil
}

// isActivity says which frames keep an idle session alive.
func isActivity(f frames.Frame) bool {
	switch f.(type) {
	case *frames.BotSpeaking, *frames.UserSpeaking, *frames.LLMMessagesAppend, *frames.Transcription,
		*frames.LLMText, *rtvi.UISnapshotFrame, *rtvi.UIEventFrame:
		return true
	}
	return false
}

// notAudio leaves out the frames that flow fifty times a second.
func notAudio(f frames.Frame) bool {
	switch f.(type) {
	case *frames.InputAudioRaw, *frames.OutputAudioRaw, *frames.TTSAudioRaw, *frames.BotSpeaking, *frames.UserSpeaking:
		return false
	}
	return true
}
