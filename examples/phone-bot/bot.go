package main

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/transports/telephony"
)

// bot builds each call's pipeline from the configuration.
type bot struct {
	cfg config
	log *zap.Logger
	// tel exports each call's traces and metrics (nil or off: none).
	tel *telemetry.Telemetry
	// tap, when set, sees every frame after the speech-to-text and the
	// keypad (tests watch transcripts and keys with it).
	tap func(frames.Frame)
	// contexts, when set, receives each call's LLM context (tests read
	// what it recorded of the bot's words).
	contexts chan<- *llm.Context
}

// newPipeline is the telephony.PipelineFactory:
//
//	call in → keypad → [VAD → STT → turns] → user aggregator → LLM → TTS → call out → assistant aggregator
//
// The call's audio is 8 kHz; the input resamples it to the pipeline's
// rate and the output the TTS's audio to the call's. The bracketed part is
// there only with a speech-to-text service; without one the bot greets
// and answers keys.
func (b *bot) newPipeline(ctx context.Context, s *telephony.Session) (*pipeline.Task, error) {
	cfg := b.cfg
	call := s.Call()
	log := b.log.With(zap.String("call", call.CallID))
	log.Info("call started", zap.String("from", call.From), zap.String("to", call.To))
	// The turn tracker interrupts the bot when the caller starts speaking.
	pair := llm.NewPair(llm.NewContext(llm.SystemMessage(cfg.Prompt)), llm.PairOptions{User: llm.UserOptions{NoInterruptions: true}})
	if b.contexts != nil {
		b.contexts <- pair.Context()
	}
	procs := []pipeline.Processor{s.Input(), keypad{}}
	if cfg.STT.build != nil {
		procs = append(procs, vad(), cfg.STT.build(), audio.NewTurnTracker(audio.TurnTrackerOptions{}))
	}
	if b.tap != nil {
		procs = append(procs, tap(b.tap))
	}
	procs = append(procs, pair.User(), llm.NewService(cfg.LLM.build(), llm.ServiceOptions{Name: "llm"}))
	if cfg.TTS.missing == "" {
		procs = append(procs, tts.NewService(cfg.TTS.build(), tts.Options{Name: "tts", Transform: speakable}))
	}
	procs = append(procs, s.Output(), pair.Assistant())
	task := pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{Logger: log.Named("pipeline"), EnableMetrics: true})
	// The call's ids are span attributes, never metric labels.
	b.tel.StartSession(ctx, telemetry.SessionOptions{ID: s.ID(), Transport: "telephony", Attributes: []attribute.KeyValue{
		attribute.String("framewire.telephony.provider", call.Provider), attribute.String("framewire.telephony.call_id", call.CallID),
	}}).Attach(task)
	task.QueueFrame(&frames.TTSSpeak{Text: b.greeting()})
	return task, nil
}

// greeting is what the bot says when it picks up.
func (b *bot) greeting() string {
	var g strings.Builder
	if b.cfg.STT.build == nil {
		g.WriteString("Hello! I can't hear you on this line: no speech-to-text service is configured. Press a key and I will tell you which.")
	} else {
		g.WriteString("Hello! I'm listening.")
		if b.cfg.LLM.Echo {
			g.WriteString(" I'm running offline, so I will repeat what you say.")
		}
	}
	g.WriteString(" Press the hash key to hang up.")
	return g.String()
}

// keypad answers the caller's keys: each is said back, and # ends the
// call (the server then hangs it up through Twilio's REST API).
type keypad struct{}

// ProcessFrame implements pipeline.Processor.
func (keypad) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	k, ok := f.(*frames.InputDTMF)
	if !ok {
		return nil
	}
	if k.Button == "#" {
		h.Push(&frames.TTSSpeak{Text: "Goodbye!", NoContext: true}, frames.Downstream)
		h.Push(&frames.End{Reason: "the caller pressed #"}, frames.Downstream)
		return nil
	}
	h.Push(&frames.TTSSpeak{Text: "You pressed " + spokenKey(k.Button) + ".", NoContext: true}, frames.Downstream)
	return nil
}

// spokenKey is a key as the voice should say it.
func spokenKey(k string) string {
	switch k {
	case "*":
		return "star"
	case "#":
		return "hash"
	}
	return k
}

// tap passes every frame to a function.
type tap func(frames.Frame)

// ProcessFrame implements pipeline.Processor.
func (t tap) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	t(f)
	return nil
}

// speakable drops markdown marks a model may still send.
func speakable(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '*', '#', '`', '_', '~':
			return -1
		}
		return r
	}, s)
}
