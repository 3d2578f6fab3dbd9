package framebook_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Package frames fills in the functions: the first push of a frame is
// reported once and stamps it; Stamp keeps an id once given.
func TestFramesFillsInTheBookkeeping(t *testing.T) {
	f := &frames.Text{Text: "x"}
	id := framebook.Stamp(f.FrameBase())
	if id == 0 || f.ID() != id || framebook.Stamp(f.FrameBase()) != id {
		t.Fatalf("Stamp gave %d, then the frame has %d", id, f.ID())
	}
	if !framebook.MarkPushed(f.FrameBase()) || framebook.MarkPushed(f.FrameBase()) {
		t.Fatal("the first push is not reported exactly once")
	}
	g := &frames.Text{}
	if !framebook.MarkPushed(g.FrameBase()) || g.ID() == 0 || g.ID() == id {
		t.Fatalf("a first push without a stamp gives id %d", g.ID())
	}
}
