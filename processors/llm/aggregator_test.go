package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
)

func TestUserTurnAggregatesTranscriptionsAndAsksForInference(t *testing.T) {
	pair := llm.NewPair(llm.NewContext(llm.SystemMessage("sys")), llm.PairOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, pair.User())
	h.send(&frames.UserStartedSpeaking{})
	h.send(&frames.InterimTranscription{Text: "what is"})
	h.send(&frames.Transcription{Text: "What is the"})
	h.send(&frames.Transcription{Text: " weather?  "})
	if n := count[*frames.LLMContext](h.Down()); n != 0 {
		t.Fatalf("inference while the user speaks: %d", n)
	}
	h.send(&frames.UserStoppedSpeaking{})
	h.waitFor("context", func(down, _ []frames.Frame) bool { return count[*frames.LLMContext](down) == 1 })

	down := h.Down()
	ctxs := pipelinetest.OfType[*frames.LLMContext](down)
	want := []frames.LLMMessage{llm.SystemMessage("sys"), llm.UserMessage("What is the weather?")}
	if d := cmp.Diff(want, ctxs[0].Messages); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
	for _, f := range down {
		switch f.(type) {
		case *frames.Transcription, *frames.InterimTranscription:
			t.Errorf("%s was forwarded", frames.TypeName(f))
		}
	}
	// The turn start interrupted the bot, both ways.
	if count[*frames.Interruption](down) != 1 || count[*frames.Interruption](h.Up()) != 1 {
		t.Errorf("interruptions: down %v up %v", names(down), names(h.Up()))
	}
	if count[*frames.UserStartedSpeaking](down) != 1 || count[*frames.UserStoppedSpeaking](down) != 1 {
		t.Errorf("turn frames not forwarded: %v", names(down))
	}
}

func TestTranscriptionOutsideATurnRunsAtOnce(t *testing.T) {
	pair := llm.NewPair(nil, llm.PairOptions{User: llm.UserOptions{NoInterruptions: true}})
	h := newHarness(t, pipeline.TaskOptions{}, pair.User())
	h.send(&frames.Transcription{Text: "typed text"})
	h.waitFor("context", func(down, _ []frames.Frame) bool { return count[*frames.LLMContext](down) == 1 })
	h.send(&frames.UserStartedSpeaking{})
	if n := count[*frames.Interruption](h.Down()); n != 0 {
		t.Errorf("NoInterruptions still interrupted")
	}
}

func TestUserAggregatorAppliesContextFrames(t *testing.T) {
	var hookRuns int
	pair := llm.NewPair(nil, llm.PairOptions{BeforeInference: func(c *llm.Context) {
		hookRuns++
		c.Add(llm.DeveloperMessage(fmt.Sprintf("<ui_state>%d</ui_state>", hookRuns)))
	}})
	h := newHarness(t, pipeline.TaskOptions{}, pair.User())
	tools := []frames.LLMTool{{Name: "t"}}
	h.send(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.SystemMessage("a")}})
	h.send(&frames.LLMSetTools{Tools: tools})
	h.send(&frames.LLMSetToolChoice{ToolChoice: frames.LLMToolChoice{Mode: "required"}})
	h.send(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("b")}, RunLLM: true})
	h.send(&frames.LLMMessagesUpdate{Messages: []frames.LLMMessage{llm.SystemMessage("fresh")}})
	h.send(&frames.LLMRun{})

	ctxs := pipelinetest.OfType[*frames.LLMContext](h.Down())
	if len(ctxs) != 2 {
		t.Fatalf("contexts: %v", names(h.Down()))
	}
	want1 := []frames.LLMMessage{llm.SystemMessage("a"), llm.UserMessage("b"), llm.DeveloperMessage("<ui_state>1</ui_state>")}
	if d := cmp.Diff(want1, ctxs[0].Messages); d != "" {
		t.Errorf("first (-want +got):\n%s", d)
	}
	want2 := []frames.LLMMessage{llm.SystemMessage("fresh"), llm.DeveloperMessage("<ui_state>2</ui_state>")}
	if d := cmp.Diff(want2, ctxs[1].Messages); d != "" {
		t.Errorf("second (-want +got):\n%s", d)
	}
	if len(ctxs[0].Tools) != 1 || ctxs[0].ToolChoice.Mode != "required" {
		t.Errorf("tools %v choice %v", ctxs[0].Tools, ctxs[0].ToolChoice)
	}
	down := h.Down()
	if count[*frames.LLMSetTools](down) != 1 {
		t.Error("LLMSetTools not forwarded")
	}
	if count[*frames.LLMMessagesAppend](down)+count[*frames.LLMMessagesUpdate](down)+count[*frames.LLMRun](down)+count[*frames.LLMSetToolChoice](down) != 0 {
		t.Errorf("context frames forwarded: %v", names(down))
	}
}

func TestAssistantRecordsLLMTextWithoutTTS(t *testing.T) {
	var turns []llm.AssistantTurn
	pair := llm.NewPair(nil, llm.PairOptions{Assistant: llm.AssistantOptions{OnTurn: func(a llm.AssistantTurn) { turns = append(turns, a) }}})
	h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
	for _, f := range []frames.Frame{
		&frames.LLMFullResponseStart{}, &frames.LLMText{Text: "Hello"}, &frames.LLMText{Text: " there"},
		&frames.LLMText{Text: "!"}, &frames.LLMFullResponseEnd{},
	} {
		h.send(f)
	}
	want := []frames.LLMMessage{llm.AssistantMessage("Hello there!")}
	if d := cmp.Diff(want, pair.Context().Messages()); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
	if len(turns) != 1 || turns[0].Interrupted {
		t.Errorf("turns = %+v", turns)
	}
}

func TestAssistantRecordsWhatTTSSpoke(t *testing.T) {
	pair := llm.NewPair(nil, llm.PairOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
	for _, f := range []frames.Frame{
		&frames.LLMFullResponseStart{}, &frames.LLMText{Text: "Hello there, friend!"},
		&frames.TTSText{Text: "Hello"}, &frames.TTSText{Text: "there,"}, &frames.TTSText{Text: "friend"}, &frames.TTSText{Text: "!"},
		&frames.LLMFullResponseEnd{},
		// A TTSSpeak utterance outside an LLM response is its own turn.
		&frames.TTSStarted{}, &frames.TTSText{Text: "Goodbye."}, &frames.TTSStopped{},
	} {
		h.send(f)
	}
	want := []frames.LLMMessage{llm.AssistantMessage("Hello there, friend!"), llm.AssistantMessage("Goodbye.")}
	if d := cmp.Diff(want, pair.Context().Messages()); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
}

// Speech asked for with TTSSpeak{NoContext: true} reaches the client but
// not the LLM context; the reply around it still does.
func TestAssistantLeavesTTSTextMarkedNoContextOut(t *testing.T) {
	pair := llm.NewPair(nil, llm.PairOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
	for _, f := range []frames.Frame{
		&frames.TTSStarted{}, &frames.TTSText{Text: "One", NoContext: true}, &frames.TTSText{Text: "moment.", NoContext: true}, &frames.TTSStopped{},
		&frames.LLMFullResponseStart{}, &frames.LLMText{Text: "Done."},
		&frames.TTSText{Text: "Done."}, &frames.TTSText{Text: "(aside)", NoContext: true},
		&frames.LLMFullResponseEnd{},
	} {
		h.send(f)
	}
	want := []frames.LLMMessage{llm.AssistantMessage("Done.")}
	if d := cmp.Diff(want, pair.Context().Messages()); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
}

func TestInterruptedReplyIsCommittedUpToTheInterruption(t *testing.T) {
	var turns []llm.AssistantTurn
	pair := llm.NewPair(nil, llm.PairOptions{Assistant: llm.AssistantOptions{
		InterruptedSuffix: " —",
		OnTurn:            func(a llm.AssistantTurn) { turns = append(turns, a) },
	}})
	h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
	h.send(&frames.LLMFullResponseStart{})
	h.send(&frames.TTSText{Text: "Let"})
	h.send(&frames.TTSText{Text: "me"})
	h.send(&frames.Interruption{})
	h.send(&frames.LLMFullResponseEnd{}) // a late end commits nothing more
	want := []frames.LLMMessage{llm.AssistantMessage("Let me —")}
	if d := cmp.Diff(want, pair.Context().Messages()); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
	if len(turns) != 1 || !turns[0].Interrupted {
		t.Errorf("turns = %+v", turns)
	}
}

func inProgress(id, group string) *frames.FunctionCallInProgress {
	return &frames.FunctionCallInProgress{FunctionCall: frames.FunctionCall{Name: "f", ToolCallID: id, Arguments: json.RawMessage(`{"q":1}`)}, GroupID: group, CancelOnInterruption: true}
}

func result(id, group string, v any) *frames.FunctionCallResult {
	return &frames.FunctionCallResult{FunctionCall: frames.FunctionCall{Name: "f", ToolCallID: id, Arguments: json.RawMessage(`{"q":1}`)}, GroupID: group, Result: v, Properties: frames.FunctionCallResultProperties{}}
}

func toolPair(id, content string) []frames.LLMMessage {
	return []frames.LLMMessage{
		{Role: "assistant", ToolCalls: []frames.LLMToolCall{{ID: id, Name: "f", Arguments: `{"q":1}`}}},
		{Role: "tool", ToolCallID: id, Content: content},
	}
}

func TestFunctionCallBookkeeping(t *testing.T) {
	pair := llm.NewPair(nil, llm.PairOptions{})
	a := pair.Assistant()
	h := newHarness(t, pipeline.TaskOptions{}, a)
	h.send(inProgress("c1", "g"))
	h.send(inProgress("c2", "g"))
	h.send(inProgress("c3", "g"))
	want := append(append(toolPair("c1", llm.ToolInProgress), toolPair("c2", llm.ToolInProgress)...), toolPair("c3", llm.ToolInProgress)...)
	if d := cmp.Diff(want, pair.Context().Messages()); d != "" {
		t.Errorf("in progress (-want +got):\n%s", d)
	}
	if n := a.FunctionCallsInProgress(); n != 3 {
		t.Errorf("in progress = %d", n)
	}
	h.send(result("c1", "g", map[string]int{"temp": 21}))
	h.send(result("c2", "g", nil))
	h.send(&frames.FunctionCallCancel{Name: "f", ToolCallID: "c3"})
	h.send(result("c3", "g", "late")) // after the cancel: ignored
	want = append(append(toolPair("c1", `{"temp":21}`), toolPair("c2", llm.ToolCompleted)...), toolPair("c3", llm.ToolCancelled)...)
	if d := cmp.Diff(want, pair.Context().Messages()); d != "" {
		t.Errorf("settled (-want +got):\n%s", d)
	}
	if n := a.FunctionCallsInProgress(); n != 0 {
		t.Errorf("in progress = %d", n)
	}
	// c1 had a value, so once the group settled inference ran, once.
	if n := count[*frames.LLMContext](h.Up()); n != 1 {
		t.Errorf("%d inferences", n)
	}
}

// §6 item 10: the cancel overtakes the in-progress frame. The call must end
// CANCELLED, never IN_PROGRESS, and nothing may stay in progress.
func TestLateInProgressCannotResurrectACancelledCall(t *testing.T) {
	for _, order := range []string{"cancel first", "interruption in between"} {
		t.Run(order, func(t *testing.T) {
			pair := llm.NewPair(nil, llm.PairOptions{})
			a := pair.Assistant()
			h := newHarness(t, pipeline.TaskOptions{}, a)
			if order == "cancel first" {
				h.send(&frames.FunctionCallCancel{Name: "f", ToolCallID: "c1"})
				h.send(inProgress("c1", "g"))
			} else {
				h.send(inProgress("c1", "g"))
				h.send(&frames.Interruption{})
				h.send(&frames.FunctionCallCancel{Name: "f", ToolCallID: "c1"})
				h.send(inProgress("c1", "g")) // a duplicate, late
			}
			h.send(result("c1", "g", "late result"))
			if d := cmp.Diff(toolPair("c1", llm.ToolCancelled), pair.Context().Messages()); d != "" {
				t.Errorf("context (-want +got):\n%s", d)
			}
			if n := a.FunctionCallsInProgress(); n != 0 {
				t.Errorf("function calls in progress = %d, want 0", n)
			}
			if n := count[*frames.LLMContext](h.Up()); n != 0 {
				t.Errorf("%d inferences for a cancelled call", n)
			}
		})
	}
}

// §6 item 14: the trigger matrix. One result with a value arrives while the
// user may be speaking, the bot may be speaking, a sibling of its group may
// be running and a result of another group may be on its way. Inference
// runs at once only when nothing holds it; otherwise it waits, and once
// everything has resolved it has run exactly once, from the right place.
func TestRerunTriggerMatrix(t *testing.T) {
	for _, userSpeaking := range []bool{false, true} {
		for _, botSpeaking := range []bool{false, true} {
			for _, sibling := range []bool{false, true} {
				for _, queued := range []bool{false, true} {
					name := fmt.Sprintf("user=%v/bot=%v/sibling=%v/queued=%v", userSpeaking, botSpeaking, sibling, queued)
					t.Run(name, func(t *testing.T) {
						pair := llm.NewPair(nil, llm.PairOptions{User: llm.UserOptions{NoInterruptions: true}})
						h := newHarness(t, pipeline.TaskOptions{}, pair.User(), pair.Assistant())
						inferences := func() (now, fromAssistant, fromUser int) {
							fromAssistant = count[*frames.LLMContext](h.Up())
							fromUser = count[*frames.LLMContext](h.Down())
							return fromAssistant + fromUser, fromAssistant, fromUser
						}

						h.send(inProgress("a", "g1"))
						if sibling {
							h.send(inProgress("b", "g1"))
						}
						if queued {
							h.send(inProgress("c", "g2"))
						}
						if botSpeaking {
							h.send(&frames.BotStartedSpeaking{})
						}
						if userSpeaking {
							h.send(&frames.UserStartedSpeaking{})
						}
						h.send(result("a", "g1", "value"))

						wantNow := 0
						if !userSpeaking && !botSpeaking && !sibling && !queued {
							wantNow = 1
						}
						if n, _, _ := inferences(); n != wantNow {
							t.Fatalf("inferences right after the result = %d, want %d", n, wantNow)
						}

						if sibling {
							h.send(result("b", "g1", nil))
						}
						if queued {
							h.send(result("c", "g2", "value"))
						}
						if botSpeaking {
							h.send(&frames.BotStoppedSpeaking{})
						}
						if userSpeaking {
							h.send(&frames.UserStoppedSpeaking{})
						}
						n, fromAssistant, fromUser := inferences()
						if n != 1 {
							t.Fatalf("inferences in the end = %d, want exactly 1", n)
						}
						if userSpeaking && fromUser != 1 {
							t.Errorf("while the user spoke the re-run must go to the end of the user's turn (from user: %d)", fromUser)
						}
						if !userSpeaking && fromAssistant != 1 {
							t.Errorf("the re-run must come from the assistant aggregator (from assistant: %d)", fromAssistant)
						}
						// The inference sees every settled result.
						all := append(pipelinetest.OfType[*frames.LLMContext](h.Up()), pipelinetest.OfType[*frames.LLMContext](h.Down())...)
						for _, m := range all[0].Messages {
							if m.Role == "tool" && m.Content == llm.ToolInProgress {
								t.Errorf("inference ran with %s still in progress", m.ToolCallID)
							}
						}
					})
				}
			}
		}
	}
}

func TestEmptyResultsDoNotRerunUnlessAsked(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name   string
		result *frames.FunctionCallResult
		want   int
	}{
		{"nil", result("a", "g", nil), 0},
		{"empty string", result("a", "g", ""), 0},
		{"raw null", result("a", "g", json.RawMessage("null")), 0},
		{"nil but asked", withRunLLM(result("a", "g", nil), &yes), 1},
		{"value but refused", withRunLLM(result("a", "g", "v"), &no), 0},
		{"value", result("a", "g", "v"), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pair := llm.NewPair(nil, llm.PairOptions{})
			h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
			h.send(inProgress("a", "g"))
			h.send(tc.result)
			if n := count[*frames.LLMContext](h.Up()); n != tc.want {
				t.Errorf("inferences = %d, want %d", n, tc.want)
			}
		})
	}
}

func withRunLLM(r *frames.FunctionCallResult, v *bool) *frames.FunctionCallResult {
	r.Properties.RunLLM = v
	return r
}

func TestAssistantMessagesFramesRunUpstream(t *testing.T) {
	pair := llm.NewPair(nil, llm.PairOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
	h.send(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.DeveloperMessage("note")}, RunLLM: true})
	h.send(&frames.LLMRun{})
	ctxs := pipelinetest.OfType[*frames.LLMContext](h.Up())
	if len(ctxs) != 2 || len(ctxs[0].Messages) != 1 || ctxs[0].Messages[0].Content != "note" {
		t.Errorf("up = %v", names(h.Up()))
	}
	if !strings.Contains(strings.Join(names(h.Down()), ","), "TextFrame") {
		t.Errorf("markers missing: %v", names(h.Down()))
	}
}

// A result that lands while the user speaks is answered by the user's own
// turn: one inference that holds both the result and what the user said.
func TestRerunHandedToTheUserTurnIsOneInference(t *testing.T) {
	pair := llm.NewPair(nil, llm.PairOptions{User: llm.UserOptions{NoInterruptions: true}})
	h := newHarness(t, pipeline.TaskOptions{}, pair.User(), pair.Assistant())
	h.send(inProgress("a", "g"))
	h.send(&frames.UserStartedSpeaking{})
	h.send(result("a", "g", "sunny"))
	h.send(&frames.Transcription{Text: "and in Rome?"})
	h.send(&frames.UserStoppedSpeaking{})
	up, down := pipelinetest.OfType[*frames.LLMContext](h.Up()), pipelinetest.OfType[*frames.LLMContext](h.Down())
	if len(up) != 0 || len(down) != 1 {
		t.Fatalf("inferences: %d from the assistant, %d from the user", len(up), len(down))
	}
	want := append(toolPair("a", "sunny"), llm.UserMessage("and in Rome?"))
	if d := cmp.Diff(want, down[0].Messages); d != "" {
		t.Errorf("inference saw (-want +got):\n%s", d)
	}
}

// The turn start overtakes (system lane) a final transcription still queued
// at the user aggregator; interrupting must not flush what the user said.
func TestTurnStartDoesNotDropQueuedTranscriptions(t *testing.T) {
	for range 10 {
		pair := llm.NewPair(nil, llm.PairOptions{})
		stt := pipeline.ProcessorFunc(func(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
			if tf, ok := f.(*frames.Text); ok && tf.Text == "speak" {
				h.Consume()
				h.Push(&frames.Transcription{Text: "first words"}, frames.Downstream)
				h.Push(&frames.UserStartedSpeaking{}, frames.Downstream)
			}
			return nil
		})
		h := newHarness(t, pipeline.TaskOptions{}, stt, pair.User())
		h.send(&frames.Text{Text: "speak"})
		h.send(&frames.UserStoppedSpeaking{})
		h.stop()
		if count[*frames.Interruption](h.Up()) != 1 || count[*frames.Interruption](h.Down()) != 1 {
			t.Fatalf("the turn start interrupted %d times upstream and %d downstream, want once each way",
				count[*frames.Interruption](h.Up()), count[*frames.Interruption](h.Down()))
		}
		msgs := pair.Context().Messages()
		if len(msgs) != 1 || msgs[0].Content != "first words" {
			t.Fatalf("context = %+v", msgs)
		}
	}
}

// A reply recorded while the user aggregator prepares a request (the bot's
// greeting ending just as the user's words arrive) waits until the request
// is taken: the before-inference hook sees the user's words last, so a hook
// that lays out user turns, as the UI agent's does, recognises this one.
func TestAReplyRecordedDuringTheBeforeInferenceHookWaitsForTheRequest(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var releaseOnce, hookOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	var lastRole string
	pair := llm.NewPair(llm.NewContext(llm.SystemMessage("sys")), llm.PairOptions{
		BeforeInference: func(c *llm.Context) {
			hookOnce.Do(func() {
				close(entered)
				<-release
				msgs := c.Messages()
				lastRole = msgs[len(msgs)-1].Role
			})
		},
	})
	user := newHarness(t, pipeline.TaskOptions{}, pair.User())
	asst := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
	user.task.QueueFrame(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("hello")}, RunLLM: true})
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the before-inference hook never ran")
	}
	asst.task.QueueFrames(&frames.LLMFullResponseStart{}, &frames.LLMText{Text: "Hi!"}, &frames.LLMFullResponseEnd{})
	// Time for the assistant aggregator to record the reply, were it not
	// made to wait: this decides whether the bug would show, never whether
	// the test passes.
	time.Sleep(50 * time.Millisecond)
	unblock()
	user.waitFor("the request", func(down, _ []frames.Frame) bool { return count[*frames.LLMContext](down) == 1 })
	if lastRole != llm.RoleUser {
		t.Errorf("the hook saw a %s message last, want the user's words", lastRole)
	}
	req := pipelinetest.OfType[*frames.LLMContext](user.Down())[0]
	if d := cmp.Diff([]frames.LLMMessage{llm.SystemMessage("sys"), llm.UserMessage("hello")}, req.Messages); d != "" {
		t.Errorf("request (-want +got):\n%s", d)
	}
	asst.waitFor("the reply recorded", func(_, _ []frames.Frame) bool { return len(pair.Context().Messages()) == 3 })
	want := []frames.LLMMessage{llm.SystemMessage("sys"), llm.UserMessage("hello"), llm.AssistantMessage("Hi!")}
	if d := cmp.Diff(want, pair.Context().Messages()); d != "" {
		t.Errorf("context after the reply (-want +got):\n%s", d)
	}
}
