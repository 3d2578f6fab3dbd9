package pipelinetest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// upper replaces text frames with upper-cased copies and answers every
// "ping" with an upstream "pong".
type upper struct{}

func (upper) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	t, ok := f.(*frames.Text)
	if !ok {
		return nil
	}
	if t.Text == "ping" {
		h.Push(&frames.Text{Text: "pong"}, frames.Upstream)
	}
	h.Consume()
	h.Push(&frames.Text{Text: strings.ToUpper(t.Text)}, dir)
	return nil
}

func TestRunRecordsBothEnds(t *testing.T) {
	res := pipelinetest.Run(t, upper{}, pipelinetest.Options{
		Send:         []frames.Frame{&frames.Text{Text: "hi"}, &frames.Text{Text: "ping"}},
		SendUpstream: []frames.Frame{&frames.Text{Text: "from below"}},
	})
	res.ExpectDown(t, &frames.Text{Text: "HI"}, &frames.Text{Text: "PING"})
	// Upstream: the pong and the upper-cased frame sent from below; their
	// relative order depends on scheduling, so compare as a set.
	up := res.Up()
	if len(up) != 2 {
		t.Fatalf("upstream = %v", up)
	}
	seen := map[string]bool{}
	for _, f := range up {
		seen[f.(*frames.Text).Text] = true
	}
	if !seen["pong"] || !seen["FROM BELOW"] {
		t.Fatalf("upstream = %v", seen)
	}
}

func TestDiffIgnoresIdentity(t *testing.T) {
	a := &frames.Text{Text: "x"}
	b := &frames.Text{Text: "x"}
	framebook.Stamp(a.FrameBase())
	if d := pipelinetest.Diff([]frames.Frame{a}, []frames.Frame{b}); d != "" {
		t.Fatalf("identity compared: %s", d)
	}
	if d := pipelinetest.Diff([]frames.Frame{a}, []frames.Frame{&frames.Text{Text: "y"}}); d == "" {
		t.Fatal("content difference not reported")
	}
}

func TestOfTypeKeepsTheFramesOfOneTypeInOrder(t *testing.T) {
	a, b := &frames.Text{Text: "a"}, &frames.Text{Text: "b"}
	fs := []frames.Frame{&frames.Start{}, a, &frames.LLMText{Text: "x"}, b, &frames.End{}}
	got := pipelinetest.OfType[*frames.Text](fs)
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("OfType[*frames.Text] = %v, want [a b]", got)
	}
	if got := pipelinetest.OfType[*frames.Error](fs); got != nil {
		t.Fatalf("OfType[*frames.Error] = %v, want nil", got)
	}
}
