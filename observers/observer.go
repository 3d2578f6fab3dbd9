package observers

import (
	"time"

	"github.com/framewire/framewire/frames"
)

// EventKind says whether an event reports a frame being pushed from one
// node to the next or being processed by a node.
type EventKind uint8

const (
	// Pushed: Source pushed Frame towards Destination.
	Pushed EventKind = iota + 1
	// Processed: Destination is about to process Frame.
	Processed
)

func (k EventKind) String() string {
	switch k {
	case Pushed:
		return "pushed"
	case Processed:
		return "processed"
	}
	return "unknown"
}

// Node identifies a processor in a running pipeline without importing the
// runtime. Processor returns the processor value itself, so an observer can
// recognise a role with a type assertion.
type Node interface {
	// Name is the processor's display name, for example "LLMService#3".
	Name() string
	// Processor is the processor value.
	Processor() any
}

// Event is one observation. It is passed by value and shares the frame
// with the pipeline: observers must not modify the frame.
type Event struct {
	Kind EventKind
	// Source is the node that pushed the frame; nil when the task injected it.
	Source Node
	// Destination is the node that receives or processes the frame; nil when
	// the frame left the pipeline.
	Destination Node
	Frame       frames.Frame
	Direction   frames.Direction
	// At is the task clock (monotonic, since the task started) when the
	// event happened, read on the pipeline's goroutine, not the observer's.
	At time.Duration
	// FirstSeen is true for the first push event of a frame in the task, so
	// observers that count frames need no set of seen ids.
	FirstSeen bool
}

// Observer watches frames. Observe runs on the observer's own goroutine,
// fed from a bounded buffer, so a slow observer never slows the pipeline;
// events are delivered in order.
type Observer interface {
	Observe(e Event)
}

// Filter is optionally implemented by an observer to say which events it
// wants. It runs on the pipeline's goroutines, so it must be cheap and must
// not block; events it rejects cost nothing more.
type Filter interface {
	Wants(kind EventKind, f frames.Frame) bool
}

// Lossless is optionally implemented by an observer that must see every
// event it wants, such as one that turns frames into messages a client
// must get (the RTVI observer). When its buffer is full, the goroutine that
// reports an event waits for room instead of the event being dropped: the
// pipeline slows to the observer's pace. Its Observe must therefore never
// wait for the pipeline, or the two wait for each other.
type Lossless interface {
	Lossless() bool
}

// Func adapts an ordinary function to the [Observer] interface.
type Func func(e Event)

// Observe implements [Observer].
func (fn Func) Observe(e Event) { fn(e) }
