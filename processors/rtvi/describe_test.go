package rtvi

import (
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// The UI frames say what telemetry needs through frames' optional
// interfaces: a command its name, a snapshot the size of its message.
func TestUIFramesDescribeThemselves(t *testing.T) {
	var c frames.UICommander = NewUICommand(wire.Toast{Title: "hi"})
	if got := c.UICommandName(); got != wire.CommandToast {
		t.Errorf("UICommandName() = %q, want %q", got, wire.CommandToast)
	}
	msg := `{"label":"rtvi-ai","type":"ui-snapshot","id":"s1","data":{"tree":` + string(bigSnapshot(5)) + `}}`
	res := runProcessor(t, NewProcessor(Options{}), msg)
	down := notSent(res.Down())
	if len(down) != 1 {
		t.Fatalf("frames %v", down)
	}
	s, ok := down[0].(frames.UISnapshotter)
	if !ok {
		t.Fatalf("%T is not a frames.UISnapshotter", down[0])
	}
	if got := s.UISnapshotBytes(); got != len(msg) {
		t.Errorf("UISnapshotBytes() = %d, want the message's %d", got, len(msg))
	}
}
