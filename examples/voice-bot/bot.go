package main

import (
	"context"
	"strings"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/transports/webrtc"
)

// bot builds each session's pipeline from the configuration.
type bot struct {
	cfg config
	log *zap.Logger
	// tel exports each session's traces and metrics (nil or off: none).
	tel *telemetry.Telemetry
}

// newPipeline is the webrtc.PipelineFactory: the session's transport
// around the voice pipeline.
func (b *bot) newPipeline(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
	task := b.task(s.Input(), s.Output())
	b.tel.StartSession(ctx, telemetry.SessionOptions{ID: s.ID()}).Attach(task)
	return task, nil
}

// task builds the pipeline between an input and an output transport:
//
//	in → RTVI → [VAD → STT → turns] → user aggregator → LLM → TTS → out → assistant aggregator
//
// The bracketed part is there only with a speech-to-text service; without
// one the bot is a text chat (RTVI send-text) that answers out loud.
func (b *bot) task(in, out pipeline.Processor) *pipeline.Task {
	cfg := b.cfg
	rtviProc := rtvi.NewProcessor(rtvi.Options{Logger: b.log.Named("rtvi")})
	// The turn tracker interrupts the bot when the user starts speaking,
	// so the user aggregator need not do it again.
	pair := llm.NewPair(llm.NewContext(llm.SystemMessage(cfg.Prompt)), llm.PairOptions{User: llm.UserOptions{NoInterruptions: true}})
	procs := []pipeline.Processor{in, rtviProc}
	if cfg.STT.build != nil {
		procs = append(procs,
			audio.NewVADProcessor(audio.VADProcessorOptions{Analyzer: cfg.VAD.analyzer()}),
			cfg.STT.build(),
			audio.NewTurnTracker(audio.TurnTrackerOptions{}),
		)
	}
	procs = append(procs, pair.User(), llm.NewService(cfg.LLM.build(), llm.ServiceOptions{Name: "llm"}))
	if cfg.TTS.missing == "" {
		procs = append(procs, tts.NewService(cfg.TTS.build(), tts.Options{Name: "tts", Transform: speakable}))
	}
	procs = append(procs, out, pair.Assistant())

	task := pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{
		Logger:             b.log.Named("pipeline"),
		EnableMetrics:      true,
		EnableUsageMetrics: true,
	})
	greeting := b.greeting()
	rtviProc.OnClientReady(func(context.Context, *rtvi.ClientReadyFrame) {
		if cfg.TTS.missing != "" {
			// Nothing can speak: say it as bot text (bot-llm-text).
			task.QueueFrames(&frames.LLMFullResponseStart{}, &frames.LLMText{Text: greeting}, &frames.LLMFullResponseEnd{})
			return
		}
		task.QueueFrame(&frames.TTSSpeak{Text: greeting})
	})
	return task
}

// greeting is what the bot says when a client is ready: with no
// speech-to-text service it says plainly that it cannot hear.
func (b *bot) greeting() string {
	var g strings.Builder
	switch {
	case b.cfg.STT.build == nil && b.cfg.TTS.missing != "":
		g.WriteString("Hello! I can neither hear nor speak here: no speech services are available. Type a message and I will answer in text.")
	case b.cfg.STT.build == nil:
		g.WriteString("Hello! I can't hear you: no speech-to-text service is configured. Type a message and I will answer out loud.")
	default:
		g.WriteString("Hello! I'm listening.")
	}
	if b.cfg.LLM.Echo {
		g.WriteString(" I'm running offline, so I will just repeat what you say.")
	}
	return g.String()
}

// speakable drops markdown marks a model may still send, so the voice does
// not read out asterisks and hashes. The text frames keep them.
func speakable(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '*', '#', '`', '_', '~':
			return -1
		}
		return r
	}, s)
}
