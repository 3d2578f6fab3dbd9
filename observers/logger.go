package observers

import (
	"reflect"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
)

// Types returns a matcher for frames of the same types as samples, for the
// observers' frame-type filters: observers.Types(&frames.Text{}, &frames.End{}).
func Types(samples ...frames.Frame) func(frames.Frame) bool {
	set := make(map[reflect.Type]bool, len(samples))
	for _, s := range samples {
		set[reflect.TypeOf(s)] = true
	}
	return func(f frames.Frame) bool { return set[reflect.TypeOf(f)] }
}

// Logger logs frame pushes with zap, for debugging a pipeline. Only frames
// that Match accepts are logged (all when Match is nil); audio is noisy, so
// most applications pass a filter.
type Logger struct {
	// Log receives the entries; nil logs nothing.
	Log *zap.Logger
	// Match selects the frames to log; nil selects all.
	Match func(frames.Frame) bool
	// FirstHopOnly logs a frame only where it is first pushed, instead of
	// at every hop.
	FirstHopOnly bool
}

// Wants implements [Filter]: the filter runs on the pipeline side, so
// rejected frames cost nothing more.
func (l *Logger) Wants(kind EventKind, f frames.Frame) bool {
	return kind == Pushed && l.Log != nil && (l.Match == nil || l.Match(f))
}

// Observe implements [Observer].
func (l *Logger) Observe(e Event) {
	if l.FirstHopOnly && !e.FirstSeen {
		return
	}
	l.Log.Debug("frame",
		zap.String("frame", frames.Name(e.Frame)),
		zap.String("from", nodeName(e.Source)),
		zap.String("to", nodeName(e.Destination)),
		zap.Stringer("direction", e.Direction),
		zap.Duration("at", e.At),
	)
}

func nodeName(n Node) string {
	if n == nil {
		return "task"
	}
	return n.Name()
}
