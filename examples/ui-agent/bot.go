package main

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
	"github.com/framewire/framewire/transports/webrtc"
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
}

// newPipeline is the webrtc.PipelineFactory: one pipeline per browser.
func (b *bot) newPipeline(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
	return b.build(s.Input(), s.Output(), b.log.With(zap.String("session", s.ID()))), nil
}

// build assembles a session's pipeline between in and out.
func (b *bot) build(in, out pipeline.Processor, log *zap.Logger) *pipeline.Task {
	answer := uiagent.AnswerText // bot text comes from the LLM path: bot-llm-text
	if b.voice.TTS {
		answer = uiagent.AnswerSpeak // spoken verbatim; bot-output follows the audio
	}
	agent := uiagent.New(uiagent.Options{
		Answer:         answer,
		Watchdog:       45 * time.Second,
		FallbackAnswer: "Sorry, I lost my train of thought. Could you say that again?",
		Logger:         log,
		OnTurnEnd: func(a uiagent.Answer) {
			log.Info("turn", zap.String("brain", b.brain.Label), zap.Stringer("outcome", a.Outcome),
				zap.String("answer", a.Text), zap.Strings("skipped_refs", a.SkippedRefs))
		},
	})
	var task *pipeline.Task
	// say tells the user something outside a turn (the greeting, the end
	// of a research): spoken with a TTS, as bot text without one.
	say := func(text string) {
		if b.voice.TTS {
			task.QueueFrame(&frames.TTSSpeak{Text: text})
			return
		}
		task.QueueFrames(&frames.LLMFullResponseStart{}, &frames.LLMText{Text: text}, &frames.LLMFullResponseEnd{})
	}
	tools := []llm.Function{agent.ReplyTool(), researchTool(agent, b.researchStep, say)}
	conv := llm.NewContext(llm.SystemMessage(systemPrompt))
	conv.SetTools(llm.Tools(tools...))
	pair := llm.NewPair(conv, llm.PairOptions{
		BeforeInference: agent.BeforeInference,
		// With speech input the turn tracker interrupts the bot when the
		// user starts speaking; once is enough.
		User: llm.UserOptions{NoInterruptions: b.voice.newSTT != nil},
	})
	svc := llm.NewService(agent.Provider(b.brain.provider), llm.ServiceOptions{Name: "LLM (" + b.brain.Label + ")"})
	if err := svc.Register(tools...); err != nil {
		// The tools are declared above; a failure here is a bug in this file.
		panic(err)
	}
	rt := rtvi.NewProcessor(rtvi.Options{
		About: wire.JSON(map[string]string{
			"library": "framewire", "library_version": rtvi.LibraryVersion, "demo": "ui-agent", "brain": b.brain.Label,
		}),
		// bot-ready goes out from OnClientReady, before the greeting.
		ManualBotReady: true,
	})

	procs := []pipeline.Processor{in, rt}
	if b.voice.newSTT != nil {
		procs = append(procs, b.voice.newSTT()...)
	}
	procs = append(procs, agent, pair.User(), svc)
	if b.voice.newTTS != nil {
		procs = append(procs, b.voice.newTTS())
	}
	procs = append(procs, out, pair.Assistant())

	obs := []observers.Observer{rtvi.NewObserver(rt, rtvi.ObserverOptions{Logger: log})}
	if b.trace {
		obs = append(obs, &observers.Logger{Log: log.Named("trace"), Match: notAudio})
	}
	task = pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{
		Logger:    log,
		Observers: obs,
		// A text chat has no speech to count as activity: typing, scrolling
		// (snapshots) and answers keep the session alive too.
		IdleTimeout: 15 * time.Minute,
		IsActivity:  isActivity,
	})
	rt.OnClientReady(func(ctx context.Context, r *rtvi.ClientReadyFrame) {
		log.Info("client ready", zap.String("version", r.Version), zap.String("library", r.About.Library),
			zap.String("brain", b.brain.Label))
		if err := rt.SetBotReady(nil); err != nil {
			log.Warn("sending bot-ready", zap.Error(err))
			return
		}
		say(greeting)
	})
	return task
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
