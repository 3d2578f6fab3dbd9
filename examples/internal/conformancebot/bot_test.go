package conformancebot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/framewire/framewire/processors/llm"
)

// The bot's pipeline-level and end-to-end tests are in examples/conformance;
// these check its helpers.

func TestWordChunksConcatenateToTheInput(t *testing.T) {
	for _, s := range []string{"", "one", "héllo there", "  lead", "trail  ", "a\tb\nc  d", "日本語 の テキスト"} {
		var chunks []string
		for c := range wordChunks(s) {
			chunks = append(chunks, c)
		}
		if strings.Join(chunks, "") != s {
			t.Errorf("chunks of %q = %q", s, chunks)
		}
		if len(strings.Fields(s)) > 1 && len(chunks) < 2 {
			t.Errorf("%q came in one chunk", s)
		}
	}
}

func TestKeepLastBoundsTheConversation(t *testing.T) {
	c := llm.NewContext()
	for i := range 5 {
		c.Add(llm.UserMessage(fmt.Sprint(i)))
	}
	keepLast(8)(c)
	if c.Len() != 5 {
		t.Errorf("a short conversation was trimmed to %d messages", c.Len())
	}
	keepLast(3)(c)
	var got []string
	for _, m := range c.Messages() {
		got = append(got, m.Content)
	}
	if fmt.Sprint(got) != "[2 3 4]" {
		t.Errorf("kept %v, want the last three", got)
	}
}
