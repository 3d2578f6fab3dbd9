package rtvi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

func msgData(typ string, data obj) obj { return obj{"label": "rtvi-ai", "type": typ, "data": data} }

// types lists the message types, in order.
func types(msgs []any) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.(obj)["type"].(string))
	}
	return out
}

func TestObserverReportsEachFrameOnce(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	f := &frames.LLMFullResponseStart{}
	observe(o, llmNode, f)
	// Later hops of the same frame are not first pushes.
	o.Observe(observers.Event{Kind: observers.Pushed, Source: transportNode, Frame: f, Direction: frames.Downstream})
	o.Observe(observers.Event{Kind: observers.Processed, Destination: transportNode, Frame: f, Direction: frames.Downstream})
	if got := types(rec.messages(t)); !cmp.Equal(got, []string{wire.TypeBotLLMStarted}) {
		t.Errorf("messages %v, want one bot-llm-started", got)
	}
}

func TestObserverUsesTheDownstreamCopyOfBroadcasts(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	down, up := frames.Broadcast(func() *frames.BotStartedSpeaking { return &frames.BotStartedSpeaking{} })
	o.Observe(observers.Event{Kind: observers.Pushed, Source: transportNode, Frame: up, Direction: frames.Upstream, FirstSeen: true})
	if got := rec.messages(t); len(got) != 0 {
		t.Fatalf("upstream copy produced %v", got)
	}
	o.Observe(observers.Event{Kind: observers.Pushed, Source: transportNode, Frame: down, Direction: frames.Downstream, FirstSeen: true})
	if got := types(rec.messages(t)); !cmp.Equal(got, []string{wire.TypeBotStartedSpeaking}) {
		t.Errorf("messages %v", got)
	}
}

func TestObserverTakesBotTextFromTheOutputTransport(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, transportNode, &frames.BotStartedSpeaking{})
	rec.messages(t)
	f := &frames.TTSText{Text: "Hi.", AggregatedBy: "sentence"}
	// The TTS pushes it first: not yet played, nothing is sent.
	observe(o, llmNode, f)
	if got := rec.messages(t); len(got) != 0 {
		t.Fatalf("sent %v before the output transport pushed the text", got)
	}
	// The output transport pushes it on after playing it.
	o.Observe(observers.Event{Kind: observers.Pushed, Source: transportNode, Frame: f, Direction: frames.Downstream})
	if got := types(rec.messages(t)); !cmp.Equal(got, []string{wire.TypeBotOutput, wire.TypeBotTTSText}) {
		t.Errorf("messages %v", got)
	}
}

func TestBotOutputIsQueuedUntilTheBotSpeaks(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{DisableBotSpeaking: true})
	observe(o, transportNode, &frames.AggregatedText{Text: "One.", AggregatedBy: "sentence", WillBeSpoken: true})
	observe(o, transportNode, &frames.TTSText{Text: "Two.", AggregatedBy: "sentence"})
	if got := rec.messages(t); len(got) != 0 {
		t.Fatalf("sent %v before the bot started speaking", got)
	}
	// The flag silences bot-started-speaking but the queue still flushes.
	observe(o, transportNode, &frames.BotStartedSpeaking{})
	got := rec.messages(t)
	if d := cmp.Diff([]string{wire.TypeBotOutput, wire.TypeBotOutput, wire.TypeBotTTSText}, types(got)); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if got[0].(obj)["data"].(obj)["text"] != "One." || got[1].(obj)["data"].(obj)["text"] != "Two." {
		t.Errorf("flushed out of order: %v", got)
	}
	// While speaking, text goes out at once.
	observe(o, transportNode, &frames.AggregatedText{Text: "Three.", AggregatedBy: "sentence", WillBeSpoken: true})
	if got := types(rec.messages(t)); !cmp.Equal(got, []string{wire.TypeBotOutput}) {
		t.Errorf("while speaking: %v", got)
	}
	// Once stopped, text waits again.
	observe(o, transportNode, &frames.BotStoppedSpeaking{})
	observe(o, transportNode, &frames.AggregatedText{Text: "Four.", AggregatedBy: "sentence", WillBeSpoken: true})
	if got := rec.messages(t); len(got) != 0 {
		t.Errorf("after stop: %v", got)
	}
}

func TestInterruptionDropsTextThatWasNeverSpoken(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, transportNode, &frames.AggregatedText{Text: "Stale.", AggregatedBy: "sentence", WillBeSpoken: true})
	observe(o, llmNode, &frames.Interruption{})
	observe(o, transportNode, &frames.BotStartedSpeaking{})
	if got := types(rec.messages(t)); !cmp.Equal(got, []string{wire.TypeBotInterrupted, wire.TypeBotStartedSpeaking}) {
		t.Errorf("messages %v", got)
	}
}

// Text that will not be spoken (a text-only pipeline) is sent at once:
// the bot will never start speaking to release it.
func TestUnspokenTextIsNotQueued(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, transportNode, &frames.AggregatedText{Text: "Here it is.", AggregatedBy: "sentence"})
	msgs := rec.messages(t)
	if len(msgs) != 1 || msgs[0].(obj)["type"] != wire.TypeBotOutput || msgs[0].(obj)["data"].(obj)["will_be_spoken"] != false {
		t.Fatalf("messages %v, want one unspoken bot-output", msgs)
	}
}

func TestQueuedTextIsBounded(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{MaxQueuedText: 2, DisableBotSpeaking: true})
	for _, s := range []string{"a", "b", "c"} {
		observe(o, transportNode, &frames.AggregatedText{Text: s, AggregatedBy: "sentence", WillBeSpoken: true})
	}
	observe(o, transportNode, &frames.BotStartedSpeaking{})
	var texts []string
	for _, m := range rec.messages(t) {
		texts = append(texts, m.(obj)["data"].(obj)["text"].(string))
	}
	if !cmp.Equal(texts, []string{"b", "c"}) {
		t.Errorf("texts %v, want the newest two", texts)
	}
}

func TestWordLevelOutputPerClientVersion(t *testing.T) {
	words := func(version string) []string {
		p, rec := testProcessor(version)
		o := NewObserver(p, ObserverOptions{})
		observe(o, transportNode, &frames.BotStartedSpeaking{})
		observe(o, transportNode, &frames.TTSText{Text: "Hello", AggregatedBy: "word"})
		observe(o, transportNode, &frames.AggregatedText{Text: "tok", AggregatedBy: "token", WillBeSpoken: true})
		observe(o, transportNode, &frames.AggregatedTextProgress{Text: "Hello world.", AggregatedBy: "sentence", SegmentID: 9, AccumulatedText: "Hello", RemainingText: " world."})
		return types(rec.messages(t))[1:]
	}
	// 2.x: no bot-output for words or tokens, but bot-tts-text and progress.
	if got := words("2.1.0"); !cmp.Equal(got, []string{wire.TypeBotTTSText, wire.TypeBotOutput}) {
		t.Errorf("2.1.0 client: %v", got)
	}
	// 1.x: bot-output for every aggregation, never progress.
	if got := words("1.4.0"); !cmp.Equal(got, []string{wire.TypeBotOutput, wire.TypeBotTTSText, wire.TypeBotOutput}) {
		t.Errorf("1.4.0 client: %v", got)
	}
}

func TestSkipAggregatedByAndTransforms(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{
		SkipAggregatedBy: []string{"code"},
		Transforms: []Transform{
			{AggregatedBy: "sentence", Func: func(t OutputText) OutputText {
				t.Text = strings.ToUpper(t.Text)
				if t.Progress != nil {
					t.Progress.AccumulatedText = strings.ToUpper(t.Progress.AccumulatedText)
					t.Progress.RemainingText = strings.ToUpper(t.Progress.RemainingText)
				}
				return t
			}},
			{AggregatedBy: "*", Func: func(t OutputText) OutputText { t.Text += "!"; return t }},
		},
	})
	observe(o, transportNode, &frames.BotStartedSpeaking{})
	observe(o, transportNode, &frames.AggregatedText{Text: "x = 1", AggregatedBy: "code"})
	observe(o, transportNode, &frames.TTSText{Text: "hi", AggregatedBy: "sentence"})
	observe(o, transportNode, &frames.AggregatedTextProgress{Text: "hi there", AggregatedBy: "sentence", SegmentID: 3, AccumulatedText: "hi", RemainingText: " there"})
	got := rec.messages(t)[1:]
	want := []any{
		msgData(wire.TypeBotOutput, obj{"text": "HI!", "aggregated_by": "sentence", "segment_id": got[0].(obj)["data"].(obj)["segment_id"],
			"spoken": true, "will_be_spoken": true, "spoken_status": "completed",
			"spoken_progress": obj{"accumulated_text": "HI!", "remaining_text": ""}}),
		msgData(wire.TypeBotTTSText, obj{"text": "HI!"}),
		msgData(wire.TypeBotOutput, obj{"text": "HI THERE!", "aggregated_by": "sentence", "segment_id": 3.0,
			"will_be_spoken": true, "spoken_status": "in-progress",
			"spoken_progress": obj{"accumulated_text": "HI", "remaining_text": " THERE"}}),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestFunctionCallReportLevels(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{FunctionCallReportLevels: map[string]ReportLevel{
		"secret": ReportDisabled, "lookup": ReportArguments, "*": ReportName,
	}})
	call := func(name string) frames.FunctionCall {
		return frames.FunctionCall{Name: name, ToolCallID: "id-" + name, Arguments: []byte(`{"q":1}`)}
	}
	observe(o, llmNode, &frames.FunctionCallsStarted{Calls: []frames.FunctionCall{call("secret"), call("lookup"), call("other")}})
	observe(o, llmNode, &frames.FunctionCallInProgress{FunctionCall: call("secret")})
	observe(o, llmNode, &frames.FunctionCallInProgress{FunctionCall: call("lookup")})
	observe(o, llmNode, &frames.FunctionCallInProgress{FunctionCall: call("other")})
	observe(o, llmNode, &frames.FunctionCallResult{FunctionCall: call("lookup"), Result: map[string]int{"n": 1}})
	observe(o, llmNode, &frames.FunctionCallCancel{Name: "secret", ToolCallID: "id-secret"})
	want := []any{
		msgData(wire.TypeLLMFunctionCallStarted, obj{"function_name": "lookup"}),
		msgData(wire.TypeLLMFunctionCallStarted, obj{"function_name": "other"}),
		msgData(wire.TypeLLMFunctionCallInProgress, obj{"tool_call_id": "id-lookup", "function_name": "lookup", "arguments": obj{"q": 1.0}}),
		msgData(wire.TypeLLMFunctionCallInProgress, obj{"tool_call_id": "id-other", "function_name": "other"}),
		// ARGUMENTS does not reveal results.
		msgData(wire.TypeLLMFunctionCallStopped, obj{"tool_call_id": "id-lookup", "cancelled": false, "function_name": "lookup"}),
	}
	if d := cmp.Diff(want, rec.messages(t)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestFalsyResultsAreOmittedAtFull(t *testing.T) {
	for _, result := range []any{nil, map[string]any{}, "", 0, 0.0, false, []int{}, wire.RawJSON(" { } "), wire.RawJSON(`null`)} {
		p, rec := testProcessor("2.1.0")
		o := NewObserver(p, ObserverOptions{FunctionCallReportLevels: map[string]ReportLevel{"*": ReportFull}})
		observe(o, llmNode, &frames.FunctionCallResult{FunctionCall: frames.FunctionCall{Name: "f", ToolCallID: "c"}, Result: result})
		want := []any{msgData(wire.TypeLLMFunctionCallStopped, obj{"tool_call_id": "c", "cancelled": false, "function_name": "f"})}
		if d := cmp.Diff(want, rec.messages(t)); d != "" {
			t.Errorf("result %#v (-want +got):\n%s", result, d)
		}
	}
}

func TestConfigureObserverFrame(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, llmNode, &frames.VADUserStartedSpeaking{})
	observe(o, llmNode, &ConfigureObserverFrame{VADUserSpeaking: wire.OptTrue, FunctionCallReportLevels: map[string]ReportLevel{"*": ReportDisabled}})
	observe(o, llmNode, &frames.VADUserStartedSpeaking{})
	observe(o, llmNode, &frames.FunctionCallCancel{Name: "f", ToolCallID: "c"})
	if got := types(rec.messages(t)); !cmp.Equal(got, []string{wire.TypeVADUserStartedSpeaking}) {
		t.Errorf("messages %v", got)
	}
}

func TestIgnoreSource(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	side := node{"SideLLM#9", "side"}
	o := NewObserver(p, ObserverOptions{IgnoreSource: func(proc any) bool { return proc == "side" }})
	observe(o, side, &frames.LLMText{Text: "hidden"})
	observe(o, llmNode, &frames.LLMText{Text: "shown"})
	if got := rec.messages(t); len(got) != 1 || got[0].(obj)["data"].(obj)["text"] != "shown" {
		t.Errorf("messages %v", got)
	}
}

func TestDisabledMessages(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{
		DisableBotLLM: true, DisableBotTTS: true, DisableBotSpeaking: true, DisableUserLLM: true,
		DisableUserSpeaking: true, DisableUserMute: true, DisableUserTranscription: true, DisableMetrics: true,
		DisableBotOutput: true,
	})
	for _, f := range []frames.Frame{
		&frames.LLMFullResponseStart{}, &frames.LLMText{Text: "a."}, &frames.LLMFullResponseEnd{},
		&frames.TTSStarted{}, &frames.TTSStopped{}, &frames.BotStartedSpeaking{}, &frames.Interruption{},
		&frames.UserStartedSpeaking{}, &frames.UserMuteStarted{}, &frames.Transcription{Text: "x"},
		&frames.LLMContext{Messages: []frames.LLMMessage{{Role: "user", Content: "x"}}}, &frames.Metrics{},
		&frames.VADUserStartedSpeaking{}, &frames.InputAudioRaw{}, &frames.TTSAudioRaw{},
	} {
		observe(o, llmNode, f)
	}
	observe(o, transportNode, &frames.TTSText{Text: "x", AggregatedBy: "sentence"})
	if got := rec.messages(t); len(got) != 0 {
		t.Errorf("messages %v", got)
	}
	// Never gated: server messages, UI commands and responses.
	observe(o, llmNode, &ServerMessageFrame{Data: wire.RawJSON(`1`)})
	observe(o, llmNode, &UICommandFrame{Command: "c"})
	observe(o, llmNode, &ServerResponseFrame{Request: ClientMessage{ID: "r", Type: "t"}, Error: "no"})
	observe(o, llmNode, &ServerResponseFrame{Request: ClientMessage{ID: "r2", Type: "t"}})
	want := []any{
		msgData(wire.TypeServerMessage, nil),
		msgData(wire.TypeUICommand, obj{"command": "c"}),
		obj{"label": "rtvi-ai", "type": "error-response", "id": "r", "data": obj{"error": "no"}},
		obj{"label": "rtvi-ai", "type": "server-response", "id": "r2", "data": obj{"t": "t"}},
	}
	want[0].(obj)["data"] = 1.0
	if d := cmp.Diff(want, rec.messages(t)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestUserLLMText(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, llmNode, &frames.LLMContext{Messages: []frames.LLMMessage{{Role: "user", Parts: []frames.LLMContentPart{
		{Type: "text", Text: "look at"}, {Type: "image_url", ImageURL: "https://x"}, {Type: "text", Text: "this"}}}}})
	observe(o, llmNode, &frames.LLMContext{Messages: []frames.LLMMessage{{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}}})
	observe(o, llmNode, &frames.LLMContext{})
	want := []any{msgData(wire.TypeUserLLMText, obj{"text": "look at this"})}
	if d := cmp.Diff(want, rec.messages(t)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestBotTranscriptionSentences(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	for _, s := range []string{"Dr", ". Smith paid $3", ".50 in the U", ".S", ". Really?", " Yes", "!", " And then"} {
		observe(o, llmNode, &frames.LLMText{Text: s})
	}
	observe(o, llmNode, &frames.LLMFullResponseEnd{})
	var got []string
	for _, m := range ofType(rec.messages(t), wire.TypeBotTranscription) {
		got = append(got, m.(obj)["data"].(obj)["text"].(string))
	}
	want := []string{"Dr. Smith paid $3.50 in the U.S. Really?", " Yes!", " And then"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestEndOfSentence(t *testing.T) {
	for text, want := range map[string]bool{
		"Hello.": true, "Hello. ": true, "Really?": true, "Wow!": true, "Note:": true, "你好。": true,
		"Hello": false, "": false, "U.S.": false, "Item 1.": false, "Dr.": false, "Mrs.": false, "at 3 p.": false,
	} {
		if got := endOfSentence([]byte(text)); got != want {
			t.Errorf("endOfSentence(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestMetricsFromFrame(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, llmNode, &frames.Metrics{Data: []frames.Metric{
		{Kind: frames.MetricTTFB, Processor: "tts", Value: 200 * time.Millisecond},
		{Kind: frames.MetricProcessing, Processor: "llm", Model: "m", Value: 50 * time.Millisecond},
		{Kind: frames.MetricLLMUsage, Processor: "llm", Usage: frames.LLMTokenUsage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30, CacheReadTokens: 4}},
		{Kind: frames.MetricSTTUsage, Processor: "stt", AudioSeconds: 1.5},
		{Kind: frames.MetricTTSUsage, Processor: "tts", Characters: 42},
		{Kind: frames.MetricKind(99), Processor: "turn"},
	}})
	observe(o, llmNode, &frames.Metrics{})
	want := []any{
		msgData(wire.TypeMetrics, obj{
			"ttfb":       []any{obj{"processor": "tts", "value": 0.2}},
			"processing": []any{obj{"processor": "llm", "model": "m", "value": 0.05}},
			"tokens":     []any{obj{"prompt_tokens": 10.0, "completion_tokens": 20.0, "total_tokens": 30.0, "cache_read_input_tokens": 4.0}},
			"stt_usage":  []any{obj{"processor": "stt", "value": obj{"audio_seconds": 1.5}}},
			"characters": []any{obj{"processor": "tts", "value": 42.0}},
		}),
		msgData(wire.TypeMetrics, obj{}),
	}
	if d := cmp.Diff(want, rec.messages(t)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestAudioLevelsAreRateLimited(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{EnableUserAudioLevel: true})
	for i := 0; i < 20; i++ { // 20 ms frames over 400 ms
		f := &frames.InputAudioRaw{Audio: constantPCM(1000, 320)}
		framebook.MarkPushed(f.FrameBase())
		o.Observe(observers.Event{Kind: observers.Pushed, Frame: f, Direction: frames.Downstream, FirstSeen: true, At: time.Duration(i) * 20 * time.Millisecond})
	}
	// Sent at 0 ms, then at the first frame more than 150 ms later (160 ms, 320 ms).
	if n := len(rec.messages(t)); n != 3 {
		t.Errorf("%d levels, want 3", n)
	}
}

func TestAudioLevel(t *testing.T) {
	for _, tc := range []struct {
		sample int16
		want   float64
	}{{0, 0}, {32767, 1}, {-32768, 1}, {30, 0}, {596, 0.42}} {
		if got := audioLevel(constantPCM(tc.sample, 160).PCM); got != tc.want {
			t.Errorf("level of %d = %v, want %v", tc.sample, got, tc.want)
		}
	}
}

func TestWants(t *testing.T) {
	p, _ := testProcessor("")
	quiet := NewObserver(p, ObserverOptions{})
	loud := NewObserver(p, ObserverOptions{EnableUserAudioLevel: true, EnableBotAudioLevel: true})
	if quiet.Wants(observers.Pushed, &frames.InputAudioRaw{}) || quiet.Wants(observers.Pushed, &frames.TTSAudioRaw{}) {
		t.Error("audio is wanted with audio levels off")
	}
	if !loud.Wants(observers.Pushed, &frames.InputAudioRaw{}) || !loud.Wants(observers.Pushed, &frames.TTSAudioRaw{}) {
		t.Error("audio is not wanted with audio levels on")
	}
	if quiet.Wants(observers.Processed, &frames.LLMText{}) || !quiet.Wants(observers.Pushed, &frames.LLMText{}) {
		t.Error("wrong event kinds wanted")
	}
	if quiet.Wants(observers.Pushed, &frames.OutputTransportMessageUrgent{}) || quiet.Wants(observers.Pushed, &frames.Text{}) {
		t.Error("unmapped frames wanted")
	}
}

// lifecycle is one UI task group: start, two updates, one worker done,
// one cancelled, the end.
func lifecycle() []frames.Frame {
	return []frames.Frame{
		&UITaskFrame{Event: wire.GroupStarted{TaskID: "g1", Agents: []string{"search", "summarize"}, Label: "Research", Cancellable: true, At: 100}},
		&UITaskFrame{Event: wire.TaskUpdate{TaskID: "g1", AgentName: "search", Data: wire.RawJSON(`{"text":"searching"}`), At: 101}},
		&UITaskFrame{Event: wire.TaskUpdate{TaskID: "g1", AgentName: "summarize", At: 102}},
		&UITaskFrame{Event: wire.TaskCompleted{TaskID: "g1", AgentName: "search", Status: wire.StatusCompleted, Response: wire.RawJSON(`{"hits":3}`), At: 103}},
		&UITaskFrame{Event: wire.TaskCompleted{TaskID: "g1", AgentName: "summarize", Status: wire.StatusCancelled, At: 104}},
		&UITaskFrame{Event: wire.GroupCompleted{TaskID: "g1", At: 105}},
		&UITaskFrame{}, // no event: nothing is sent
	}
}

// waitMessages waits (generously) until n RTVI messages came out.
func waitMessages(t *testing.T, res *pipelinetest.Result, n int) []any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msgs := sent(t, res.Down())
		if len(msgs) >= n || time.Now().After(deadline) {
			if len(msgs) < n {
				t.Fatalf("got %d messages, want %d: %v", len(msgs), n, msgs)
			}
			return msgs
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTaskLifecyclePerVocabulary observes the same lifecycle as a 1.3.0
// client and as a 2.1.0 client: the messages must match field for field
// once the names are mapped, and neither may carry the other's names.
func TestTaskLifecyclePerVocabulary(t *testing.T) {
	legacy := runWithClientN(t, "1.3.0", lifecycle(), 6)
	current := runWithClientN(t, "2.1.0", lifecycle(), 6)
	if len(legacy) != 6 || len(current) != 6 {
		t.Fatalf("got %d and %d messages, want 6 each", len(legacy), len(current))
	}
	rename := map[string]string{
		"ui-job-group": "ui-task", "job_id": "task_id", "workers": "agents", "worker_name": "agent_name",
		"job_update": "task_update", "job_completed": "task_completed",
	}
	for i := range current {
		mapped := renameJSON(current[i], rename)
		if d := cmp.Diff(legacy[i], mapped); d != "" {
			t.Errorf("message %d differs (-1.3.0 +2.1.0 renamed):\n%s", i, d)
		}
		if s := encodeAny(t, legacy[i]); strings.Contains(s, "job") || strings.Contains(s, "worker") {
			t.Errorf("1.3.0 message carries job-group names: %s", s)
		}
		if s := encodeAny(t, current[i]); strings.Contains(s, "task") || strings.Contains(s, "agent") {
			t.Errorf("2.1.0 message carries task names: %s", s)
		}
	}
	want := msgData(wire.TypeUITask, obj{"kind": "group_started", "task_id": "g1", "agents": []any{"search", "summarize"},
		"label": "Research", "cancellable": true, "at": 100.0})
	if d := cmp.Diff(want, legacy[0]); d != "" {
		t.Errorf("group_started (-want +got):\n%s", d)
	}
	wantCancelled := msgData(wire.TypeUIJobGroup, obj{"kind": "job_completed", "job_id": "g1", "worker_name": "summarize", "status": "cancelled", "at": 104.0})
	if d := cmp.Diff(wantCancelled, current[4]); d != "" {
		t.Errorf("job_completed (-want +got):\n%s", d)
	}
}

// TestObserverInPipeline drives a whole turn through a real pipeline: the
// observer sees each frame at every hop but reports it once, and takes
// bot text from the output transport.
func TestObserverInPipeline(t *testing.T) {
	fs := []frames.Frame{
		&frames.UserStartedSpeaking{},
		&frames.Transcription{Text: "hi", Timestamp: "2026-07-14T12:00:00.000+00:00"},
		&frames.UserStoppedSpeaking{},
		&frames.LLMFullResponseStart{},
		&frames.LLMText{Text: "Hello"},
		&frames.LLMText{Text: " there."},
		&frames.LLMFullResponseEnd{},
		&frames.BotStartedSpeaking{},
		&frames.TTSText{Text: "Hello there.", AggregatedBy: "sentence"},
	}
	want := []string{
		wire.TypeUserStartedSpeaking, wire.TypeUserTranscription, wire.TypeUserStoppedSpeaking, wire.TypeBotLLMStarted,
		wire.TypeBotLLMText, wire.TypeBotLLMText, wire.TypeBotTranscription, wire.TypeBotLLMStopped,
		wire.TypeBotStartedSpeaking, wire.TypeBotOutput, wire.TypeBotTTSText,
	}
	got := runWithClientN(t, "2.1.0", fs, len(want))
	if d := cmp.Diff(want, types(got)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// runWithClientN runs a processor and observer (and an output transport)
// behind a client that said version; after bot-ready it queues fs and
// returns the n messages they produced, checking that no more come.
func runWithClientN(t *testing.T, version string, fs []frames.Frame, n int) []any {
	t.Helper()
	p := NewProcessor(Options{})
	o := NewObserver(p, ObserverOptions{})
	res := pipelinetest.Start(t, pipeline.New(p, &outputTransport{}), pipelinetest.Options{
		Send:  []frames.Frame{inbound(clientReady("r", version))},
		NoEnd: true,
		Task:  pipeline.TaskOptions{Observers: []observers.Observer{o}},
	})
	defer func() {
		res.Task.Cancel("test over")
		res.Wait()
	}()
	waitMessages(t, res, 1)
	res.Task.QueueFrames(fs...)
	msgs := waitMessages(t, res, 1+n)[1:]
	time.Sleep(20 * time.Millisecond) // nothing more may arrive
	if extra := sent(t, res.Down())[1:]; len(extra) != n {
		t.Errorf("%d messages, want %d: %v", len(extra), n, types(extra))
	}
	return msgs
}

// renameJSON renames object keys and string values through names, deeply,
// except inside data that workers own (job_update data, responses).
func renameJSON(v any, names map[string]string) any {
	switch v := v.(type) {
	case obj:
		out := obj{}
		for k, x := range v {
			nk := k
			if n, ok := names[k]; ok {
				nk = n
			}
			if k == "response" || (k == "data" && v["kind"] != nil) {
				out[nk] = x
				continue
			}
			out[nk] = renameJSON(x, names)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = renameJSON(x, names)
		}
		return out
	case string:
		if n, ok := names[v]; ok {
			return n
		}
	}
	return v
}

func encodeAny(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSystemLogCore(t *testing.T) {
	p, rec := testProcessor("")
	log := zap.New(p.SystemLogCore(zap.InfoLevel)).Named("llm").With(zap.String("model", "m1"))
	log.Debug("hidden")
	log.Info("first token", zap.Int("ms", 120))
	msgs := rec.messages(t)
	if len(msgs) != 1 {
		t.Fatalf("messages %v", msgs)
	}
	text := msgs[0].(obj)["data"].(obj)["text"].(string)
	if !strings.HasSuffix(text, " | INFO | llm: first token model=m1 ms=120") || len(text) < 23 || text[4] != '-' {
		t.Errorf("text %q", text)
	}
}

// Issue 18 item 1: text the TTS could not speak reaches the client at
// once as bot-output with spoken false, after what was held ahead of it,
// and in place of its own announcement (words mode), which never plays.
func TestTextTheTTSCouldNotSpeakIsSentAtOnceAsUnspoken(t *testing.T) {
	p, rec := testProcessor("2.1.0")
	o := NewObserver(p, ObserverOptions{})
	observe(o, transportNode, &frames.AggregatedText{Text: "Held.", AggregatedBy: "sentence", WillBeSpoken: true, ContextID: "c0"})
	observe(o, transportNode, &frames.AggregatedText{Text: "Where is it?", AggregatedBy: "sentence", WillBeSpoken: true, ContextID: "c1"})
	if got := rec.messages(t); len(got) != 0 {
		t.Fatalf("sent %v before the bot spoke", got)
	}
	observe(o, transportNode, &frames.TTSText{Text: "Where is it?", AggregatedBy: "sentence", ContextID: "c1", Unspoken: true})
	got := rec.messages(t)
	var outputs []obj
	for _, m := range got {
		if m.(obj)["type"] == wire.TypeBotOutput {
			outputs = append(outputs, m.(obj)["data"].(obj))
		} else {
			t.Errorf("unexpected %v (no bot-tts-text for text that was not spoken)", m)
		}
	}
	if len(outputs) != 2 || outputs[0]["text"] != "Held." || outputs[1]["text"] != "Where is it?" {
		t.Fatalf("bot-output %v, want Held. then the unspoken text once", outputs)
	}
	if outputs[1]["spoken"] != false || outputs[1]["will_be_spoken"] == true {
		t.Errorf("the unspoken text went out as %v, want spoken false", outputs[1])
	}
	// Nothing is left waiting for speech.
	observe(o, transportNode, &frames.BotStartedSpeaking{})
	if got := types(rec.messages(t)); !cmp.Equal(got, []string{wire.TypeBotStartedSpeaking}) {
		t.Errorf("after the bot spoke: %v", got)
	}
}
