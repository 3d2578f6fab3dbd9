package stt

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// heldStreamer's Connect and its streams' Recv block until their context
// ends; they count how many of them are running.
type heldStreamer struct {
	open    bool // Connect opens a stream at once instead of blocking
	running atomic.Int32
	entered chan string // "connect", "recv"
}

func (h *heldStreamer) Connect(ctx context.Context, _ Format) (Stream, error) {
	if h.open {
		return &heldStream{h}, nil
	}
	h.running.Add(1)
	defer h.running.Add(-1)
	h.enter("connect")
	<-ctx.Done()
	return nil, ctx.Err()
}

// enter tells the test the first time the session reaches the streamer.
func (h *heldStreamer) enter(what string) {
	select {
	case h.entered <- what:
	default:
	}
}

type heldStream struct{ h *heldStreamer }

func (s *heldStream) SendAudio(context.Context, []byte) error { return nil }
func (s *heldStream) Finalize(context.Context) error          { return nil }
func (s *heldStream) KeepAlive(context.Context) error         { return nil }
func (s *heldStream) Close(context.Context) error             { return nil } // the server never finishes
func (s *heldStream) Abort() error                            { return nil } // nor hangs up: only ctx ends Recv

func (s *heldStream) Recv(ctx context.Context) (Event, error) {
	s.h.running.Add(1)
	defer s.h.running.Add(-1)
	s.h.enter("recv")
	<-ctx.Done()
	return Event{}, ctx.Err()
}

// The session manager and its reader are background work of the task:
// Cancel and the end of the task (after End) end their contexts, and Run
// returns only once they have returned.
func TestStreamingSessionEndsWithTheTask(t *testing.T) {
	for _, tc := range []struct {
		name string
		open bool
		end  func(*pipeline.Task)
	}{
		{"connecting/cancel", false, func(task *pipeline.Task) { task.Cancel("test") }},
		{"connecting/end", false, func(task *pipeline.Task) { task.EndWhenDone() }},
		{"open/cancel", true, func(task *pipeline.Task) { task.Cancel("test") }},
		{"open/end", true, func(task *pipeline.Task) { task.EndWhenDone() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := &heldStreamer{open: tc.open, entered: make(chan string, 1)}
			o := fastOptions()
			o.CloseTimeout = 10 * time.Millisecond
			s := NewStreaming(hs, o)
			task := pipeline.NewTask(pipeline.New(s), pipeline.TaskOptions{})
			done := make(chan error, 1)
			go func() { done <- task.Run(context.Background()) }()
			select {
			case <-hs.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the session manager never connected")
			}
			tc.end(task)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the task did not finish")
			}
			if n := hs.running.Load(); n != 0 {
				t.Fatalf("%d session goroutines still in the streamer after Run returned", n)
			}
		})
	}
}

// stuckStreamer's Connect ignores its context until released.
type stuckStreamer struct {
	entered, release, returned chan struct{}
}

func (s *stuckStreamer) Connect(context.Context, Format) (Stream, error) {
	defer close(s.returned)
	close(s.entered)
	<-s.release
	return nil, context.Canceled
}

// A streamer that ignores its context does not hold the task past its
// cancel timeout, and the log names the session manager.
func TestStreamingStuckSessionIsNamed(t *testing.T) {
	ss := &stuckStreamer{entered: make(chan struct{}), release: make(chan struct{}), returned: make(chan struct{})}
	s := NewStreaming(ss, fastOptions())
	core, logs := observer.New(zap.ErrorLevel)
	task := pipeline.NewTask(pipeline.New(s), pipeline.TaskOptions{Logger: zap.New(core), CancelTimeout: 100 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	defer func() { close(ss.release); <-ss.returned }()
	<-ss.entered
	task.Cancel("test")
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	entries := logs.FilterMessageSnippet("work still running").All()
	if len(entries) != 1 {
		t.Fatalf("logged %d 'work still running' errors, want 1: %v", len(entries), logs.All())
	}
	names, _ := entries[0].ContextMap()["background"].([]any)
	if len(names) != 1 || !strings.HasSuffix(names[0].(string), "/session manager") {
		t.Fatalf("stuck work named %v, want one name ending in /session manager", names)
	}
}

// A processor reused by a second task after Stop opens a new session: the
// first one ended with its task.
func TestStreamingReusedAfterStopOpensANewSession(t *testing.T) {
	fs := newFakeStreamer()
	s := NewStreaming(fs, fastOptions())
	for run := range 2 {
		task := pipeline.NewTask(pipeline.New(s), pipeline.TaskOptions{})
		done := make(chan error, 1)
		go func() { done <- task.Run(context.Background()) }()
		select {
		case <-fs.opened:
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: no session opened", run)
		}
		task.QueueFrame(&frames.Stop{})
		if err := <-done; err != nil {
			t.Fatalf("run %d: Run: %v", run, err)
		}
	}
	if n := fs.attemptCount(); n != 2 {
		t.Fatalf("%d connection attempts over two tasks, want 2", n)
	}
}
