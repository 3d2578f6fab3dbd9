package uiagent

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
)

// The reply tool's result tells telemetry the refs it skipped through
// frames.Outcomer, not through its JSON.
func TestReplyResultReportsItsSkippedRefs(t *testing.T) {
	var r frames.Outcomer = replyResult{SkippedRefs: []string{"e42", "e6.more"}, Note: noteSkipped}
	ok, skipped := r.Outcome()
	if !ok || !cmp.Equal(skipped, []string{"e42", "e6.more"}) {
		t.Errorf("Outcome() = %v, %v; want true and the skipped refs", ok, skipped)
	}
}
