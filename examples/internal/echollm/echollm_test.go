package echollm

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/frames"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTheEchoRepeatsTheUsersLastMessageWordByWord(t *testing.T) {
	for _, tc := range []struct {
		said string
		want string
	}{
		{"hello there!", "You said: hello there."},
		{"  ", "I did not catch anything."},
	} {
		req := &frames.LLMContext{Messages: []frames.LLMMessage{{Role: "user", Content: "earlier"}, {Role: "user", Content: tc.said}}}
		var chunks []string
		for ev, err := range (Provider{}).Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, ev.Text)
		}
		if got := strings.Join(chunks, ""); got != tc.want || len(chunks) < 2 {
			t.Errorf("echo of %q = %q in %d chunks, want %q word by word", tc.said, got, len(chunks), tc.want)
		}
	}
}
