package frames

import (
	"errors"
	"fmt"
)

// Start is the first frame of every run. Nothing else is processed by a
// processor before it; it has the top priority in every queue.
type Start struct {
	Base
	// AudioInSampleRate is the pipeline's input sample rate (default 16000).
	AudioInSampleRate int
	// AudioOutSampleRate is the pipeline's output sample rate (default 24000).
	AudioOutSampleRate int
	// EnableMetrics asks services to report TTFB and processing metrics.
	EnableMetrics bool
	// EnableUsageMetrics asks services to report token and character usage.
	EnableUsageMetrics bool
	// ReportOnlyInitialTTFB limits TTFB metrics to the first response.
	ReportOnlyInitialTTFB bool
}

// Lane implements [Frame]: Start has its own top priority.
func (*Start) Lane() Lane { return LaneStart }

// End ends a run gracefully: every processor handles what is queued ahead
// of it, then cleans up.
type End struct {
	Base
	Uninterruptible
	// Reason says why the run ended, for logs and events.
	Reason string
}

// Stop ends a run like [End] but keeps processors set up, so they can be
// used again by another task.
type Stop struct {
	Base
	Uninterruptible
}

// Cancel stops a run at once: it overtakes queued work, which is abandoned.
type Cancel struct {
	Base
	System
	// Reason says why the run was cancelled.
	Reason string
}

// EndTask asks the task, from inside the pipeline, to end gracefully.
// Push it upstream; the task then queues an [End] at the head.
type EndTask struct {
	Base
	Uninterruptible
	// Reason is copied into the resulting [End].
	Reason string
}

// StopTask asks the task, from inside the pipeline, to stop (see [Stop]).
type StopTask struct {
	Base
	Uninterruptible
}

// CancelTask asks the task, from inside the pipeline, to cancel at once.
type CancelTask struct {
	Base
	System
	// Reason is copied into the resulting [Cancel].
	Reason string
}

// InterruptionTask asks the task to inject an [Interruption] at the head
// of the pipeline, so that every processor is interrupted from top to bottom.
type InterruptionTask struct {
	Base
	System
}

// Interruption interrupts the bot: each processor cancels in-flight
// interruptible work, flushes its ordered queue (keeping uninterruptible
// frames) and forwards the interruption.
type Interruption struct {
	Base
	System
}

// Heartbeat is pushed periodically by the task when heartbeats are on. It is
// ordered on purpose, so a stalled ordered lane delays it and is noticed.
type Heartbeat struct {
	Base
	Ordered
	// SentAt is the task clock reading when the heartbeat was sent.
	SentAt int64
}

// ErrorCategory classifies an [Error] for policy decisions.
type ErrorCategory uint8

const (
	// ErrorUnknown is an unclassified error.
	ErrorUnknown ErrorCategory = iota
	// ErrorTransient is worth retrying (a timeout, a 5xx, a 429).
	ErrorTransient
	// ErrorPermanent makes the processor that raised it unusable.
	ErrorPermanent
)

func (c ErrorCategory) String() string {
	switch c {
	case ErrorTransient:
		return "transient"
	case ErrorPermanent:
		return "permanent"
	}
	return "unknown"
}

// Categorizer is implemented by errors that know their category: a
// service client's 401 is permanent, its 429 or 503 transient. It is the
// one definition every service and the runtime use.
type Categorizer interface {
	Category() ErrorCategory
}

// CategoryOf classifies err: permanent when it wraps [ErrPermanent],
// otherwise the category of the first [Categorizer] in its chain, else
// unknown.
func CategoryOf(err error) ErrorCategory {
	if errors.Is(err, ErrPermanent) {
		return ErrorPermanent
	}
	var c Categorizer
	if errors.As(err, &c) {
		return c.Category()
	}
	return ErrorUnknown
}

// Modeler is implemented by services (LLM providers, synthesizers,
// transcribers) that name the model they use, for metrics and traces.
type Modeler interface {
	Model() string
}

// Error reports a failure. It travels upstream to the task, which fires its
// error event and applies the unusable-processor policy.
type Error struct {
	Base
	System
	// Err is the failure.
	Err error
	// Processor names the processor that reported it.
	Processor string
	// Category classifies the failure.
	Category ErrorCategory
	// Subject says what failed in words a user understands ("Speech
	// output", "The language model"). Clients are told the subject, never
	// Err's text, which may carry an upstream body. Empty: "The bot".
	Subject string
}

// Error implements the error interface so an Error frame can be returned or
// wrapped where an error is expected.
func (e *Error) Error() string {
	if e.Processor == "" {
		return fmt.Sprint(e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Processor, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Permanent reports whether the error makes its processor unusable.
func (e *Error) Permanent() bool { return e.Category == ErrorPermanent }

// ErrPermanent marks an error returned by a processor as permanent: wrap it
// (fmt.Errorf("...: %w", frames.ErrPermanent)) to make the processor unusable.
var ErrPermanent = errors.New("permanent failure")

// Flush is a round-trip probe: it travels down to the sink and back up to
// the task, which then knows that everything queued before it was handled.
type Flush struct {
	Base
	Uninterruptible
	// Token identifies the probe.
	Token uint64
}
