package frames_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLanesAreExplicit(t *testing.T) {
	cases := []struct {
		f               frames.Frame
		lane            frames.Lane
		uninterruptible bool
	}{
		{&frames.Start{}, frames.LaneStart, false},
		{&frames.Cancel{}, frames.LaneSystem, false},
		{&frames.End{}, frames.LaneUninterruptible, true},
		{&frames.Stop{}, frames.LaneUninterruptible, true},
		{&frames.Interruption{}, frames.LaneSystem, false},
		{&frames.InputAudioRaw{}, frames.LaneSystem, false},
		{&frames.OutputAudioRaw{}, frames.LaneOrdered, false},
		{&frames.Text{}, frames.LaneOrdered, false},
		{&frames.Heartbeat{}, frames.LaneOrdered, false},
		{&frames.LLMContext{}, frames.LaneOrdered, false},
		{&frames.FunctionCallsStarted{}, frames.LaneSystem, false},
		{&frames.FunctionCallInProgress{}, frames.LaneUninterruptible, true},
		{&frames.FunctionCallResult{}, frames.LaneUninterruptible, true},
		{&frames.FunctionCallCancel{}, frames.LaneUninterruptible, true},
		{&frames.OutputTransportMessageUrgent{}, frames.LaneSystem, false},
		{&frames.OutputTransportMessage{}, frames.LaneOrdered, false},
	}
	for _, c := range cases {
		if c.f.Lane() != c.lane || frames.IsUninterruptible(c.f) != c.uninterruptible {
			t.Errorf("%s: lane %v uninterruptible %v, want %v %v", frames.TypeName(c.f),
				c.f.Lane(), frames.IsUninterruptible(c.f), c.lane, c.uninterruptible)
		}
	}
}

func TestBroadcastLinksSiblings(t *testing.T) {
	down, up := frames.Broadcast(func() *frames.BotStartedSpeaking { return &frames.BotStartedSpeaking{} })
	if down == up || down.ID() == 0 || up.ID() == 0 || down.ID() == up.ID() {
		t.Fatalf("want two stamped instances, got ids %d and %d", down.ID(), up.ID())
	}
	if down.SiblingID != up.ID() || up.SiblingID != down.ID() {
		t.Fatal("siblings not linked")
	}
}

func TestMarkPushedIsFirstOnlyOnce(t *testing.T) {
	f := &frames.Text{Text: "x"}
	if !framebook.MarkPushed(f.FrameBase()) || framebook.MarkPushed(f.FrameBase()) {
		t.Fatal("first push not reported exactly once")
	}
	if f.ID() == 0 {
		t.Fatal("not stamped")
	}
}

func TestNames(t *testing.T) {
	f := &frames.Text{}
	id := framebook.Stamp(f.FrameBase())
	if got, want := frames.Name(f), "TextFrame#"+itoa(id); got != want {
		t.Fatalf("Name = %q, want %q", got, want)
	}
	if got := frames.TypeName(&frames.LLMFullResponseStart{}); got != "LLMFullResponseStartFrame" {
		t.Fatalf("TypeName = %q", got)
	}
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}

func TestAudioNumFrames(t *testing.T) {
	a := frames.Audio{PCM: make([]byte, 640), SampleRate: 16000, Channels: 1}
	if a.NumFrames() != 320 {
		t.Fatalf("NumFrames = %d", a.NumFrames())
	}
	if (&frames.Audio{}).NumFrames() != 0 {
		t.Fatal("zero audio has frames")
	}
}
