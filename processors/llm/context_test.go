package llm_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

func TestSnapshotIsNotChangedByLaterEdits(t *testing.T) {
	c := llm.NewContext(llm.SystemMessage("be brief"), llm.UserMessage("hi"))
	c.SetTools([]frames.LLMTool{{Name: "a"}})
	snap := c.Snapshot()
	want := []frames.LLMMessage{llm.SystemMessage("be brief"), llm.UserMessage("hi")}

	c.Add(llm.AssistantMessage("hello"))
	c.Transform(func(ms []frames.LLMMessage) []frames.LLMMessage {
		ms[0].Content = "changed"
		return ms
	})
	c.SetTools(nil)
	c.SetToolChoice(frames.LLMToolChoice{Mode: "required"})

	if d := cmp.Diff(want, snap.Messages); d != "" {
		t.Errorf("snapshot messages changed (-want +got):\n%s", d)
	}
	if len(snap.Tools) != 1 || snap.ToolChoice.Mode != "" {
		t.Errorf("snapshot tools or choice changed: %+v %+v", snap.Tools, snap.ToolChoice)
	}
	if got := c.Messages()[0].Content; got != "changed" {
		t.Errorf("live context not changed: %q", got)
	}
}

func TestContextCopiesWhatItIsGiven(t *testing.T) {
	parts := []frames.LLMContentPart{{Type: "text", Text: "look"}}
	c := llm.NewContext(frames.LLMMessage{Role: "user", Parts: parts})
	parts[0].Text = "mutated by caller"
	if got := c.Messages()[0].Parts[0].Text; got != "look" {
		t.Errorf("context aliases the caller's slice: %q", got)
	}
	out := c.Messages()
	out[0].Parts[0].Text = "mutated by reader"
	if got := c.Messages()[0].Parts[0].Text; got != "look" {
		t.Errorf("Messages hands out the live slice: %q", got)
	}
}

func TestVersionGrowsWithEveryChange(t *testing.T) {
	var c llm.Context // the zero value works
	v0 := c.Version()
	c.Add(llm.UserMessage("x"))
	v1 := c.Version()
	c.SetTools(nil)
	v2 := c.Version()
	c.SetMessages(nil)
	v3 := c.Version()
	if !(v0 < v1 && v1 < v2 && v2 < v3) {
		t.Errorf("versions %d %d %d %d do not grow", v0, v1, v2, v3)
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d after SetMessages(nil)", c.Len())
	}
}

// Writers and snapshot readers run concurrently; -race checks that
// snapshots never share memory that is written later.
func TestContextConcurrentWritersAndSnapshots(t *testing.T) {
	c := llm.NewContext()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				c.Add(llm.UserMessage(fmt.Sprintf("w%d-%d", w, i)))
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 200 {
				snap := c.Snapshot()
				total := 0
				for _, m := range snap.Messages {
					total += len(m.Content)
				}
				_ = total
			}
		})
	}
	wg.Wait()
	if c.Len() != 800 {
		t.Errorf("Len = %d, want 800", c.Len())
	}
}
