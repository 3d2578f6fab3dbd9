package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// The scripted model of -functions: "call NAME ARGS" calls NAME, a
// request that ends with a tool message is answered with its content, and
// every request is reported with its tool messages.
func TestScriptedModelCallsAndReports(t *testing.T) {
	var out syncBuffer
	events.Lock()
	events.enc = json.NewEncoder(&out)
	events.Unlock()
	model := scriptedModel("s1")

	got := model(0, llm.NewContext(llm.UserMessage(`call get_page_state {"field":"name"}`)).Snapshot())
	want := []llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "call_get_page_state_0", Name: "get_page_state", Arguments: `{"field":"name"}`})}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("call (-want +got):\n%s", d)
	}
	conv := llm.NewContext(llm.UserMessage("call slow_client"),
		frames.LLMMessage{Role: llm.RoleAssistant, ToolCalls: []frames.LLMToolCall{{ID: "c1", Name: "slow_client", Arguments: "{}"}}},
		frames.LLMMessage{Role: llm.RoleTool, ToolCallID: "c1", Content: `{"ok":true}`})
	if d := cmp.Diff([]llm.Event{llm.TextEvent(`tool said: {"ok":true}`)}, model(1, conv.Snapshot())); d != "" {
		t.Errorf("after the tool (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]llm.Event{llm.TextEvent("echo: hi")}, model(2, llm.NewContext(llm.UserMessage("hi")).Snapshot())); d != "" {
		t.Errorf("echo (-want +got):\n%s", d)
	}

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d events, want 3: %s", len(lines), out.String())
	}
	var ev struct{ Tools []toolMessage }
	var raw map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &ev); err != nil {
		t.Fatal(err)
	}
	if raw["event"] != "llm-request" || raw["session"] != "s1" || raw["last_role"] != "tool" {
		t.Errorf("event %s", lines[1])
	}
	if d := cmp.Diff([]toolMessage{{ID: "c1", Content: `{"ok":true}`}}, ev.Tools); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}
