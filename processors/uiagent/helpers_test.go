package uiagent

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

func replyCall(id, args string) llm.Event {
	return llm.ToolCallEvent(frames.LLMToolCall{ID: id, Name: ReplyToolName, Arguments: args})
}

// rig is an agent in a running pipeline: agent → user aggregator → LLM
// service → assistant aggregator, with a sink that records what arrives.
type rig struct {
	t     *testing.T
	agent *Agent
	model *llmtest.Provider
	conv  *llm.Context
	pair  *llm.Pair
	svc   *llm.Service
	task  *pipeline.Task
	done  chan error

	mu    sync.Mutex
	down  []frames.Frame
	turns []Answer
	wake  chan struct{}
}

type rigOptions struct {
	agent    Options
	noHook   bool // do not wire BeforeInference (untracked turns)
	noWrap   bool // do not wrap the provider
	tools    []llm.Function
	system   string
	snapshot *wire.Snapshot
	// afterLLM are processors between the LLM service and the assistant
	// aggregator (a fake TTS, say).
	afterLLM []pipeline.Processor
}

func newRig(t *testing.T, model *llmtest.Provider, o rigOptions) *rig {
	t.Helper()
	r := &rig{t: t, model: model, done: make(chan error, 1), wake: make(chan struct{}, 1)}
	user := o.agent.OnTurnEnd
	o.agent.OnTurnEnd = func(a Answer) {
		r.mu.Lock()
		r.turns = append(r.turns, a)
		r.mu.Unlock()
		r.poke()
		if user != nil {
			user(a)
		}
	}
	r.agent = New(o.agent)
	if o.snapshot != nil {
		r.agent.SetSnapshot(o.snapshot)
	}
	system := o.system
	if system == "" {
		system = "You help with the page."
	}
	r.conv = llm.NewContext(llm.SystemMessage(system))
	tools := append([]llm.Function{r.agent.ReplyTool()}, o.tools...)
	r.conv.SetTools(llm.Tools(tools...))
	po := llm.PairOptions{}
	if !o.noHook {
		po.BeforeInference = r.agent.BeforeInference
	}
	r.pair = llm.NewPair(r.conv, po)
	var p llm.Provider = model
	if !o.noWrap {
		p = r.agent.Provider(model)
	}
	r.svc = llm.NewService(p, llm.ServiceOptions{})
	if err := r.svc.Register(tools...); err != nil {
		t.Fatal(err)
	}
	procs := append([]pipeline.Processor{r.agent, r.pair.User(), r.svc}, o.afterLLM...)
	procs = append(procs, r.pair.Assistant())
	r.task = pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{})
	pipeline.OnDownstream(r.task, func(f frames.Frame) {
		switch f.(type) {
		case *frames.Start, *frames.End, *frames.Cancel, *frames.Stop:
			return
		}
		r.mu.Lock()
		r.down = append(r.down, f)
		r.mu.Unlock()
		r.poke()
	})
	started := make(chan struct{})
	r.task.OnStarted(func() { close(started) })
	go func() { r.done <- r.task.Run(context.Background()) }()
	select {
	case <-started:
	case err := <-r.done:
		t.Fatalf("task ended before it started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("task did not start")
	}
	t.Cleanup(r.stop)
	return r
}

func (r *rig) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *rig) stop() {
	r.task.EndWhenDone()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.task.Cancel("test over")
		<-r.done
	}
}

// say sends the user's words as a user turn, like send-text does.
func (r *rig) say(text string) {
	r.task.QueueFrame(&frames.LLMMessagesAppend{Messages: []frames.LLMMessage{llm.UserMessage(text)}, RunLLM: true})
}

// waitFor waits (generously) until cond holds. cond must take r.mu itself
// if it needs it (the accessors do).
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if cond() {
			return
		}
		select {
		case <-r.wake:
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitTurns waits for n turn ends and returns them.
func (r *rig) waitTurns(n int) []Answer {
	r.t.Helper()
	r.waitFor("turn ends", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.turns) >= n
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Answer(nil), r.turns...)
}

// settle waits until the pipeline is quiet: a flush probe came back.
func (r *rig) settle() {
	r.t.Helper()
	probe := &frames.Flush{Token: frames.NextID()}
	got := make(chan struct{})
	var once sync.Once
	pipeline.OnUpstream(r.task, func(f *frames.Flush) {
		if f.Token == probe.Token {
			once.Do(func() { close(got) })
		}
	})
	r.task.QueueFrame(probe)
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		r.t.Fatal("pipeline did not settle")
	}
}

// commands returns the UI commands that arrived, as "name payload".
func (r *rig) commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return commandsOf(r.down)
}

func commandsOf(fs []frames.Frame) []string {
	var out []string
	for _, f := range fs {
		if c, ok := f.(*rtvi.UICommandFrame); ok {
			p := "null"
			if c.Payload != nil {
				p = string(c.Payload.AppendJSON(nil))
			}
			out = append(out, c.Command+" "+p)
		}
	}
	return out
}

// spoken returns the texts of the TTSSpeak frames that arrived.
func (r *rig) spoken() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, f := range r.down {
		if s, ok := f.(*frames.TTSSpeak); ok {
			out = append(out, s.Text)
		}
	}
	return out
}

// llmText returns the LLM text that arrived.
func (r *rig) llmText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := ""
	for _, f := range r.down {
		if t, ok := f.(*frames.LLMText); ok {
			s += t.Text
		}
	}
	return s
}

// toolResults returns the content of the tool messages in the context.
func (r *rig) toolResults() []string {
	var out []string
	for _, m := range r.conv.Messages() {
		if m.Role == llm.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// snapshotOf decodes a snapshot tree given as JSON.
func snapshotOf(t testing.TB, tree string) *wire.Snapshot {
	t.Helper()
	s, err := wire.DecodeSnapshot([]byte(tree))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// formSnapshot is a small form page: a heading, two inputs, a terms
// checkbox and a submit button below the fold.
const formTree = `{"root":{"ref":"e1","role":"generic","children":[
 {"ref":"e2","role":"heading","name":"Apply","level":1},
 {"ref":"e3","role":"textbox","name":"First name"},
 {"ref":"e4","role":"textbox","name":"Email"},
 {"ref":"e5","role":"checkbox","name":"I agree to the terms"},
 {"ref":"e6","role":"button","name":"Submit","state":["offscreen"]},
 {"ref":"e6.more","role":"ellipsis","name":"3 more"}
]},"captured_at":1}`

// recorder is the last processor of a task that runs one processor under
// test (see attach): it records the frames that processor pushes
// downstream.
type recorder struct {
	task *pipeline.Task

	mu     sync.Mutex
	frames []frames.Frame
	probes map[uint64]chan struct{}
}

// attach runs p in a task of its own, followed by a recorder, until the
// test ends.
func attach(t testing.TB, p pipeline.Processor) *recorder {
	t.Helper()
	rec := &recorder{probes: map[uint64]chan struct{}{}}
	rec.task = pipeline.NewTask(pipeline.New(p, rec), pipeline.TaskOptions{})
	started := make(chan struct{})
	rec.task.OnStarted(func() { close(started) })
	done := make(chan error, 1)
	go func() { done <- rec.task.Run(context.Background()) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("task did not start")
	}
	t.Cleanup(func() {
		rec.task.EndWhenDone()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			rec.task.Cancel("test over")
			<-done
		}
	})
	return rec
}

func (r *recorder) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start, *frames.End, *frames.Cancel, *frames.Stop:
		return nil
	case *frames.Flush:
		r.mu.Lock()
		ch := r.probes[f.Token]
		delete(r.probes, f.Token)
		r.mu.Unlock()
		if ch != nil {
			h.Consume()
			close(ch)
			return nil
		}
	}
	if dir == frames.Downstream {
		h.Consume()
		r.mu.Lock()
		r.frames = append(r.frames, f)
		r.mu.Unlock()
	}
	return nil
}

// all returns what was recorded once everything pushed before the call
// has arrived: a probe queued behind it has come through.
func (r *recorder) all() []frames.Frame {
	probe := &frames.Flush{Token: frames.NextID()}
	ch := make(chan struct{})
	r.mu.Lock()
	r.probes[probe.Token] = ch
	r.mu.Unlock()
	r.task.QueueFrame(probe)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		panic("uiagent test: the recorder's probe did not come through")
	}
	return r.now()
}

// now returns what was recorded so far.
func (r *recorder) now() []frames.Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]frames.Frame(nil), r.frames...)
}

// jsonOf decodes JSON into generic values.
func jsonOf(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", s, err)
	}
	return v
}

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// waitResults waits until n tool results are in the context, none of them
// still in progress, and returns them.
func (r *rig) waitResults(n int) []string {
	r.t.Helper()
	r.waitFor("tool results", func() bool {
		res := r.toolResults()
		if len(res) < n {
			return false
		}
		for _, c := range res {
			if c == llm.ToolInProgress {
				return false
			}
		}
		return true
	})
	return r.toolResults()
}

// countNodes counts the nodes of a tree.
func countNodes(n *wire.Node) int {
	c := 1
	for i := range n.Children {
		c += countNodes(&n.Children[i])
	}
	return c
}

// fakeTTS speaks TTSSpeak frames the way a TTS service does: started,
// the text, stopped.
type fakeTTS struct{}

func (fakeTTS) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	if s, ok := f.(*frames.TTSSpeak); ok && dir == frames.Downstream {
		h.Consume()
		h.Push(&frames.TTSStarted{}, dir)
		h.Push(&frames.TTSText{Text: s.Text, AggregatedBy: "sentence"}, dir)
		h.Push(&frames.TTSStopped{}, dir)
	}
	return nil
}
