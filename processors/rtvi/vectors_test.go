package rtvi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// The golden tests: every vector of rtvi_vectors.json is checked. Client
// vectors are decoded to their typed model and re-encoded; server vectors
// are produced from the equivalent frame (through the observer) or call
// (through the processor) and compared as decoded JSON.

// serverCase produces the message(s) equivalent to one server vector and
// says how the vector is compared.
type serverCase struct {
	// produce returns the messages the frame or call produced; the vector
	// is compared with the one of the given type (the first).
	produce func(t *testing.T) []any
	// adjust rewrites the vector before comparison, for JS-test quirks and
	// values that cannot be reproduced (ids of frames).
	adjust func(want obj, got obj)
	// prefix, when set, compares data.error by this prefix only (pydantic
	// texts cannot be reproduced).
	prefix string
}

// observed returns a producer that runs the frames through an observer
// for a client of version v; text frames come from the output transport.
func observed(v string, opts ObserverOptions, mk func() []frames.Frame) func(t *testing.T) []any {
	return func(t *testing.T) []any {
		p, rec := testProcessor(v)
		o := NewObserver(p, opts)
		for _, f := range mk() {
			src := llmNode
			switch f.(type) {
			case *frames.AggregatedText, *frames.TTSText, *frames.AggregatedTextProgress:
				src = transportNode
			}
			observe(o, src, f)
		}
		return rec.messages(t)
	}
}

// handshake runs a client message through a processor (with about set as
// the vectors' Python server had it) and returns the replies.
func handshake(msgs ...string) func(t *testing.T) []any {
	return func(t *testing.T) []any {
		p := NewProcessor(Options{About: wire.RawJSON(`{"library":"pipecat-ai","library_version":"1.7.0"}`)})
		res := runProcessor(t, p, msgs...)
		return sent(t, res.Down())
	}
}

// called returns the messages a direct call sends.
func called(fn func(p *Processor)) func(t *testing.T) []any {
	return func(t *testing.T) []any {
		p, rec := testProcessor("")
		fn(p)
		return rec.messages(t)
	}
}

func clientReady(id, version string) string {
	if version == "" {
		return fmt.Sprintf(`{"label":"rtvi-ai","type":"client-ready","id":%q,"data":{}}`, id)
	}
	return fmt.Sprintf(`{"label":"rtvi-ai","type":"client-ready","id":%q,"data":{"version":%q,"about":{"library":"t"}}}`, id, version)
}

// dropKeys removes the JS-test-only envelope keys.
func dropKeys(keys ...string) func(want, got obj) {
	return func(want, _ obj) {
		for _, k := range keys {
			delete(want, k)
		}
	}
}

// sameSegment copies segment_id from the output: it is the frame's id,
// which a test cannot choose.
func sameSegment(want, got obj) {
	want["data"].(obj)["segment_id"] = got["data"].(obj)["segment_id"]
}

func serverCases() map[string]serverCase {
	noData := func(f func() frames.Frame) serverCase {
		return serverCase{produce: observed("2.1.0", ObserverOptions{EnableVADUserSpeaking: true}, func() []frames.Frame { return []frames.Frame{f()} })}
	}
	speaking := func(v string, f func() frames.Frame) func(t *testing.T) []any {
		return observed(v, ObserverOptions{}, func() []frames.Frame { return []frames.Frame{&frames.BotStartedSpeaking{}, f()} })
	}
	cmd := func(c wire.Command) serverCase {
		return serverCase{produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame { return []frames.Frame{NewUICommand(c)} })}
	}
	task := func(v string, e wire.TaskEvent, adjust func(want, got obj)) serverCase {
		return serverCase{produce: observed(v, ObserverOptions{}, func() []frames.Frame { return []frames.Frame{&UITaskFrame{Event: e}} }), adjust: adjust}
	}
	levels := func(l ReportLevel) ObserverOptions {
		return ObserverOptions{FunctionCallReportLevels: map[string]ReportLevel{"*": l}}
	}
	clientMsg := ClientMessage{ID: "a1b2c3d4", Type: "get-location"}
	return map[string]serverCase{
		"bot-ready (default about)":                         {produce: handshake(clientReady("3f2a9c1e", "2.1.0"))},
		"bot-ready to a legacy 1.x client (version echoed)": {produce: handshake(clientReady("9b0c11aa", "1.3.0"))},
		// The test stub injects bot-ready 1.0.0 with id 123 and no about; the
		// equivalent is a 1.0.0 client, whose version is echoed. about is
		// optional for the client and framewire always sends it.
		"bot-ready as injected by the JS test transport stub": {
			produce: handshake(clientReady("123", "1.0.0")),
			adjust:  func(want, got obj) { want["data"].(obj)["about"] = got["data"].(obj)["about"] },
		},
		"error-response: client-ready version check (None)":  {produce: handshake(clientReady("req-1", ""))},
		"error-response: client-ready version check (1.2)":   {produce: handshake(clientReady("req-1", "1.2"))},
		"error-response: client-ready version check (3.0.0)": {produce: handshake(clientReady("req-1", "3.0.0"))},
		"error-response: client-ready version check (0.3.0)": {produce: handshake(clientReady("req-1", "0.3.0"))},
		"error: invalid RTVI transport message": {
			produce: func(t *testing.T) []any {
				return handshake(string(vectorByName(t, "envelope invalid (missing id) -> error").JSON))(t)
			},
			prefix: "Invalid RTVI transport message: ",
		},
		"error: fatal pipeline error": {produce: func(t *testing.T) []any {
			p, rec := testProcessor("")
			p.sendErrorFrame(&frames.Error{Err: errors.New("LLM service authentication failed"), Category: frames.ErrorPermanent})
			return rec.messages(t)
		}, prefix: "The bot is unavailable (error id "}, // the wire shape; the text is framewire's own
		"error-response: unsupported type": {produce: handshake(`{"label":"rtvi-ai","type":"describe-config","id":"u1","data":{}}`)},
		// Python answers dtmf {button} with this; framewire accepts that
		// form (docs/protocol.md §5), so an empty buttons list stands in.
		"error-response: data validation failure": {
			produce: handshake(`{"label":"rtvi-ai","type":"dtmf","id":"9","data":{"buttons":[]}}`),
			prefix:  "Invalid message: ",
		},
		"server-response": {produce: called(func(p *Processor) {
			p.SendServerResponse(clientMsg, wire.RawJSON(`{"lat": 41.4, "lon": 2.17}`))
		})},
		"error-response to a client-message": {produce: called(func(p *Processor) { p.SendErrorResponse(clientMsg, "location unavailable") })},
		"server-message": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&ServerMessageFrame{Data: wire.RawJSON(`{"kind":"score","value":3}`)}}
		})},
		"user-started-speaking":     noData(func() frames.Frame { return &frames.UserStartedSpeaking{} }),
		"user-stopped-speaking":     noData(func() frames.Frame { return &frames.UserStoppedSpeaking{} }),
		"vad-user-started-speaking": noData(func() frames.Frame { return &frames.VADUserStartedSpeaking{} }),
		"vad-user-stopped-speaking": noData(func() frames.Frame { return &frames.VADUserStoppedSpeaking{} }),
		"user-mute-started":         noData(func() frames.Frame { return &frames.UserMuteStarted{} }),
		"user-mute-stopped":         noData(func() frames.Frame { return &frames.UserMuteStopped{} }),
		"bot-started-speaking":      noData(func() frames.Frame { return &frames.BotStartedSpeaking{} }),
		"bot-stopped-speaking":      noData(func() frames.Frame { return &frames.BotStoppedSpeaking{} }),
		"bot-interrupted":           noData(func() frames.Frame { return &frames.Interruption{} }),
		"bot-llm-started":           noData(func() frames.Frame { return &frames.LLMFullResponseStart{} }),
		"bot-llm-stopped":           noData(func() frames.Frame { return &frames.LLMFullResponseEnd{} }),
		"bot-tts-started":           noData(func() frames.Frame { return &frames.TTSStarted{} }),
		"bot-tts-stopped":           noData(func() frames.Frame { return &frames.TTSStopped{} }),
		// The JS test adds an id and data:{}; the Python wire has neither.
		"user-mute-started as sent in the JS test": {
			produce: noData(func() frames.Frame { return &frames.UserMuteStarted{} }).produce,
			adjust:  dropKeys("id", "data"),
		},
		"user-transcription (interim)": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&frames.InterimTranscription{Text: "what's the", Timestamp: "2026-07-14T12:00:00.123+00:00"}}
		})},
		"user-transcription (final)": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&frames.Transcription{Text: "what's the weather", UserID: "participant-1", Timestamp: "2026-07-14T12:00:00.456+00:00"}}
		})},
		"user-llm-text": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&frames.LLMContext{Messages: []frames.LLMMessage{
				{Role: "system", Content: "be brief"}, {Role: "user", Content: "what's the weather"}}}}
		})},
		"bot-llm-text": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&frames.LLMText{Text: "It's"}}
		})},
		"bot-transcription (deprecated)": {produce: func(t *testing.T) []any {
			msgs := observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
				return []frames.Frame{&frames.LLMText{Text: "It's"}, &frames.LLMText{Text: " sunny"}, &frames.LLMText{Text: " today."}}
			})(t)
			return ofType(msgs, wire.TypeBotTranscription)
		}},
		"bot-tts-text": {produce: func(t *testing.T) []any {
			return ofType(speaking("2.1.0", func() frames.Frame { return &frames.TTSText{Text: "sunny", AggregatedBy: "word"} })(t), wire.TypeBotTTSText)
		}},
		"bot-output v2: new spoken segment (word-timestamp TTS)": {
			produce: botOutput("2.1.0", func() frames.Frame {
				return &frames.AggregatedText{Text: "Hello world.", AggregatedBy: "sentence", WillBeSpoken: true}
			}),
			adjust: sameSegment,
		},
		"bot-output v2: progress in-progress": {produce: botOutput("2.1.0", func() frames.Frame {
			return &frames.AggregatedTextProgress{Text: "Hello world.", AggregatedBy: "sentence", SegmentID: 1, AccumulatedText: "Hello", RemainingText: " world."}
		})},
		"bot-output v2: progress completed": {produce: botOutput("2.1.0", func() frames.Frame {
			return &frames.AggregatedTextProgress{Text: "Hello world.", AggregatedBy: "sentence", SegmentID: 1, AccumulatedText: "Hello world."}
		})},
		"bot-output v2: TTSTextFrame path (text pushed after synthesis)": {
			produce: botOutput("2.1.0", func() frames.Frame { return &frames.TTSText{Text: "How are you?", AggregatedBy: "sentence"} }),
			adjust:  sameSegment,
		},
		"bot-output v2: not spoken (e.g. skip_tts / code block)": {
			produce: botOutput("2.1.0", func() frames.Frame { return &frames.AggregatedText{Text: "print('hi')", AggregatedBy: "code"} }),
			adjust:  sameSegment,
		},
		"bot-output legacy (1.x server): unspoken sentence": {produce: botOutput("1.3.0", func() frames.Frame {
			return &frames.AggregatedText{Text: "Hello world.", AggregatedBy: "sentence", WillBeSpoken: true}
		})},
		"bot-output legacy (1.x server): spoken word": {produce: botOutput("1.4.0", func() frames.Frame {
			return &frames.TTSText{Text: "Hello", AggregatedBy: "word"}
		})},
		"llm-function-call-started (report level NONE, default)": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&frames.FunctionCallsStarted{Calls: []frames.FunctionCall{{Name: "testFunction", ToolCallID: "call-456"}}}}
		})},
		"llm-function-call-started (NAME/FULL)": {produce: observed("2.1.0", levels(ReportName), func() []frames.Frame {
			return []frames.Frame{&frames.FunctionCallsStarted{Calls: []frames.FunctionCall{{Name: "testFunction", ToolCallID: "call-456"}}}}
		})},
		"llm-function-call-in-progress (NONE)": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{inProgress()}
		})},
		"llm-function-call-in-progress (FULL)": {produce: observed("2.1.0", levels(ReportFull), func() []frames.Frame {
			return []frames.Frame{inProgress()}
		})},
		// The JS test feeds args and an id; the server field is arguments.
		"llm-function-call-in-progress as in the JS test": {
			produce: observed("2.1.0", levels(ReportFull), func() []frames.Frame { return []frames.Frame{inProgress()} }),
			adjust: func(want, _ obj) {
				delete(want, "id")
				d := want["data"].(obj)
				d["arguments"] = d["args"]
				delete(d, "args")
			},
		},
		"llm-function-call-stopped (result, FULL)": {produce: observed("2.1.0", levels(ReportFull), func() []frames.Frame {
			return []frames.Frame{&frames.FunctionCallResult{
				FunctionCall: frames.FunctionCall{Name: "testFunction", ToolCallID: "call-789"},
				Result:       map[string]any{"success": true},
			}}
		})},
		"llm-function-call-stopped (cancelled, NAME)": {produce: observed("2.1.0", levels(ReportName), func() []frames.Frame {
			return []frames.Frame{&frames.FunctionCallCancel{Name: "testFunction", ToolCallID: "call-789"}}
		})},
		// Sent only by Python's deprecated handle_function_call, without an
		// id; the model is encoded directly.
		"llm-function-call (deprecated)": {
			produce: called(func(p *Processor) {
				p.Send(wire.Message{Type: wire.TypeLLMFunctionCall, Data: wire.LLMFunctionCall{
					FunctionName: "deprecatedFunction", ToolCallID: "call-999", Args: wire.RawJSON(`{"deprecated":true}`)}})
			}),
			adjust: dropKeys("id"),
		},
		"metrics (ttfb only)": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&frames.Metrics{Data: []frames.Metric{
				{Kind: frames.MetricTTFB, Processor: "cartesia_tts", Model: "sonic-english", Value: 200 * time.Millisecond}}}}
		})},
		// frames.Metric has no TTFA kind nor audio token counts yet, so this
		// vector is produced from the wire model; TestMetricsFromFrame
		// covers every kind a frame can carry.
		"metrics (all types in one frame)": {produce: called(func(p *Processor) {
			p.Send(wire.Message{Type: wire.TypeMetrics, Data: wire.Metrics{
				TTFB:       []wire.TimingMetric{{Processor: "cartesia_tts", Value: 0.2}},
				TTFA:       []wire.TTFAMetric{{Processor: "cartesia_tts", TTFA: 0.6, TTFB: 0.2, LeadingSilence: 0.4}},
				Processing: []wire.TimingMetric{{Processor: "llm", Value: 0.05}},
				Tokens:     []wire.TokenUsage{{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30, InputAudioTokens: 7, OutputAudioTokens: 13}},
				STTUsage:   []wire.STTUsageMetric{{Processor: "soniox_stt", AudioSeconds: 1.5}},
				Characters: []wire.CharactersMetric{{Processor: "cartesia_tts", Value: 42}},
			}})
		})},
		"user-audio-level": {produce: observed("2.1.0", ObserverOptions{EnableUserAudioLevel: true}, func() []frames.Frame {
			return []frames.Frame{&frames.InputAudioRaw{Audio: constantPCM(596, 320)}}
		})},
		"bot-audio-level": {produce: observed("2.1.0", ObserverOptions{EnableBotAudioLevel: true}, func() []frames.Frame {
			return []frames.Frame{&frames.TTSAudioRaw{Audio: constantPCM(0, 320)}}
		})},
		// framewire does not forward its logs; the model is encoded directly.
		"system-log": {produce: called(func(p *Processor) {
			p.Send(wire.Message{Type: wire.TypeSystemLog, Data: wire.Text{Text: "2026-07-14 12:00:00.000 | DEBUG | ..."}})
		})},
		"bot-llm-search-response (Google observer)": {produce: called(func(p *Processor) {
			p.Send(wire.Message{Type: wire.TypeBotLLMSearchResponse, Data: wire.SearchResponse{
				SearchResult: "Paris is the capital of France.", RenderedContent: "<div>...</div>",
				Origins: []wire.SearchOrigin{{SiteURI: "https://example.org", SiteTitle: "Example",
					Results: []wire.SearchResult{{Text: "Paris is the capital", Confidence: []float64{0.98}}}}},
			}})
		})},
		"ui-command toast (PY test)": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&UICommandFrame{Command: "toast", Payload: wire.RawJSON(`{"title":"Saved"}`)}}
		})},
		"ui-command toast (JS test)": {
			produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
				return []frames.Frame{&UICommandFrame{Command: "toast", Payload: wire.JSON(map[string]string{"title": "Hi"})}}
			}),
			adjust: dropKeys("id"),
		},
		"ui-command toast via UIWorker.send_command (test_toast_required_only)":                                 cmd(wire.Toast{Title: "Saved"}),
		"ui-command navigate via UIWorker.send_command (test_navigate)":                                         cmd(wire.Navigate{View: "home", Params: wire.RawJSON(`{"id":"42"}`)}),
		"ui-command scroll_to via UIWorker.send_command (test_scroll_to_with_ref)":                              cmd(wire.ScrollTo{Ref: "e42", Behavior: "smooth"}),
		"ui-command highlight via UIWorker.send_command (test_highlight_with_target_id)":                        cmd(wire.Highlight{TargetID: "cta", DurationMS: 2000}),
		"ui-command focus via UIWorker.send_command (test_focus)":                                               cmd(wire.Focus{Ref: "e7"}),
		"ui-command click via UIWorker.send_command (test_click)":                                               cmd(wire.Click{Ref: "e9"}),
		"ui-command set_input_value via UIWorker.send_command (test_set_input_value_default_replace_true)":      cmd(wire.SetInputValue{Value: "Marie Curie", Ref: "e3"}),
		"ui-command set_input_value via UIWorker.send_command (test_set_input_value_append)":                    cmd(wire.SetInputValue{Value: "more", Ref: "e3", Append: true}),
		"ui-command select_text via UIWorker.send_command (test_select_text_full)":                              cmd(wire.SelectText{Ref: "e15", StartOffset: new(4), EndOffset: new(12)}),
		"ui-command select_text via UIWorker.send_command (test_select_text_whole_target_when_offsets_omitted)": cmd(wire.SelectText{Ref: "e15"}),
		"ui-command with no payload (observer path)": {produce: observed("2.1.0", ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&UICommandFrame{Command: "refresh"}}
		})},
		"ui-job-group group_started (PY test values)": task("2.1.0", wire.GroupStarted{TaskID: "t-1", Agents: []string{"a", "b"}, Label: "Search", Cancellable: true, At: 42}, nil),
		"ui-job-group group_started (JS test)":        task("2.0.0", wire.GroupStarted{TaskID: "t1", Agents: []string{"w1", "w2"}, Label: "Doing stuff", Cancellable: true, At: 1700}, dropKeys("id")),
		"ui-job-group job_update (JS test)": task("1.4.0", wire.TaskUpdate{TaskID: "t1", AgentName: "w1",
			Data: wire.RawJSON(`{"kind":"tool_call","tool":"WebSearch"}`), At: 1701}, dropKeys("id")),
		"ui-job-group job_completed (react test values)": task("2.1.0", wire.TaskCompleted{TaskID: "t1", AgentName: "w1", Status: wire.StatusCompleted,
			Response: wire.RawJSON(`{"ok":true}`), At: 1702}, nil),
		"ui-job-group job_completed cancelled (after ui-cancel-job-group)": task("2.1.0", wire.TaskCompleted{TaskID: "t1", AgentName: "w2", Status: wire.StatusCancelled, At: 1703}, nil),
		"ui-job-group group_completed (react test values)":                 task("2.1.0", wire.GroupCompleted{TaskID: "t1", At: 1704}, nil),
		"ui-task group_started (RTVI 1.3.0)":                               task("1.3.0", wire.GroupStarted{TaskID: "t1", Agents: []string{"w1", "w2"}, Label: "Doing stuff", Cancellable: true, At: 1700}, dropKeys("id")),
		"ui-task task_update (RTVI 1.3.0)": task("1.3.0", wire.TaskUpdate{TaskID: "t1", AgentName: "w1",
			Data: wire.RawJSON(`{"kind":"tool_call","tool":"WebSearch"}`), At: 1701}, dropKeys("id")),
		"ui-task task_completed (RTVI 1.3.0)": task("1.3.0", wire.TaskCompleted{TaskID: "t-1", AgentName: "a", Status: wire.StatusCompleted,
			Response: wire.RawJSON(`{"ok":true}`), At: 44}, nil),
		"ui-task group_completed (RTVI 1.3.0)": task("1.3.0", wire.GroupCompleted{TaskID: "t-1", At: 45}, nil),
	}
}

func inProgress() *frames.FunctionCallInProgress {
	return &frames.FunctionCallInProgress{FunctionCall: frames.FunctionCall{
		Name: "testFunction", ToolCallID: "call-456", Arguments: []byte(`{"param1":"value1"}`)}}
}

// botOutput returns the bot-output messages a text frame produces while
// the bot speaks, for a client of version v.
func botOutput(v string, f func() frames.Frame) func(t *testing.T) []any {
	return func(t *testing.T) []any {
		return ofType(observed(v, ObserverOptions{}, func() []frames.Frame {
			return []frames.Frame{&frames.BotStartedSpeaking{}, f()}
		})(t), wire.TypeBotOutput)
	}
}

// ofType keeps the messages of type typ.
func ofType(msgs []any, typ string) []any {
	var out []any
	for _, m := range msgs {
		if mm, ok := m.(obj); ok && mm["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// constantPCM returns 16-bit mono PCM of n samples all equal to v.
func constantPCM(v int16, n int) frames.Audio {
	pcm := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		pcm[2*i], pcm[2*i+1] = byte(v), byte(uint16(v)>>8)
	}
	return frames.Audio{PCM: pcm, SampleRate: 16000, Channels: 1}
}

func TestServerVectorsProducedFromFramesAndCalls(t *testing.T) {
	cases := serverCases()
	seen := 0
	for _, v := range loadVectors(t) {
		if v.Direction != "server->client" {
			continue
		}
		seen++
		c, ok := cases[v.Name]
		if !ok {
			t.Errorf("no producer for server vector %q", v.Name)
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			want := decodeAny(t, v.JSON).(obj)
			msgs := ofType(c.produce(t), want["type"].(string))
			if len(msgs) != 1 {
				t.Fatalf("produced %d messages of type %v, want 1: %v", len(msgs), want["type"], msgs)
			}
			got := msgs[0].(obj)
			if c.adjust != nil {
				c.adjust(want, got)
			}
			if c.prefix != "" {
				text, _ := got["data"].(obj)["error"].(string)
				if !strings.HasPrefix(text, c.prefix) {
					t.Errorf("error text %q lacks prefix %q", text, c.prefix)
				}
				got["data"].(obj)["error"] = want["data"].(obj)["error"]
			}
			if d := diffJSON(want, got); d != "" {
				t.Errorf("message differs (-vector +produced):\n%s", d)
			}
		})
	}
	if seen != 78 || len(cases) != seen {
		t.Errorf("checked %d server vectors with %d cases, want 78 of each", seen, len(cases))
	}
}
