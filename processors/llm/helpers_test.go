package llm_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
)

func textEvents(parts ...string) []llm.Event {
	out := make([]llm.Event, len(parts))
	for i, p := range parts {
		out[i] = llm.TextEvent(p)
	}
	return out
}

func toolCall(id, name, args string) llm.Event {
	return llm.ToolCallEvent(frames.LLMToolCall{ID: id, Name: name, Arguments: args})
}

// harness runs processors in a task and records what reaches each end.
type harness struct {
	t    *testing.T
	task *pipeline.Task
	done chan error

	mu      sync.Mutex
	down    []frames.Frame
	up      []frames.Frame
	arrived chan struct{}
}

func newHarness(t *testing.T, opts pipeline.TaskOptions, procs ...pipeline.Processor) *harness {
	t.Helper()
	h := &harness{t: t, done: make(chan error, 1), arrived: make(chan struct{}, 1)}
	procs = append(procs, echo{})
	h.task = pipeline.NewTask(pipeline.New(procs...), opts)
	pipeline.OnDownstream(h.task, func(f frames.Frame) { h.record(&h.down, f) })
	pipeline.OnUpstream(h.task, func(f frames.Frame) { h.record(&h.up, f) })
	started := make(chan struct{})
	h.task.OnStarted(func() { close(started) })
	go func() { h.done <- h.task.Run(context.Background()) }()
	select {
	case <-started:
	case err := <-h.done:
		t.Fatalf("task ended before it started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("task did not start")
	}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) record(list *[]frames.Frame, f frames.Frame) {
	switch f.(type) {
	case *frames.Start, *frames.End, *frames.Stop, *frames.Cancel:
		return
	}
	h.mu.Lock()
	*list = append(*list, f)
	h.mu.Unlock()
	select {
	case h.arrived <- struct{}{}:
	default:
	}
}

// stop ends the task (gracefully) and waits for it.
func (h *harness) stop() {
	select {
	case <-h.task.Done():
		return
	default:
	}
	h.task.EndWhenDone()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("task ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Error("task did not end")
		h.task.Cancel("test timeout")
		<-h.done
	}
}

func (h *harness) Down() []frames.Frame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]frames.Frame(nil), h.down...)
}

func (h *harness) Up() []frames.Frame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]frames.Frame(nil), h.up...)
}

// waitFor waits until cond holds for what has arrived, failing the test
// after a generous bound.
func (h *harness) waitFor(what string, cond func(down, up []frames.Frame) bool) {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if cond(h.Down(), h.Up()) {
			return
		}
		select {
		case <-h.arrived:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s\ndown: %v\nup: %v", what, names(h.Down()), names(h.Up()))
		}
	}
}

// echo sits at the bottom of every harness pipeline: it answers each
// marker with a probe pushed back up, which arrives at the top after
// anything the processors pushed upstream before.
type echo struct{}

func (echo) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if t, ok := f.(*frames.Text); ok && dir == frames.Downstream && t.Text == "marker" {
		h.Push(&frames.Text{Text: "probe", NoContext: true}, frames.Upstream)
	}
	return nil
}

// send queues f and waits until everything it caused, both ways, has left
// the pipeline, so steps happen in order. A system frame is awaited at the
// bottom first, so that it cannot flush the marker that follows it.
func (h *harness) send(f frames.Frame) {
	h.t.Helper()
	if f.Lane() == frames.LaneSystem {
		h.task.QueueFrame(f)
		h.waitFor(frames.TypeName(f), func(down, _ []frames.Frame) bool {
			for _, d := range down {
				if d == f {
					return true
				}
			}
			return false
		})
		h.sync()
		return
	}
	h.task.QueueFrame(f)
	h.sync()
}

// sync sends a marker down and waits for its probe to come back up. An
// interruption still travelling down may flush the marker; then another
// marker is sent (a retry, never a verdict: the bound stays generous).
func (h *harness) sync() {
	h.t.Helper()
	probes := func() int {
		n := 0
		for _, f := range h.Up() {
			if t, ok := f.(*frames.Text); ok && t.Text == "probe" {
				n++
			}
		}
		return n
	}
	base := probes()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		h.task.QueueFrame(&frames.Text{Text: "marker", NoContext: true})
		retry := time.Now().Add(100 * time.Millisecond)
		for time.Now().Before(retry) {
			if probes() > base {
				return
			}
			select {
			case <-h.arrived:
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	h.t.Fatalf("no probe came back\ndown: %v\nup: %v", names(h.Down()), names(h.Up()))
}
func names(fs []frames.Frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = frames.TypeName(f)
		if t, ok := f.(*frames.LLMText); ok {
			out[i] += ":" + t.Text
		}
	}
	return out
}

func count[T frames.Frame](fs []frames.Frame) int { return len(pipelinetest.OfType[T](fs)) }

// collectText joins the LLMText frames in fs.
func collectText(fs []frames.Frame) string {
	var s string
	for _, t := range pipelinetest.OfType[*frames.LLMText](fs) {
		s += t.Text
	}
	return s
}
