package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
)

// waitingHandler is a function handler that runs until its context ends.
// started is closed when it runs, returned when it has returned.
type waitingHandler struct {
	started, returned chan struct{}
}

func newWaitingHandler() *waitingHandler {
	return &waitingHandler{started: make(chan struct{}), returned: make(chan struct{})}
}

func (w *waitingHandler) handle(ctx context.Context, _ llm.FunctionCallParams) error {
	defer close(w.returned)
	close(w.started)
	<-ctx.Done()
	return ctx.Err()
}

// A function handler is background work of the task: Cancel and the end of
// the task (after End) end its context, and Run returns only once it has
// returned. KeepOnInterruption keeps it from being cancelled any other way.
func TestFunctionHandlersEndWithTheTask(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*pipeline.Task)
	}{
		{"cancel", func(task *pipeline.Task) { task.Cancel("test") }},
		{"end", func(task *pipeline.Task) { task.EndWhenDone() }},
	} {
		for _, sequential := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "/parallel", true: "/sequential"}[sequential], func(t *testing.T) {
				w := newWaitingHandler()
				svc := llm.NewService(oneCall("c1", "wait", `{}`), llm.ServiceOptions{Sequential: sequential, FunctionTimeout: -1})
				if err := svc.Register(llm.Function{Name: "wait", KeepOnInterruption: true, Handler: w.handle}); err != nil {
					t.Fatal(err)
				}
				task := pipeline.NewTask(pipeline.New(svc), pipeline.TaskOptions{})
				task.OnStarted(func() { task.QueueFrame(userContext("go")) })
				done := make(chan error, 1)
				go func() { done <- task.Run(context.Background()) }()
				select {
				case <-w.started:
				case <-time.After(10 * time.Second):
					t.Fatal("the handler never ran")
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
				select {
				case <-w.returned:
				default:
					t.Fatal("the handler was still running when Run returned")
				}
			})
		}
	}
}

// A handler that ignores its context does not hold the task past its
// cancel timeout, and the log names it by function and call id.
func TestAStuckFunctionHandlerIsNamed(t *testing.T) {
	started, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	svc := llm.NewService(oneCall("c1", "stubborn", `{}`), llm.ServiceOptions{FunctionTimeout: -1})
	_ = svc.Register(llm.Function{Name: "stubborn", Handler: func(context.Context, llm.FunctionCallParams) error {
		defer close(returned)
		close(started)
		<-release
		return nil
	}})
	core, logs := observer.New(zap.ErrorLevel)
	task := pipeline.NewTask(pipeline.New(svc), pipeline.TaskOptions{Logger: zap.New(core), CancelTimeout: 100 * time.Millisecond})
	task.OnStarted(func() { task.QueueFrame(userContext("go")) })
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	defer func() { close(release); <-returned }()
	<-started
	task.Cancel("test")
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	entries := logs.FilterMessageSnippet("work still running").All()
	if len(entries) != 1 {
		t.Fatalf("logged %d 'work still running' errors, want 1: %v", len(entries), logs.All())
	}
	names, _ := entries[0].ContextMap()["background"].([]any)
	if len(names) != 1 || !strings.HasSuffix(names[0].(string), "/function stubborn c1") {
		t.Fatalf("stuck work named %v, want one name ending in /function stubborn c1", names)
	}
}
