package telemetry_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/telemetry"
)

// uiCommand stands for a UI command frame of a package telemetry does not
// know (processors/rtvi's UICommandFrame): it says its name through
// frames.UICommander.
type uiCommand struct {
	frames.Base
	frames.System
	name string
}

func (c *uiCommand) UICommandName() string { return c.name }

// uiSnapshot stands for a UI snapshot frame (frames.UISnapshotter).
type uiSnapshot struct {
	frames.Base
	frames.System
	bytes int
}

func (s *uiSnapshot) UISnapshotBytes() int { return s.bytes }

// skipping stands for a tool result that skipped refs (the UI agent's
// reply): frames.Outcomer.
type skipping struct {
	Refs []string `json:"refs"`
}

func (s skipping) Outcome() (bool, []string) { return true, s.Refs }

// A UI turn: the snapshot's size, the commands and the skipped refs on the
// turn, and a tool's error, all read through frames' optional interfaces
// (nothing about the frames' packages or their JSON).
func TestUITurnIsDescribedByTheFramesOptionalInterfaces(t *testing.T) {
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "call_1", Name: "act", Arguments: `{}`}),
			llm.ToolCallEvent(frames.LLMToolCall{ID: "call_2", Name: "fail", Arguments: `{}`})},
		[]llm.Event{llm.TextEvent("Done.")},
	)}
	act := llm.NewFunction("act", "act", func(ctx context.Context, call llm.FunctionCallParams, _ struct{}) error {
		call.Out.Push(&uiCommand{name: "scroll_to"}, frames.Downstream)
		return call.Result(skipping{Refs: []string{"e42"}})
	})
	fail := llm.NewFunction("fail", "fail", func(ctx context.Context, call llm.FunctionCallParams, _ struct{}) error {
		return call.Result(llm.ErrorResult{Error: "no such page"})
	})
	r := newRig(t, model, []llm.Function{act, fail}, func(u, s, a pipeline.Processor) []pipeline.Processor { return []pipeline.Processor{u, s, a} })
	r.task.QueueFrame(&uiSnapshot{bytes: 1234})
	r.task.QueueFrame(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage("Show me the prices")}, RunLLM: true})
	r.waitSpan(t, "turn")
	spans := r.end(t)

	turn := spanNamed(t, spans, "turn")
	got := map[string]any{}
	for _, k := range []string{string(telemetry.KeyUISnapshotBytes), string(telemetry.KeyUICommandCount),
		string(telemetry.KeyUICommands), string(telemetry.KeyUISkippedRefs)} {
		for _, kv := range turn.Attributes() {
			if string(kv.Key) == k {
				got[k] = kv.Value.AsInterface()
			}
		}
	}
	want := map[string]any{
		"framewire.ui.snapshot_bytes": int64(1234), "framewire.ui.command_count": int64(1),
		"framewire.ui.commands": []string{"scroll_to"}, "framewire.ui.skipped_refs": []string{"e42"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("turn's UI attributes (-want +got):\n%s", d)
	}
	outcomes := map[string]string{}
	for _, s := range spans {
		if v, ok := attrOf(s, telemetry.KeyGenAIToolName); ok {
			o, _ := attrOf(s, telemetry.KeyOutcome)
			outcomes[v.AsString()] = o.AsString()
		}
	}
	if d := cmp.Diff(map[string]string{"act": telemetry.OutcomeOK, "fail": telemetry.OutcomeError}, outcomes); d != "" {
		t.Errorf("tool outcomes (-want +got):\n%s", d)
	}
}
