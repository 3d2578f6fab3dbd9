package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/telemetry"
)

// fakeSTT pushes what the segmented STT service pushes when the user
// stops speaking: its metrics, then the transcription.
type fakeSTT struct{ text string }

func (s *fakeSTT) Name() string { return "FakeSTT" }
func (s *fakeSTT) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	h.Forward()
	if _, ok := f.(*frames.UserStoppedSpeaking); ok {
		h.Push(&frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricTTFB, Processor: "FakeSTT", Model: "whisper-1", Value: 80 * time.Millisecond}}}, frames.Downstream)
		h.Push(&frames.Transcription{Text: s.text, Finalized: true}, frames.Downstream)
	}
	return nil
}

// fakeTTS speaks LLM text like the TTS service: TTSStarted, audio, then
// TTSStopped at the end of the response; outputs BotStarted/Stopped
// speaking like the output transport.
type fakeTTS struct{ speaking bool }

func (s *fakeTTS) Name() string { return "FakeTTS" }
func (s *fakeTTS) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	h.Forward()
	if dir != frames.Downstream {
		return nil
	}
	switch f := f.(type) {
	case *frames.LLMText:
		if !s.speaking {
			s.speaking = true
			h.Push(&frames.TTSStarted{ContextID: "c1"}, frames.Downstream)
			h.Push(&frames.TTSAudioRaw{Audio: frames.Audio{PCM: make([]byte, 960), SampleRate: 24000, Channels: 1}}, frames.Downstream)
			pipeline.Broadcast(h.Pusher(), func() *frames.BotStartedSpeaking { return &frames.BotStartedSpeaking{} })
		}
		_ = f
	case *frames.LLMFullResponseEnd:
		if s.speaking {
			s.speaking = false
			h.Push(&frames.TTSStopped{ContextID: "c1"}, frames.Downstream)
			pipeline.Broadcast(h.Pusher(), func() *frames.BotStoppedSpeaking { return &frames.BotStoppedSpeaking{} })
		}
	case *frames.Interruption:
		s.speaking = false
	}
	return nil
}

type rig struct {
	rec  *tracetest.SpanRecorder
	tel  *telemetry.Telemetry
	task *pipeline.Task
	done chan error
}

func newRig(t *testing.T, model *llmtest.Provider, fns []llm.Function, procs func(user, svc, asst pipeline.Processor) []pipeline.Processor) *rig {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.Options{TracerProvider: tp, TurnGrace: 200 * time.Millisecond, LLMSystem: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	svc := llm.NewService(model, llm.ServiceOptions{Name: "LLM"})
	if err := svc.Register(fns...); err != nil {
		t.Fatal(err)
	}
	conv := llm.NewContext(llm.SystemMessage("be brief"))
	conv.SetTools(llm.Tools(fns...))
	pair := llm.NewPair(conv, llm.PairOptions{})
	task := pipeline.NewTask(pipeline.New(procs(pair.User(), svc, pair.Assistant())...),
		pipeline.TaskOptions{EnableMetrics: true, EnableUsageMetrics: true})
	sess := tel.StartSession(t.Context(), telemetry.SessionOptions{ID: "sess-1", Transport: "websocket"})
	sess.Attach(task)
	r := &rig{rec: rec, tel: tel, task: task, done: make(chan error, 1)}
	go func() { r.done <- task.Run(context.Background()) }()
	return r
}

func (r *rig) end(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	r.task.EndWhenDone()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("task did not end")
	}
	return r.rec.Ended()
}

// waitSpans waits until a span named name has ended.
func (r *rig) waitSpan(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range r.rec.Ended() {
			if s.Name() == name {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %q span ended", name)
}

// tree renders spans as "parent > child" paths with chosen attributes.
type node struct {
	Name     string
	Attrs    map[string]any
	Children []node
}

func tree(spans []sdktrace.ReadOnlySpan, keys ...attribute.Key) []node {
	byParent := map[string][]sdktrace.ReadOnlySpan{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID().String()] = true
	}
	for _, s := range spans {
		p := s.Parent().SpanID().String()
		if !s.Parent().IsValid() || !ids[p] {
			p = ""
		}
		byParent[p] = append(byParent[p], s)
	}
	var build func(parent string) []node
	build = func(parent string) []node {
		var out []node
		list := byParent[parent]
		// Start order, which is the order of the conversation.
		for i := 1; i < len(list); i++ {
			for j := i; j > 0 && list[j].StartTime().Before(list[j-1].StartTime()); j-- {
				list[j], list[j-1] = list[j-1], list[j]
			}
		}
		for _, s := range list {
			n := node{Name: s.Name(), Attrs: map[string]any{}}
			for _, kv := range s.Attributes() {
				for _, k := range keys {
					if kv.Key == k {
						n.Attrs[string(k)] = kv.Value.AsInterface()
					}
				}
			}
			n.Children = build(s.SpanContext().SpanID().String())
			out = append(out, n)
		}
		return out
	}
	return build("")
}

func attrOf(s sdktrace.ReadOnlySpan, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func spanNamed(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span %q", name)
	return nil
}

type weatherArgs struct {
	City string `json:"city"`
}

// A text turn in which the model calls a tool: session > turn > two
// inferences, the tool call a child of the first; GenAI attributes set.
func TestTextTurnWithToolCallGivesTheSpanTree(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}),
			llm.UsageEvent(frames.LLMTokenUsage{PromptTokens: 40, CompletionTokens: 9})},
		[]llm.Event{llm.TextEvent("Sunny in Paris."), llm.UsageEvent(frames.LLMTokenUsage{PromptTokens: 60, CompletionTokens: 5})},
	)}
	weather := llm.NewFunction("get_weather", "weather", func(ctx context.Context, call llm.FunctionCallParams, a weatherArgs) error {
		return call.Result(map[string]any{"sky": "sunny"})
	})
	r := newRig(t, model, []llm.Function{weather}, func(u, s, a pipeline.Processor) []pipeline.Processor { return []pipeline.Processor{u, s, a} })
	r.task.QueueFrame(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("Weather in Paris?")}, RunLLM: true})
	r.waitSpan(t, "turn")
	spans := r.end(t)

	got := tree(spans, telemetry.KeySessionID, telemetry.KeySessionTransport, telemetry.KeyTurnKind, telemetry.KeyTurnInterrupted,
		telemetry.KeyGenAIOperationName, telemetry.KeyGenAISystem, telemetry.KeyGenAIInputTokens, telemetry.KeyGenAIOutputTokens,
		telemetry.KeyGenAIToolName, telemetry.KeyGenAIToolCallID, telemetry.KeyOutcome)
	want := []node{{Name: "session", Attrs: map[string]any{"framewire.session.id": "sess-1", "framewire.session.transport": "websocket"}, Children: []node{
		{Name: "turn", Attrs: map[string]any{"framewire.turn.kind": "text", "framewire.turn.interrupted": false}, Children: []node{
			{Name: "chat", Attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.usage.input_tokens": int64(40),
				"gen_ai.usage.output_tokens": int64(9), "framewire.outcome": "ok"}, Children: []node{
				{Name: "execute_tool get_weather", Attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
					"gen_ai.tool.call.id": "call_1", "framewire.outcome": "ok"}},
			}},
			{Name: "chat", Attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.usage.input_tokens": int64(60),
				"gen_ai.usage.output_tokens": int64(5), "framewire.outcome": "ok"}},
		}},
	}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("span tree (-want +got):\n%s", d)
	}
	turn := spanNamed(t, spans, "turn")
	if v, ok := attrOf(turn, telemetry.KeyTurnLatencyMS); !ok || v.AsFloat64() <= 0 {
		t.Errorf("turn latency = %v, %v; want > 0 (user text to first bot text)", v, ok)
	}
	for _, s := range spans {
		if s.Name() == "chat" {
			if v, ok := attrOf(s, telemetry.KeyTTFBMS); !ok || v.AsFloat64() < 0 {
				t.Errorf("inference without TTFB: %v", s.Attributes())
			}
		}
	}
}

// A voice turn: STT, the inference and TTS are children of the turn, with
// time to first byte; the turn's latency runs to the bot's first audio.
func TestVoiceTurnGivesSTTLLMTTSSpans(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.TextEvent("Hello there.")})}
	r := newRig(t, model, nil, func(u, s, a pipeline.Processor) []pipeline.Processor {
		return []pipeline.Processor{&fakeSTT{text: "hi"}, u, s, &fakeTTS{}, a}
	})
	r.task.QueueFrames(&frames.UserStartedSpeaking{}, &frames.VADUserStoppedSpeaking{StopSecs: 0.2}, &frames.UserStoppedSpeaking{})
	r.waitSpan(t, "turn")
	spans := r.end(t)
	got := tree(spans, telemetry.KeyServiceKind, telemetry.KeyService, telemetry.KeyTurnKind, telemetry.KeyServiceModel)
	want := []node{{Name: "session", Attrs: map[string]any{}, Children: []node{
		{Name: "turn", Attrs: map[string]any{"framewire.turn.kind": "voice"}, Children: []node{
			{Name: "stt", Attrs: map[string]any{"framewire.service.kind": "stt", "framewire.service": "FakeSTT", "framewire.service.model": "whisper-1"}},
			{Name: "chat", Attrs: map[string]any{"framewire.service.kind": "llm", "framewire.service": "LLM"}},
			{Name: "tts", Attrs: map[string]any{"framewire.service.kind": "tts", "framewire.service": "FakeTTS"}},
		}},
	}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("span tree (-want +got):\n%s", d)
	}
	for _, name := range []string{"stt", "chat", "tts"} {
		if _, ok := attrOf(spanNamed(t, spans, name), telemetry.KeyTTFBMS); !ok {
			t.Errorf("%s span has no %s", name, telemetry.KeyTTFBMS)
		}
	}
	stt := spanNamed(t, spans, "stt")
	if v, _ := attrOf(stt, telemetry.KeyTTFBMS); v.AsFloat64() != 80 {
		t.Errorf("stt ttfb = %v ms, want the service's 80", v.AsFloat64())
	}
	lat, ok := attrOf(spanNamed(t, spans, "turn"), telemetry.KeyTurnLatencyMS)
	if !ok || lat.AsFloat64() < 200 {
		t.Errorf("turn latency = %v; want >= 200 ms (measured from the real end of speech, StopSecs earlier)", lat.AsFloat64())
	}
}

// An interruption while the model streams marks the turn and the open
// inference interrupted.
func TestInterruptedTurnIsMarked(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script([]llm.Event{llm.TextEvent("A long story")}), Hang: llmtest.Always}
	r := newRig(t, model, nil, func(u, s, a pipeline.Processor) []pipeline.Processor { return []pipeline.Processor{u, s, a} })
	r.task.QueueFrame(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("Tell me a story")}, RunLLM: true})
	deadline := time.Now().Add(5 * time.Second)
	for len(model.Requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	r.task.QueueFrames(&frames.Interruption{}, &frames.UserStartedSpeaking{})
	r.waitSpan(t, "turn")
	spans := r.end(t)
	var turns []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "turn" {
			turns = append(turns, s)
		}
	}
	if len(turns) < 1 {
		t.Fatal("no turn")
	}
	first := turns[0]
	for _, s := range turns {
		if s.StartTime().Before(first.StartTime()) {
			first = s
		}
	}
	if v, _ := attrOf(first, telemetry.KeyTurnInterrupted); !v.AsBool() {
		t.Errorf("first turn not marked interrupted: %v", first.Attributes())
	}
	chat := spanNamed(t, spans, "chat")
	if v, _ := attrOf(chat, telemetry.KeyOutcome); v.AsString() != telemetry.OutcomeInterrupted {
		t.Errorf("inference outcome = %q, want interrupted", v.AsString())
	}
	if chat.Parent().SpanID() != first.SpanContext().SpanID() {
		t.Error("the inference is not a child of the interrupted turn")
	}
}
