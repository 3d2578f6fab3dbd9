package frames

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/framewire/framewire/internal/framebook"
)

// Lane is the queueing class of a frame. The runtime takes Start first, then
// system frames, then ordered frames, FIFO within each lane.
type Lane uint8

const (
	// LaneOrdered frames are processed in order and flushed by interruptions.
	LaneOrdered Lane = iota
	// LaneSystem frames overtake queued ordered frames and are never flushed.
	LaneSystem
	// LaneStart is the top priority, used only by [Start].
	LaneStart
	// LaneUninterruptible frames are ordered frames that survive
	// interruption flushes, and whose processing an interruption does not
	// cancel. They queue with LaneOrdered frames, in one FIFO.
	LaneUninterruptible
)

// Ordered reports whether frames of lane l queue in the ordered FIFO
// (LaneOrdered and LaneUninterruptible).
func (l Lane) Ordered() bool { return l == LaneOrdered || l == LaneUninterruptible }

func (l Lane) String() string {
	switch l {
	case LaneOrdered:
		return "ordered"
	case LaneSystem:
		return "system"
	case LaneStart:
		return "start"
	case LaneUninterruptible:
		return "uninterruptible"
	}
	return fmt.Sprintf("Lane(%d)", uint8(l))
}

// Direction is the way a frame travels through a pipeline.
type Direction uint8

const (
	// Downstream is from the input transport towards the output transport.
	Downstream Direction = iota
	// Upstream is back towards the head of the pipeline (errors, requests).
	Upstream
)

func (d Direction) String() string {
	if d == Upstream {
		return "upstream"
	}
	return "downstream"
}

// Frame is implemented by every frame type through the embedded [Base] and a
// lane marker ([System], [Ordered] or [Start]'s own).
type Frame interface {
	// FrameBase returns the frame's common fields.
	FrameBase() *Base
	// Lane returns the queueing class of the frame.
	Lane() Lane
}

var lastID atomic.Uint64

// NextID returns a fresh process-wide identifier. Frames get theirs from it
// when first pushed; other objects (processors, sessions) may share the
// counter so that ids never collide in logs.
func NextID() uint64 { return lastID.Add(1) }

// Base holds the fields every frame has. Embed it by value.
type Base struct {
	id     uint64
	pushed bool
	// PTS is the presentation timestamp; zero means "play in order".
	PTS time.Duration
	// SiblingID links the two copies of a broadcast frame (see [Broadcast]).
	SiblingID uint64
	// Metadata is free-form data for the application. Set it before pushing.
	Metadata map[string]any
	// TransportSource names the track or transport a frame came from.
	TransportSource string
	// TransportDestination names the track or transport a frame is for.
	TransportDestination string
}

// FrameBase implements [Frame].
func (b *Base) FrameBase() *Base { return b }

// ID returns the frame's identifier, or 0 before the frame has been stamped.
func (b *Base) ID() uint64 { return b.id }

// stamp gives b a fresh id unless it already has one, and returns the id.
// The runtime stamps every frame when it is first pushed, on the goroutine
// that owns it, so frames built as struct literals need no constructor.
func (b *Base) stamp() uint64 {
	if b.id == 0 {
		b.id = NextID()
	}
	return b.id
}

// Name returns a readable name such as "TextFrame#42" for logs. It is built
// on demand, so frames carry no string they do not need.
func Name(f Frame) string {
	if f == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s#%d", TypeName(f), f.FrameBase().id)
}

// TypeName returns the frame's type name with a "Frame" suffix, as Pipecat
// names it (frames.Text is "TextFrame"); it does not allocate for types
// whose name already ends in "Frame".
func TypeName(f Frame) string {
	t := reflect.TypeOf(f)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	n := t.Name()
	if len(n) >= 5 && n[len(n)-5:] == "Frame" {
		return n
	}
	return n + "Frame"
}

// System marks a frame as belonging to the system lane. Embed it.
type System struct{}

// Lane implements [Frame].
func (System) Lane() Lane { return LaneSystem }

// Ordered marks a frame as belonging to the ordered lane. Embed it.
type Ordered struct{}

// Lane implements [Frame].
func (Ordered) Lane() Lane { return LaneOrdered }

// Uninterruptible marks an ordered frame that survives interruption flushes
// in every queue of the framework, and whose processing is not cancelled by
// an interruption. Embed it instead of [Ordered].
type Uninterruptible struct{}

// Lane implements [Frame].
func (Uninterruptible) Lane() Lane { return LaneUninterruptible }

// IsUninterruptible reports whether f survives interruption flushes. It is
// one method call: the property is part of the lane, not a separate type
// assertion, because every queue checks it for every ordered frame.
func IsUninterruptible(f Frame) bool { return f.Lane() == LaneUninterruptible }

// Broadcast builds the two instances of a frame that is pushed both
// downstream and upstream: newFrame is called twice, both copies are stamped,
// and each copy's SiblingID points at the other. Payloads that newFrame
// shares between the copies must be treated as immutable.
func Broadcast[F Frame](newFrame func() F) (down, up F) {
	down, up = newFrame(), newFrame()
	db, ub := down.FrameBase(), up.FrameBase()
	db.id, ub.id = 0, 0
	db.stamp()
	ub.stamp()
	db.SiblingID, ub.SiblingID = ub.id, db.id
	return down, up
}

// markPushed records that the frame has been pushed and reports whether
// this was its first push (see framebook.MarkPushed); observers use it
// instead of sets of ids. It also stamps the frame with an id.
func (b *Base) markPushed() (first bool) {
	if b.pushed {
		return false
	}
	b.stamp()
	b.pushed = true
	return true
}

func init() {
	framebook.MarkPushed = func(base any) bool { return base.(*Base).markPushed() }
	framebook.Stamp = func(base any) uint64 { return base.(*Base).stamp() }
}
