package pipeline

import (
	"context"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
)

// Processor handles frames one at a time. Each processor in a running
// pipeline is owned by one goroutine (its node), so a processor needs no
// locks for its own state.
//
// ProcessFrame is called for every frame that reaches the processor, in
// lane order: Start first, then system frames, then ordered frames. A frame
// the handler neither forwards nor consumes is forwarded when ProcessFrame
// returns, in its own direction: pass-through is the default, and consuming
// a frame takes an explicit [Handle.Consume]. A returned error (or a panic)
// becomes an upstream [frames.Error]; the node keeps running. An error that
// wraps [frames.ErrPermanent], or has a Category() frames.ErrorCategory
// method, is classified accordingly; a permanent one makes the processor
// unusable.
//
// ctx is cancelled when the frame's work is interrupted (for ordered,
// interruptible frames) or when the task is cancelled. ProcessFrame must
// not block for long: slow work (an LLM stream, a TTS request) runs as a job
// started with [Handle.Go], so system frames keep flowing meanwhile.
type Processor interface {
	ProcessFrame(ctx context.Context, h *Handle, f frames.Frame, dir frames.Direction) error
}

// ProcessorFunc adapts a function to the [Processor] interface.
type ProcessorFunc func(ctx context.Context, h *Handle, f frames.Frame, dir frames.Direction) error

// ProcessFrame implements [Processor].
func (fn ProcessorFunc) ProcessFrame(ctx context.Context, h *Handle, f frames.Frame, dir frames.Direction) error {
	return fn(ctx, h, f, dir)
}

// PassThrough is a processor that forwards every frame. Embed it to get a
// processor whose unhandled frames pass through, or use it as a placeholder.
type PassThrough struct{}

// ProcessFrame implements [Processor] by forwarding f.
func (PassThrough) ProcessFrame(context.Context, *Handle, frames.Frame, frames.Direction) error {
	return nil
}

// Setupper is implemented by processors that open resources before the
// pipeline starts (connections, models). The task sets up all processors
// concurrently, bounded by its setup timeout. A failed setup makes the
// processor unusable: it forwards every frame untouched.
type Setupper interface {
	Setup(ctx context.Context, s Setup) error
}

// Cleaner is implemented by processors that release resources when the
// task ends (after End or Cancel, not after Stop).
type Cleaner interface {
	Cleanup(ctx context.Context) error
}

// ObserverProvider is implemented by processors that come with an observer
// they need (the RTVI processor and the observer that turns pipeline frames
// into its outbound messages). The task adds the observer when it runs the
// processor, so the pair is never wired by hand; an observer added
// already, through [TaskOptions.Observers] or [Task.AddObserver], is not
// added twice.
type ObserverProvider interface {
	Observer() observers.Observer
}

// Namer is implemented by processors that choose their display name. The
// default is the type name followed by "#" and a process-wide id.
type Namer interface {
	Name() string
}

// Pusher pushes frames from a processor's node into the pipeline. It is safe
// for concurrent use, so jobs may hold one; a processor that pushes from
// goroutines of its own (a network reader, a timer) keeps an [Outlet]. Frames pushed before the neighbour has seen
// Start wait in its queue until Start arrives.
type Pusher interface {
	// Push sends f to the next processor in direction dir. The caller gives
	// up f: it must not change it afterwards.
	Push(f frames.Frame, dir frames.Direction)
	// PushError sends an upstream [frames.Error] naming this processor.
	PushError(err error)
}

// Setup is what a processor gets before the pipeline starts. Its Attach
// method binds the processor's [Outlet] to the task.
type Setup struct {
	// Logger is the task's logger, named after the processor.
	Logger *zap.Logger
	// Name is the processor's display name.
	Name string
	// Clock reads the task clock.
	Clock Clock

	n *node
}

// JobFunc is the body of a job: slow work started by a processor. ctx is
// cancelled on interruption (unless the job was started for an
// uninterruptible frame) and on cancel. Frames go out through out.
type JobFunc func(ctx context.Context, out Pusher) error

// Broadcast pushes a frame both ways: newFrame builds the two copies (see
// [frames.Broadcast], which pairs them as siblings), the downstream copy
// goes first, then the upstream one. Use it for frames every processor on
// both sides must see (speaking, function-call and interruption frames).
func Broadcast[F frames.Frame](out Pusher, newFrame func() F) {
	down, up := frames.Broadcast(newFrame)
	out.Push(down, frames.Downstream)
	out.Push(up, frames.Upstream)
}
