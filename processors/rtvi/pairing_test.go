package rtvi

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// hidden runs a Processor but hides its Observer from the task, as a
// wrapper that does not forward pipeline.ObserverProvider would.
type hidden struct{ p *Processor }

func (h hidden) Setup(ctx context.Context, s pipeline.Setup) error { return h.p.Setup(ctx, s) }
func (h hidden) ProcessFrame(ctx context.Context, hd *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	return h.p.ProcessFrame(ctx, hd, f, dir)
}

// warnings returns the warnings logged that contain text.
func warnings(logs *observer.ObservedLogs, text string) []observer.LoggedEntry {
	return logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet(text).All()
}

func TestProcessorBringsItsObserver(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	p := NewProcessor(Options{})
	res := pipelinetest.Start(t, p, pipelinetest.Options{
		Send:  []frames.Frame{&UICommandFrame{Command: "scroll_to"}},
		Task:  pipeline.TaskOptions{Logger: zap.New(core)},
		NoEnd: true,
	})
	msgs := waitMessages(t, res, 1) // from the processor's own observer
	res.Task.EndWhenDone()
	res.Wait()
	if got := ofType(msgs, wire.TypeUICommand); len(got) != 1 {
		t.Errorf("messages sent: %v, want one ui-command", msgs)
	}
	if w := warnings(logs, "rtvi:"); len(w) != 0 {
		t.Errorf("warnings for a paired processor: %v", w)
	}
}

func TestObserverAddedByHandToo(t *testing.T) {
	p := NewProcessor(Options{})
	o := NewObserver(p, ObserverOptions{})
	if p.Observer() != observers.Observer(o) {
		t.Fatal("NewObserver did not become the processor's observer")
	}
	res := pipelinetest.Start(t, p, pipelinetest.Options{
		Send:  []frames.Frame{&UICommandFrame{Command: "scroll_to"}, &ServerMessageFrame{}},
		Task:  pipeline.TaskOptions{Observers: []observers.Observer{o}},
		NoEnd: true,
	})
	waitMessages(t, res, 2)
	res.Task.EndWhenDone()
	res.Wait()
	if got := ofType(sent(t, res.Down()), wire.TypeUICommand); len(got) != 1 {
		t.Errorf("ui-command sent %d times, want once", len(got))
	}
}

func TestProcessorWithoutItsObserverWarnsOnce(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	p := NewProcessor(Options{})
	pipelinetest.Run(t, hidden{p}, pipelinetest.Options{Task: pipeline.TaskOptions{Logger: zap.New(core)}})
	w := warnings(logs, "the processor runs without its observer")
	if len(w) != 1 {
		t.Fatalf("warnings %v, want one", logs.All())
	}
	for _, want := range []string{"bot-output", "ui-command", "TaskOptions.Observers"} {
		if !strings.Contains(w[0].Message, want) {
			t.Errorf("warning %q does not name %q", w[0].Message, want)
		}
	}
}

func TestObserverWithoutItsProcessorWarnsOnce(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	p := NewProcessor(Options{})
	o := NewObserver(p, ObserverOptions{Logger: zap.New(core)})
	// The pipeline runs something else; the observer was added by hand.
	pipelinetest.Run(t, pipeline.PassThrough{}, pipelinetest.Options{
		Send: []frames.Frame{&frames.LLMText{Text: "hi"}},
		Task: pipeline.TaskOptions{Observers: []observers.Observer{o}},
	})
	w := warnings(logs, "the observer runs without its processor")
	if len(w) != 1 {
		t.Fatalf("warnings %v, want one", logs.All())
	}
	if !strings.Contains(w[0].Message, "reaches the client") {
		t.Errorf("warning %q does not say what will not work", w[0].Message)
	}
}
