package llm_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/quick"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
)

// The tests of issue 26 row 9: the context is bounded.

// contextBytes is the size of msgs as llm.Limits counts it.
func contextBytes(msgs []frames.LLMMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.Raw)
		for _, p := range m.Parts {
			n += len(p.Type) + len(p.Text) + len(p.ImageURL) + len(p.Detail) + len(p.AudioData) + len(p.AudioFormat)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	return n
}

var cutMarker = regexp.MustCompile(`\n\[… (\d+) bytes cut\]$`)

// Row 9: a client that sends 250,000 characters with send-text and
// run_immediately false twice a second (the user aggregator appends each
// as a user message without running the model) grew the context by
// 30 MB a minute. Within the default limits each message is cut to
// 64 KiB with a marker, and the oldest go: after a minute of it the
// context holds the system prompt and at most 256 KiB.
func TestSendTextFloodKeepsTheContextBounded(t *testing.T) {
	pair := llm.NewPair(llm.NewContext(llm.SystemMessage("You help.")), llm.PairOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, pair.User())
	text := strings.Repeat("spam ", 50_000) // 250,000 characters
	const n = 120                           // a minute at 2 a second
	for i := range n {
		h.send(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage(fmt.Sprint(i, text))}})
	}
	h.send(&frames.LLMRun{})
	h.waitFor("the inference", func(down, _ []frames.Frame) bool { return count[*frames.LLMContext](down) == 1 })
	msgs := pair.Context().Messages()
	if size := contextBytes(msgs); size > llm.DefaultMaxBytes {
		t.Errorf("the context holds %d bytes after %d messages of %d, want at most %d", size, n, len(text), llm.DefaultMaxBytes)
	}
	if !reflect.DeepEqual(msgs[0], llm.SystemMessage("You help.")) {
		t.Errorf("the system prompt went: %+v", msgs[0].Role)
	}
	last := msgs[len(msgs)-1]
	if !strings.HasPrefix(last.Content, fmt.Sprint(n-1, "spam")) || len(last.Content) > llm.DefaultMaxMessageBytes {
		t.Errorf("the newest message is %.20q… (%d bytes), want the last one sent, cut to %d bytes", last.Content, len(last.Content), llm.DefaultMaxMessageBytes)
	}
	m := cutMarker.FindStringSubmatch(last.Content)
	if m == nil || len(last.Content)-len(m[0])+atoi(t, m[1]) != len(fmt.Sprint(n-1, text)) {
		t.Errorf("the cut message ends %q, want a marker counting the bytes cut", last.Content[max(0, len(last.Content)-40):])
	}
	t.Logf("%d messages of %d bytes: the context holds %d messages, %d bytes", n, len(text), len(msgs), contextBytes(msgs))
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A user who speaks without end (an STT that transcribes for ever during
// one turn) gives one user message within the message limit, with the
// marker, however long the turn.
func TestUserTurnThatRunsOnIsBounded(t *testing.T) {
	c := llm.NewContext()
	c.SetLimits(llm.Limits{MaxMessageBytes: 1000})
	pair := llm.NewPair(c, llm.PairOptions{User: llm.UserOptions{NoInterruptions: true}})
	h := newHarness(t, pipeline.TaskOptions{}, pair.User())
	h.send(&frames.UserStartedSpeaking{})
	for range 500 {
		h.send(&frames.Transcription{Text: "blah blah blah"}) // 14 bytes and a space
	}
	h.stop() // End, behind the transcriptions: the turn so far is recorded
	msgs := c.Messages()
	if len(msgs) != 1 || len(msgs[0].Content) > 1000 {
		t.Fatalf("context %d messages, the first of %d bytes; want one of at most 1000", len(msgs), len(msgs[0].Content))
	}
	m := cutMarker.FindStringSubmatch(msgs[0].Content)
	if total := 500*15 - 1; m == nil || len(msgs[0].Content)-len(m[0])+atoi(t, m[1]) != total ||
		strings.Count(msgs[0].Content, " bytes cut]") != 1 {
		t.Errorf("message ends %q, want the marker counting what was cut of %d bytes", msgs[0].Content[len(msgs[0].Content)-30:], total)
	}
}

// Only the messages of others are cut: a long system prompt or developer
// instruction stays whole, and so do tool-call arguments.
func TestLongMessagesAreCutButNotTheApplications(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes, two per character
	c := llm.NewContext()
	c.SetLimits(llm.Limits{MaxMessageBytes: 500, MaxBytes: -1, MaxMessages: -1})
	c.Add(llm.SystemMessage(long), llm.DeveloperMessage(long), llm.UserMessage(long),
		frames.LLMMessage{Role: llm.RoleAssistant, ToolCalls: []frames.LLMToolCall{{ID: "c1", Name: "f", Arguments: `{"a":"` + long + `"}`}}},
		frames.LLMMessage{Role: llm.RoleTool, ToolCallID: "c1", Content: long},
		frames.LLMMessage{Role: llm.RoleUser, Parts: []frames.LLMContentPart{{Type: "text", Text: long}, {Type: "image_url", ImageURL: "https://x/y.png"}}})
	msgs := c.Messages()
	if msgs[0].Content != long || msgs[1].Content != long || msgs[3].ToolCalls[0].Arguments != `{"a":"`+long+`"}` {
		t.Error("the system prompt, a developer message or a call's arguments were cut")
	}
	for _, i := range []int{2, 4, 5} {
		m := msgs[i]
		text := m.Content
		if len(m.Parts) > 0 {
			text = m.Parts[0].Text
		}
		if size := contextBytes(msgs[i : i+1]); size > 500 || !cutMarker.MatchString(text) || !strings.HasPrefix(text, "éé") {
			t.Errorf("message %d (%s): %d bytes, %q…; want at most 500 ending with the marker", i, m.Role, size, text[:10])
		}
		if strings.ContainsRune(text, '\uFFFD') || !strings.HasPrefix(text, strings.TrimSuffix(text[:strings.Index(text, "\n[…")], "")) {
			t.Errorf("message %d was cut inside a character", i)
		}
	}
}

// Past the message count the oldest turns go whole: the system prompt and
// the application's preamble stay, a function call goes with its results,
// and the conversation starts again with a user message.
func TestTrimmingKeepsThePreambleAndCallsWithTheirResults(t *testing.T) {
	call := func(ids ...string) frames.LLMMessage {
		m := frames.LLMMessage{Role: llm.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, frames.LLMToolCall{ID: id, Name: "f", Arguments: "{}"})
		}
		return m
	}
	result := func(id string) frames.LLMMessage {
		return frames.LLMMessage{Role: llm.RoleTool, ToolCallID: id, Content: "ok"}
	}
	c := llm.NewContext(llm.SystemMessage("sys"), llm.DeveloperMessage("app note"))
	c.Add(llm.UserMessage("one"), call("c1", "c2"), result("c1"), result("c2"), llm.AssistantMessage("done one"))
	c.Add(llm.UserMessage("two"), call("c3"), result("c3"), llm.AssistantMessage("done two"))
	c.Add(llm.UserMessage("three"))
	c.SetLimits(llm.Limits{MaxMessages: 8})
	want := []frames.LLMMessage{llm.SystemMessage("sys"), llm.DeveloperMessage("app note"),
		llm.UserMessage("two"), call("c3"), result("c3"), llm.AssistantMessage("done two"), llm.UserMessage("three")}
	if got := c.Messages(); !reflect.DeepEqual(want, got) {
		t.Errorf("context after trimming to 8:\n got %v\nwant %v", roles(got), roles(want))
	}
	// One message fewer: the call c3 cannot go without its result, nor
	// stay without "two", so the whole turn goes.
	c.SetLimits(llm.Limits{MaxMessages: 6})
	want = []frames.LLMMessage{llm.SystemMessage("sys"), llm.DeveloperMessage("app note"), llm.UserMessage("three")}
	if got := c.Messages(); !reflect.DeepEqual(want, got) {
		t.Errorf("context after trimming to 6:\n got %v\nwant %v", roles(got), roles(want))
	}
}

func roles(msgs []frames.LLMMessage) []string {
	var out []string
	for _, m := range msgs {
		s := m.Role + ":" + m.Content + m.ToolCallID
		for _, tc := range m.ToolCalls {
			s += tc.ID
		}
		out = append(out, s)
	}
	return out
}

// The property, for any conversation and limits: the preamble, every
// system message, the newest user message and the last message stay; no
// tool result is left without its call and no call without its results;
// after the preamble the conversation starts with a user message when
// anything was dropped; and the context is within its limits unless what
// must stay passes them.
func TestTrimmingPolicyHolds(t *testing.T) {
	check := func(msgs []frames.LLMMessage, l llm.Limits) (ok bool) {
		c := llm.NewContext()
		defer func() {
			if !ok {
				t.Logf("limits %+v\nin  %q\nout %q", l, roles(msgs), roles(c.Messages()))
			}
		}()
		c.SetLimits(llm.Limits{MaxBytes: -1, MaxMessages: -1, MaxMessageBytes: -1})
		c.Add(msgs...)
		c.SetLimits(l)
		got := c.Messages()
		pre := 0
		for pre < len(msgs) && (msgs[pre].Role == llm.RoleSystem || msgs[pre].Role == llm.RoleDeveloper) {
			pre++
		}
		if len(got) < pre || (pre > 0 && !reflect.DeepEqual(msgs[:pre], got[:pre])) {
			t.Logf("preamble changed")
			return false
		}
		must := map[int]bool{len(msgs) - 1: true}
		for i := len(msgs) - 1; i >= pre; i-- {
			if msgs[i].Role == llm.RoleUser {
				must[i] = true
				break
			}
		}
		for i, m := range msgs {
			if m.Role == llm.RoleSystem || i < pre {
				must[i] = true
			}
		}
		// got is a subsequence of msgs (whose messages all differ, but for
		// the preamble's): find which ones stayed.
		kept := map[int]bool{}
		j := 0
		for i := range msgs {
			if j < len(got) && reflect.DeepEqual(msgs[i], got[j]) {
				kept[i] = true
				j++
			}
		}
		if j != len(got) {
			t.Logf("the context is not what was added, less some messages")
			return false
		}
		for i := range must {
			if len(msgs) > 0 && !kept[i] {
				t.Logf("message %d (%s) must stay", i, msgs[i].Role)
				return false
			}
		}
		calls, results := map[string]bool{}, map[string]bool{}
		for _, m := range got {
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = true
			}
			if m.Role == llm.RoleTool {
				if !calls[m.ToolCallID] {
					t.Logf("result %s without its call", m.ToolCallID)
					return false
				}
				results[m.ToolCallID] = true
			}
		}
		for i, m := range msgs {
			for _, tc := range m.ToolCalls {
				if kept[i] && !results[tc.ID] && hasResult(msgs, tc.ID) {
					t.Logf("call %s kept without its result", tc.ID)
					return false
				}
			}
		}
		if len(got) < len(msgs) {
			for _, m := range got[pre:] {
				if m.Role == llm.RoleSystem {
					continue
				}
				if m.Role != llm.RoleUser && !hasUserAfter(got, pre) {
					break
				}
				if m.Role != llm.RoleUser {
					t.Logf("the conversation starts with %s", m.Role)
					return false
				}
				break
			}
		}
		eff := c.Limits()
		if len(got) > eff.MaxMessages || contextBytes(got) > eff.MaxBytes {
			// Over: only what must stay, and what cannot go without it
			// (the calls and results of the last turn), may be left.
			for i := range msgs {
				if kept[i] && !must[i] && i < lastUserIndex(msgs, pre) && msgs[i].Role != llm.RoleTool {
					t.Logf("over the limits with message %d (%s) left", i, msgs[i].Role)
					return false
				}
			}
		}
		return true
	}
	cfg := &quick.Config{MaxCount: 2000, Values: func(args []reflect.Value, r *rand.Rand) {
		args[0] = reflect.ValueOf(randomConversation(r))
		args[1] = reflect.ValueOf(llm.Limits{MaxMessages: 1 + r.Intn(12), MaxBytes: 100 + r.Intn(400), MaxMessageBytes: -1})
	}}
	if err := quick.Check(check, cfg); err != nil {
		t.Error(err)
	}
}

func hasResult(msgs []frames.LLMMessage, id string) bool {
	for _, m := range msgs {
		if m.Role == llm.RoleTool && m.ToolCallID == id {
			return true
		}
	}
	return false
}

func hasUserAfter(msgs []frames.LLMMessage, from int) bool {
	for _, m := range msgs[from:] {
		if m.Role == llm.RoleUser {
			return true
		}
	}
	return false
}

func lastUserIndex(msgs []frames.LLMMessage, pre int) int {
	for i := len(msgs) - 1; i >= pre; i-- {
		if msgs[i].Role == llm.RoleUser {
			return i
		}
	}
	return -1
}

// randomConversation is a preamble and turns of user words, assistant
// text and calls with their results (now and then a system message).
func randomConversation(r *rand.Rand) []frames.LLMMessage {
	var msgs []frames.LLMMessage
	for range r.Intn(3) {
		if r.Intn(2) == 0 {
			msgs = append(msgs, llm.SystemMessage(fmt.Sprint("sys", r.Intn(100))))
		} else {
			msgs = append(msgs, llm.DeveloperMessage("note"))
		}
	}
	id := 0
	for range r.Intn(10) {
		msgs = append(msgs, llm.UserMessage(fmt.Sprint(len(msgs), strings.Repeat("u", r.Intn(60)))))
		for range r.Intn(3) {
			switch r.Intn(4) {
			case 0:
				msgs = append(msgs, llm.AssistantMessage(fmt.Sprint(len(msgs), strings.Repeat("a", r.Intn(60)))))
			case 1:
				msgs = append(msgs, llm.SystemMessage(fmt.Sprint(len(msgs), "mid")))
			default:
				call := frames.LLMMessage{Role: llm.RoleAssistant}
				k := 1 + r.Intn(2)
				for range k {
					id++
					call.ToolCalls = append(call.ToolCalls, frames.LLMToolCall{ID: fmt.Sprint("c", id), Name: "f", Arguments: "{}"})
				}
				msgs = append(msgs, call)
				for _, tc := range call.ToolCalls {
					msgs = append(msgs, frames.LLMMessage{Role: llm.RoleTool, ToolCallID: tc.ID, Content: strings.Repeat("r", r.Intn(40))})
				}
			}
		}
	}
	return msgs
}
