package telemetry_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/telemetry"
)

type benchNode struct{ name string }

func (n benchNode) Name() string   { return n.name }
func (n benchNode) Processor() any { return nil }

func onTelemetry(b *testing.B) *telemetry.Telemetry {
	tp := sdktrace.NewTracerProvider() // spans recorded, sampled, not exported
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.Options{TracerProvider: tp, MeterProvider: mp, TurnGrace: -1})
	if err != nil {
		b.Fatal(err)
	}
	return tel
}

// BenchmarkObserveHop is what one observed hop of an audio frame costs the
// session's observer goroutine: the common event, not the first push.
func BenchmarkObserveHop(b *testing.B) {
	s := onTelemetry(b).StartSession(b.Context(), telemetry.SessionOptions{ID: "b"})
	defer s.End("ended")
	f := &frames.TTSAudioRaw{}
	e := observers.Event{Kind: observers.Pushed, Source: benchNode{"a"}, Frame: f, Direction: frames.Downstream}
	b.ReportAllocs()
	for b.Loop() {
		if s.Wants(e.Kind, f) {
			s.Observe(e)
		}
	}
}

// BenchmarkObserveTurn is one whole voice turn (15 events: STT, one
// inference with usage, TTS, bot speech) through the observer, with the
// spans and metrics it records; per op = per turn.
func BenchmarkObserveTurn(b *testing.B) {
	s := onTelemetry(b).StartSession(b.Context(), telemetry.SessionOptions{ID: "b"})
	defer s.End("ended")
	stt, llmN, tts := benchNode{"stt"}, benchNode{"llm"}, benchNode{"tts"}
	at := time.Duration(0)
	ev := func(src observers.Node, f frames.Frame) {
		at += time.Millisecond
		s.Observe(observers.Event{Kind: observers.Pushed, Source: src, Frame: f, Direction: frames.Downstream, At: at, FirstSeen: true})
	}
	b.ReportAllocs()
	for b.Loop() {
		ev(nil, &frames.UserStartedSpeaking{})
		ev(nil, &frames.VADUserStoppedSpeaking{StopSecs: 0.2})
		ev(nil, &frames.UserStoppedSpeaking{})
		ev(stt, &frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricTTFB, Model: "m", Value: time.Millisecond}}})
		ev(stt, &frames.Transcription{Text: "hello"})
		ev(llmN, &frames.LLMFullResponseStart{})
		ev(llmN, &frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricTTFB, Model: "gpt", Value: time.Millisecond}}})
		ev(llmN, &frames.LLMText{Text: "Hi."})
		ev(llmN, &frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricLLMUsage, Model: "gpt", Usage: frames.LLMTokenUsage{PromptTokens: 10, CompletionTokens: 2}}}})
		ev(llmN, &frames.LLMFullResponseEnd{})
		ev(tts, &frames.TTSStarted{})
		ev(tts, &frames.TTSAudioRaw{})
		ev(nil, &frames.BotStartedSpeaking{})
		ev(tts, &frames.TTSStopped{})
		ev(nil, &frames.BotStoppedSpeaking{})
	}
}

// BenchmarkPipelineHop pushes text frames through 8 pass-through nodes
// with telemetry off (no observer: what every program pays when it is
// compiled in but not configured) and on (the session observer attached);
// per op = one frame through 8 hops.
func BenchmarkPipelineHop(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			tel := (*telemetry.Telemetry)(nil)
			if on {
				tel = onTelemetry(b)
			}
			procs := make([]pipeline.Processor, 8)
			for i := range procs {
				procs[i] = pipeline.PassThrough{}
			}
			task := pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{})
			sess := tel.StartSession(b.Context(), telemetry.SessionOptions{ID: "b"})
			sess.Attach(task)
			got := make(chan struct{}, 1024)
			pipeline.OnDownstream(task, func(*frames.Text) { got <- struct{}{} })
			done := make(chan error, 1)
			go func() { done <- task.Run(context.Background()) }()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				task.QueueFrame(&frames.Text{Text: "x"})
				<-got
			}
			b.StopTimer()
			task.EndWhenDone()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
