package llm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
)

// A call settles once: a second result for the same tool_call_id (a
// client that answers twice, a result racing its own timeout) is not
// recorded, neither as a new tool message nor over the first result, and
// asks for no second inference.
func TestAssistantRecordsOneResultPerCall(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func() []frames.Frame
		want  []frames.LLMMessage
	}{
		{"after a result", func() []frames.Frame {
			return []frames.Frame{inProgress("c1", "g"), result("c1", "g", "first")}
		}, toolPair("c1", "first")},
		{"after a result that came without its in-progress", func() []frames.Frame {
			return []frames.Frame{result("c1", "g", "first")}
		}, toolPair("c1", "first")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := llm.NewPair(nil, llm.PairOptions{})
			h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
			for _, f := range tc.first() {
				h.send(f)
			}
			h.send(result("c1", "g", "second"))
			h.send(inProgress("c1", "g")) // a late in-progress cannot reopen it either
			if d := cmp.Diff(tc.want, pair.Context().Messages()); d != "" {
				t.Errorf("context (-want +got):\n%s", d)
			}
			if n := count[*frames.LLMContext](h.Up()); n != 1 {
				t.Errorf("%d inferences, want 1", n)
			}
			if n := pair.Assistant().FunctionCallsInProgress(); n != 0 {
				t.Errorf("%d calls in progress", n)
			}
		})
	}
}

// An intermediate result keeps its call open, even when it is the first
// the aggregator hears of the call; the final result replaces it in the
// same tool message.
func TestIntermediateResultThenFinalIsOneToolMessage(t *testing.T) {
	pair := llm.NewPair(nil, llm.PairOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, pair.Assistant())
	partial := result("c1", "g", "halfway")
	partial.Properties.Intermediate = true
	h.send(partial)
	if n := pair.Assistant().FunctionCallsInProgress(); n != 1 {
		t.Errorf("%d calls in progress after an intermediate result, want 1", n)
	}
	h.send(result("c1", "g", "done"))
	if d := cmp.Diff(toolPair("c1", "done"), pair.Context().Messages()); d != "" {
		t.Errorf("context (-want +got):\n%s", d)
	}
	if n := count[*frames.LLMContext](h.Up()); n != 1 {
		t.Errorf("%d inferences, want 1", n)
	}
}
