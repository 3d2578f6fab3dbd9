package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// sink records every frame it sees, in order.
type sink struct {
	mu     sync.Mutex
	frames []frames.Frame
	dirs   []frames.Direction
}

func (s *sink) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	s.mu.Lock()
	s.frames = append(s.frames, f)
	s.dirs = append(s.dirs, dir)
	s.mu.Unlock()
	return nil
}

// texts returns the text of every recorded Text frame travelling in dir.
func (s *sink) texts(dir frames.Direction) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, f := range s.frames {
		if t, ok := f.(*frames.Text); ok && s.dirs[i] == dir {
			out = append(out, t.Text)
		}
	}
	return out
}

// names returns the type names of the recorded frames, skipping skip.
func (s *sink) names(skip ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
next:
	for _, f := range s.frames {
		n := frames.TypeName(f)
		for _, k := range skip {
			if n == k {
				continue next
			}
		}
		if t, ok := f.(*frames.Text); ok {
			n = "Text:" + t.Text
		}
		out = append(out, n)
	}
	return out
}

// procFunc is a processor written inline.
type procFunc = pipeline.ProcessorFunc

// runTask runs task in the background and returns a channel for Run's error.
func runTask(t *testing.T, task *pipeline.Task) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	return done
}

// waitDone fails the test if the task has not finished within d.
func waitDone(t *testing.T, done <-chan error, d time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("task did not finish within %v", d)
		return nil
	}
}

// started returns a channel closed when task has started.
func started(task *pipeline.Task) <-chan struct{} {
	ch := make(chan struct{})
	task.OnStarted(func() { close(ch) })
	return ch
}

func text(s string) *frames.Text { return &frames.Text{Text: s} }

// blocker holds the ordered lane with a job on the text "block" until
// released or interrupted; it records whether its job saw cancellation.
type blocker struct {
	release   chan struct{}
	cancelled chan struct{}
	running   chan struct{}
	ignoreCtx bool
}

func newBlocker() *blocker {
	return &blocker{release: make(chan struct{}), cancelled: make(chan struct{}, 1), running: make(chan struct{}, 1)}
}

func (b *blocker) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if t, ok := f.(*frames.Text); ok && t.Text == "block" {
		h.Go(func(ctx context.Context, out pipeline.Pusher) error {
			b.running <- struct{}{}
			if b.ignoreCtx {
				<-b.release
				return nil
			}
			select {
			case <-b.release:
			case <-ctx.Done():
				b.cancelled <- struct{}{}
			}
			return nil
		})
	}
	return nil
}
