package uiagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// snapshot200 is a 200-node snapshot, the client's budget.
func snapshot200(tb testing.TB) *wire.Snapshot {
	tb.Helper()
	var children []any
	for l := range 9 {
		var items []any
		for i := range 21 {
			items = append(items, map[string]any{"ref": fmt.Sprintf("e%d", 100+l*30+i), "role": "listitem",
				"name": fmt.Sprintf("Item %d.%d with a name of typical length", l, i), "state": []string{"offscreen"}})
		}
		children = append(children, map[string]any{"ref": fmt.Sprintf("e%d", 2+l), "role": "list", "children": items})
	}
	children = append(children, map[string]any{"ref": "", "role": "text", "name": "The end"})
	b, _ := json.Marshal(map[string]any{"root": map[string]any{"ref": "e1", "role": "generic", "children": children}, "captured_at": 1})
	s, err := wire.DecodeSnapshot(b)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func BenchmarkRenderUIState200Nodes(b *testing.B) {
	s := snapshot200(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = RenderUIState(s)
	}
}

func BenchmarkAppendUIState200Nodes(b *testing.B) {
	s := snapshot200(b)
	buf := make([]byte, 0, 16<<10)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendUIState(buf[:0], s)
	}
}

// The same page with a "<" in every item's name: written twice, the second
// time escaped.
func BenchmarkRenderUIStateEscaped200Nodes(b *testing.B) {
	s := snapshot200(b)
	for i := range s.Root.Children {
		for j := range s.Root.Children[i].Children {
			c := &s.Root.Children[i].Children[j]
			c.Name = strings.Replace(c.Name, "with", "<with>", 1)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = RenderUIState(s)
	}
}

// A page of 5000 nodes, cut at the default limits.
func BenchmarkRenderUIStateTruncated(b *testing.B) {
	s := listPage(b, 4998, func(i int) string { return fmt.Sprintf("Item %d with a name of typical length", i) })
	b.ReportAllocs()
	for b.Loop() {
		_ = RenderUIState(s)
	}
}

// A user turn's preparation with a 200-node screen: stateless reset,
// guide, <ui_state> (rendered once per snapshot, then cached).
func BenchmarkBeforeInferenceUserTurn(b *testing.B) {
	a := New(Options{})
	a.SetSnapshot(snapshot200(b))
	c := llm.NewContext(llm.SystemMessage("You help."))
	b.ReportAllocs()
	answer := []frames.LLMMessage{
		{Role: llm.RoleAssistant, ToolCalls: []frames.LLMToolCall{{ID: "c1", Name: "reply", Arguments: `{"answer":"Here."}`}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: llm.ToolCompleted},
	}
	for b.Loop() {
		c.Add(llm.UserMessage("where is the submit button?"))
		a.BeforeInference(c)
		c.Add(answer...)
	}
}

// Frames the agent does not handle pass through without allocating.
func BenchmarkProcessFramePassThrough(b *testing.B) {
	a := New(Options{})
	f := &frames.InputAudioRaw{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = a.ProcessFrame(ctx, nil, f, frames.Downstream)
	}
}

// Snapshots are kept by pointer: no copy, no render until inference.
func BenchmarkProcessFrameSnapshot(b *testing.B) {
	a := New(Options{})
	f := &rtvi.UISnapshotFrame{Tree: snapshot200(b)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = a.ProcessFrame(ctx, nil, f, frames.Downstream)
	}
}

func BenchmarkParseReply(b *testing.B) {
	args := []byte(`{"answer":"Done.","scroll_to":"e106","highlight":["e102","e103"],"fills":[{"ref":"e104","value":"Mark"},{"ref":"e105","value":"mark@daily.co"}],"click":["e130"]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseReply(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlan200Nodes(b *testing.B) {
	a := New(Options{})
	a.SetSnapshot(snapshot200(b))
	r := Reply{ScrollTo: "e106", Highlight: []string{"e102", "e103"}, Fills: []Fill{{"e104", "Mark"}, {"e105", "x"}}, Click: []string{"e130", "e999"}}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = a.plan(r)
	}
}
