package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
)

func userContext(text string) *frames.LLMContext {
	return llm.NewContext(llm.UserMessage(text)).Snapshot()
}

func TestResponseStreamsTextBetweenStartAndEnd(t *testing.T) {
	model := &llmtest.Provider{Respond: func(int, *frames.LLMContext) []llm.Event {
		return append(textEvents("Hel", "lo", ""), llm.UsageEvent(frames.LLMTokenUsage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}))
	}}
	svc := llm.NewService(model, llm.ServiceOptions{Name: "llm"})
	h := newHarness(t, pipeline.TaskOptions{EnableMetrics: true, EnableUsageMetrics: true}, svc)
	h.send(userContext("hi"))
	h.stop()

	got := names(nonMetrics(h.Down()))
	want := []string{"LLMFullResponseStartFrame", "LLMTextFrame:Hel", "LLMTextFrame:lo", "LLMFullResponseEndFrame", "TextFrame"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("down = %v, want %v", got, want)
	}
	kinds := map[frames.MetricKind]frames.Metric{}
	for _, m := range pipelinetest.OfType[*frames.Metrics](h.Down()) {
		for _, d := range m.Data {
			kinds[d.Kind] = d
		}
	}
	if _, ok := kinds[frames.MetricTTFB]; !ok {
		t.Error("no TTFB metric")
	}
	if _, ok := kinds[frames.MetricProcessing]; !ok {
		t.Error("no processing metric")
	}
	if u := kinds[frames.MetricLLMUsage]; u.Usage.TotalTokens != 5 || u.Processor != "llm" {
		t.Errorf("usage metric = %+v", u)
	}
}

func nonMetrics(fs []frames.Frame) []frames.Frame {
	var out []frames.Frame
	for _, f := range fs {
		if _, ok := f.(*frames.Metrics); !ok {
			out = append(out, f)
		}
	}
	return out
}

func TestMetricsStayOffUnlessEnabled(t *testing.T) {
	model := &llmtest.Provider{Respond: func(int, *frames.LLMContext) []llm.Event { return textEvents("x") }}
	h := newHarness(t, pipeline.TaskOptions{}, llm.NewService(model, llm.ServiceOptions{}))
	h.send(userContext("hi"))
	if n := count[*frames.Metrics](h.Down()); n != 0 {
		t.Errorf("%d metrics frames without metrics enabled", n)
	}
}

type transientErr struct{}

func (transientErr) Error() string                  { return "model overloaded" }
func (transientErr) Category() frames.ErrorCategory { return frames.ErrorTransient }

func TestProviderErrorGivesAnErrorFrameAndABalancedResponse(t *testing.T) {
	model := &llmtest.Provider{Respond: func(int, *frames.LLMContext) []llm.Event { return textEvents("partial") }, Err: transientErr{}}
	h := newHarness(t, pipeline.TaskOptions{}, llm.NewService(model, llm.ServiceOptions{}))
	h.send(userContext("hi"))
	down := h.Down()
	if count[*frames.LLMFullResponseStart](down) != 1 || count[*frames.LLMFullResponseEnd](down) != 1 {
		t.Errorf("unbalanced: %v", names(down))
	}
	h.waitFor("error upstream", func(_, up []frames.Frame) bool { return count[*frames.Error](up) == 1 })
	e := pipelinetest.OfType[*frames.Error](h.Up())[0]
	if e.Category != frames.ErrorTransient || !strings.Contains(e.Error(), "model overloaded") {
		t.Errorf("error frame = %v (category %v)", e, e.Category)
	}
}

// Two context frames in quick succession give two balanced, ordered
// responses (§6 item 13).
func TestOverlappingRequestsGiveOrderedBalancedResponses(t *testing.T) {
	model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		if n == 0 {
			return textEvents("one", "-a", "-b")
		}
		return textEvents("two")
	}}
	h := newHarness(t, pipeline.TaskOptions{}, llm.NewService(model, llm.ServiceOptions{}))
	h.task.QueueFrames(userContext("a"), userContext("b"))
	h.send(&frames.Text{Text: "sync"})
	got := strings.Join(names(h.Down()), ",")
	want := "LLMFullResponseStartFrame,LLMTextFrame:one,LLMTextFrame:-a,LLMTextFrame:-b,LLMFullResponseEndFrame," +
		"LLMFullResponseStartFrame,LLMTextFrame:two,LLMFullResponseEndFrame,TextFrame,TextFrame"
	if got != want {
		t.Errorf("down = %s\nwant   %s", got, want)
	}
}

func TestContextFromUpstreamAlsoStartsAResponse(t *testing.T) {
	model := &llmtest.Provider{Respond: func(int, *frames.LLMContext) []llm.Event { return textEvents("up") }}
	svc := llm.NewService(model, llm.ServiceOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, svc, pipeline.ProcessorFunc(func(_ context.Context, hd *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
		if tf, ok := f.(*frames.Text); ok && tf.Text == "ask" {
			hd.Push(userContext("from below"), frames.Upstream)
		}
		return nil
	}))
	h.send(&frames.Text{Text: "ask"})
	h.waitFor("response", func(down, _ []frames.Frame) bool { return count[*frames.LLMFullResponseEnd](down) == 1 })
	if got := collectText(h.Down()); got != "up" {
		t.Errorf("text = %q", got)
	}
	if n := count[*frames.LLMContext](h.Up()); n != 0 {
		t.Errorf("the context frame went on upstream: %v", names(h.Up()))
	}
}

func TestConfigureOutputMarksResponsesSkipTTS(t *testing.T) {
	model := &llmtest.Provider{Respond: func(int, *frames.LLMContext) []llm.Event { return textEvents("quiet") }}
	h := newHarness(t, pipeline.TaskOptions{}, llm.NewService(model, llm.ServiceOptions{}))
	h.send(&frames.LLMConfigureOutput{SkipTTS: true})
	h.send(userContext("hi"))
	for _, f := range h.Down() {
		switch f := f.(type) {
		case *frames.LLMFullResponseStart:
			if !f.SkipTTS {
				t.Error("start without SkipTTS")
			}
		case *frames.LLMText:
			if !f.SkipTTS {
				t.Error("text without SkipTTS")
			}
		case *frames.LLMConfigureOutput:
			t.Error("LLMConfigureOutput forwarded")
		}
	}
}

// callResults returns the downstream results by tool_call_id.
func callResults(fs []frames.Frame) map[string]*frames.FunctionCallResult {
	out := map[string]*frames.FunctionCallResult{}
	for _, r := range pipelinetest.OfType[*frames.FunctionCallResult](fs) {
		if _, dup := out[r.ToolCallID]; dup {
			panic("two results for " + r.ToolCallID)
		}
		out[r.ToolCallID] = r
	}
	return out
}

func errorText(v any) string {
	if e, ok := v.(llm.ErrorResult); ok {
		return e.Error
	}
	return ""
}

func oneCall(id, name, args string) *llmtest.Provider {
	return &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		if n == 0 {
			return []llm.Event{toolCall(id, name, args)}
		}
		return nil
	}}
}

func TestToolCallIsAnnouncedRunAndSettledOnce(t *testing.T) {
	model := oneCall("c1", "get_weather", `{"city":"Paris"}`)
	svc := llm.NewService(model, llm.ServiceOptions{})
	var gotArgs weatherArgs
	var gotParams llm.FunctionCallParams
	err := svc.Register(llm.NewFunction("get_weather", "", func(_ context.Context, call llm.FunctionCallParams, args weatherArgs) error {
		gotArgs, gotParams = args, call
		if err := call.Result(map[string]any{"temp": 21}); err != nil {
			return err
		}
		if err := call.Result("again"); !errors.Is(err, llm.ErrSettled) {
			t.Errorf("second Result = %v, want ErrSettled", err)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	req := userContext("weather?")
	h.send(req)
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })

	down := h.Down()
	started := pipelinetest.OfType[*frames.FunctionCallsStarted](down)
	progress := pipelinetest.OfType[*frames.FunctionCallInProgress](down)
	if len(started) != 1 || len(progress) != 1 {
		t.Fatalf("down = %v", names(down))
	}
	if started[0].GroupID == "" || progress[0].GroupID != started[0].GroupID || !progress[0].CancelOnInterruption {
		t.Errorf("started %+v, in progress %+v", started[0], progress[0])
	}
	r := callResults(down)["c1"]
	if r == nil || r.GroupID != started[0].GroupID || r.Properties.Intermediate || r.Properties.RunLLM != nil {
		t.Fatalf("result = %+v", r)
	}
	if b, _ := json.Marshal(r.Result); string(b) != `{"temp":21}` {
		t.Errorf("result value = %s", b)
	}
	if gotArgs.City != "Paris" || gotParams.ToolCallID != "c1" || gotParams.Context != req || gotParams.Out == nil {
		t.Errorf("handler got args %+v params %+v", gotArgs, gotParams)
	}
	// Each call frame is a broadcast pair: the other copy went upstream.
	if count[*frames.FunctionCallResult](h.Up()) != 1 || count[*frames.FunctionCallInProgress](h.Up()) != 1 {
		t.Errorf("up = %v", names(h.Up()))
	}
}

func TestUnknownFunctionGetsANotAvailableResult(t *testing.T) {
	svc := llm.NewService(oneCall("c1", "launch_rockets", `{}`), llm.ServiceOptions{})
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	if got := errorText(callResults(h.Down())["c1"].Result); !strings.Contains(got, "launch_rockets is not currently available") {
		t.Errorf("result = %q", got)
	}
}

func TestFallbackHandlesUnknownFunctions(t *testing.T) {
	svc := llm.NewService(oneCall("c1", "anything", `{"x":1}`), llm.ServiceOptions{})
	if err := svc.RegisterFallback(llm.Function{Handler: func(_ context.Context, call llm.FunctionCallParams) error {
		return call.Result("handled " + call.Name + " " + string(call.Arguments))
	}}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	if got := callResults(h.Down())["c1"].Result; got != `handled anything {"x":1}` {
		t.Errorf("result = %v", got)
	}
}

// Handler failures become results the model can read, without internals;
// the error itself goes upstream (§6 item 11: raise; report then raise).
func TestHandlerFailuresBecomeGenericErrorResults(t *testing.T) {
	cases := []struct {
		name       string
		handler    llm.Handler
		wantResult string // substring of the ErrorResult text; "" means the value "ok"
	}{
		{"error", func(context.Context, llm.FunctionCallParams) error {
			return errors.New("db password rejected for user admin")
		}, "The function f failed."},
		{"panic", func(context.Context, llm.FunctionCallParams) error {
			panic("nil map write at secret.go:42")
		}, "The function f failed."},
		{"report then raise", func(_ context.Context, call llm.FunctionCallParams) error {
			_ = call.Result("ok")
			return errors.New("cleanup failed")
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := llm.NewService(oneCall("c1", "f", `{}`), llm.ServiceOptions{})
			if err := svc.Register(llm.Function{Name: "f", Handler: tc.handler}); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, pipeline.TaskOptions{}, svc)
			h.send(userContext("go"))
			h.waitFor("result and error", func(down, up []frames.Frame) bool {
				return count[*frames.FunctionCallResult](down) == 1 && count[*frames.Error](up) == 1
			})
			r := callResults(h.Down())["c1"]
			if tc.wantResult == "" {
				if r.Result != "ok" {
					t.Errorf("result = %v, want the reported ok", r.Result)
				}
			} else {
				got := errorText(r.Result)
				if !strings.Contains(got, tc.wantResult) || strings.Contains(got, "secret") || strings.Contains(got, "password") {
					t.Errorf("result = %q", got)
				}
			}
			if e := pipelinetest.OfType[*frames.Error](h.Up())[0]; !strings.Contains(e.Error(), "function f") {
				t.Errorf("error frame = %v", e)
			}
		})
	}
}

func TestReturningWithoutAResultCompletesWithoutRerun(t *testing.T) {
	svc := llm.NewService(oneCall("c1", "f", `{}`), llm.ServiceOptions{})
	_ = svc.Register(llm.Function{Name: "f", Handler: func(context.Context, llm.FunctionCallParams) error { return nil }})
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	if r := callResults(h.Down())["c1"]; r.Result != nil {
		t.Errorf("result = %v, want nil", r.Result)
	}
}

func TestInvalidArgumentsAreReportedToTheModel(t *testing.T) {
	var ran atomic.Bool
	svc := llm.NewService(oneCall("c1", "get_weather", `{"city": "San Fr`), llm.ServiceOptions{})
	_ = svc.Register(llm.NewFunction("get_weather", "", func(context.Context, llm.FunctionCallParams, weatherArgs) error {
		ran.Store(true)
		return nil
	}))
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	r := callResults(h.Down())["c1"]
	if got := errorText(r.Result); !strings.Contains(got, "not valid JSON") {
		t.Errorf("result = %q", got)
	}
	if !json.Valid(r.Arguments) {
		t.Errorf("frame carries invalid JSON arguments %q", r.Arguments)
	}
	if ran.Load() {
		t.Error("handler ran with invalid arguments")
	}
}

func TestWrongArgumentTypesAreReportedToTheModel(t *testing.T) {
	svc := llm.NewService(oneCall("c1", "get_weather", `{"city": 7}`), llm.ServiceOptions{})
	_ = svc.Register(llm.NewFunction("get_weather", "", func(context.Context, llm.FunctionCallParams, weatherArgs) error { return nil }))
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	if got := errorText(callResults(h.Down())["c1"].Result); !strings.Contains(got, "arguments for get_weather were invalid") {
		t.Errorf("result = %q", got)
	}
}

// A handler that never reports is settled by its timeout, which tells the
// model it failed; its late result is rejected (§6 item 11).
func TestTimeoutTellsTheModelAndRejectsTheLateResult(t *testing.T) {
	late := make(chan error, 1)
	svc := llm.NewService(oneCall("c1", "slow", `{}`), llm.ServiceOptions{})
	_ = svc.Register(llm.Function{Name: "slow", Timeout: 20 * time.Millisecond, Handler: func(ctx context.Context, call llm.FunctionCallParams) error {
		<-ctx.Done()
		late <- call.Result("too late")
		return ctx.Err()
	}})
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	if got := errorText(callResults(h.Down())["c1"].Result); !strings.Contains(got, "did not finish within 20ms") {
		t.Errorf("result = %q", got)
	}
	select {
	case err := <-late:
		if !errors.Is(err, llm.ErrSettled) {
			t.Errorf("late Result = %v, want ErrSettled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler was not cancelled")
	}
	if n := count[*frames.Error](h.Up()); n != 0 {
		t.Errorf("%d error frames for a handler that stopped when told", n)
	}
}

func TestServiceDefaultTimeoutApplies(t *testing.T) {
	svc := llm.NewService(oneCall("c1", "slow", `{}`), llm.ServiceOptions{FunctionTimeout: 10 * time.Millisecond})
	_ = svc.Register(llm.Function{Name: "slow", Handler: func(ctx context.Context, _ llm.FunctionCallParams) error {
		<-ctx.Done()
		return nil
	}})
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	if got := errorText(callResults(h.Down())["c1"].Result); !strings.Contains(got, "did not finish") {
		t.Errorf("result = %q", got)
	}
}

// An interruption cancels the calls registered to be cancelled, each with
// its own cancel frame; a call kept on interruption goes on; a result after
// the cancel is rejected (§6 item 11: late result after interruption).
func TestInterruptionCancelsCallsPerFunction(t *testing.T) {
	model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		if n == 0 {
			return []llm.Event{toolCall("a", "cancellable", `{}`), toolCall("b", "kept", `{}`)}
		}
		return nil
	}}
	svc := llm.NewService(model, llm.ServiceOptions{})
	running := make(chan string, 2)
	release := make(chan struct{})
	lateA := make(chan error, 1)
	_ = svc.Register(
		llm.Function{Name: "cancellable", Handler: func(ctx context.Context, call llm.FunctionCallParams) error {
			running <- "a"
			<-ctx.Done()
			lateA <- call.Result("late")
			return nil
		}},
		llm.Function{Name: "kept", KeepOnInterruption: true, Handler: func(ctx context.Context, call llm.FunctionCallParams) error {
			running <- "b"
			<-release
			return call.Result("kept result")
		}},
	)
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	h.send(userContext("go"))
	<-running
	<-running
	h.send(&frames.Interruption{})
	h.waitFor("cancel", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallCancel](down) == 1 })
	if err := <-lateA; !errors.Is(err, llm.ErrSettled) {
		t.Errorf("late result of the cancelled call = %v", err)
	}
	close(release)
	h.waitFor("kept result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	cancels := pipelinetest.OfType[*frames.FunctionCallCancel](h.Down())
	if cancels[0].ToolCallID != "a" {
		t.Errorf("cancelled %q, want a", cancels[0].ToolCallID)
	}
	if r := callResults(h.Down()); r["b"] == nil || r["a"] != nil {
		t.Errorf("results = %v", r)
	}
	for _, p := range pipelinetest.OfType[*frames.FunctionCallInProgress](h.Down()) {
		if want := p.ToolCallID == "a"; p.CancelOnInterruption != want {
			t.Errorf("%s: CancelOnInterruption = %v", p.ToolCallID, p.CancelOnInterruption)
		}
	}
}

// Parallel calls run at the same time; sequential ones one after another,
// in the model's order.
func TestParallelAndSequentialCalls(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		name := "parallel"
		if sequential {
			name = "sequential"
		}
		t.Run(name, func(t *testing.T) {
			model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
				if n == 0 {
					return []llm.Event{toolCall("1", "f", `{}`), toolCall("2", "f", `{}`), toolCall("3", "f", `{}`)}
				}
				return nil
			}}
			svc := llm.NewService(model, llm.ServiceOptions{Sequential: sequential})
			var (
				mu         sync.Mutex
				order      []string
				active     int
				maxActive  int
				allStarted = make(chan struct{})
				startedN   atomic.Int32
			)
			_ = svc.Register(llm.Function{Name: "f", Handler: func(ctx context.Context, call llm.FunctionCallParams) error {
				mu.Lock()
				order = append(order, call.ToolCallID)
				active++
				maxActive = max(maxActive, active)
				mu.Unlock()
				if startedN.Add(1) == 3 {
					close(allStarted)
				}
				if !sequential {
					select { // every handler waits for all three: only possible when concurrent
					case <-allStarted:
					case <-ctx.Done():
					}
				}
				mu.Lock()
				active--
				mu.Unlock()
				return call.Result(call.ToolCallID)
			}})
			h := newHarness(t, pipeline.TaskOptions{}, svc)
			h.send(userContext("go"))
			h.waitFor("three results", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 3 })
			mu.Lock()
			defer mu.Unlock()
			if sequential && (maxActive != 1 || strings.Join(order, "") != "123") {
				t.Errorf("sequential: max active %d, order %v", maxActive, order)
			}
			if !sequential && maxActive != 3 {
				t.Errorf("parallel: max active %d", maxActive)
			}
			groups := map[string]bool{}
			for _, r := range pipelinetest.OfType[*frames.FunctionCallResult](h.Down()) {
				groups[r.GroupID] = true
			}
			if len(groups) != 1 {
				t.Errorf("%d group ids for one response", len(groups))
			}
		})
	}
}

func TestResultOptionsSetRunLLM(t *testing.T) {
	model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		if n == 0 {
			return []llm.Event{toolCall("never", "f", `{}`), toolCall("always", "f", `{}`)}
		}
		return nil
	}}
	svc := llm.NewService(model, llm.ServiceOptions{})
	_ = svc.Register(llm.Function{Name: "f", Handler: func(_ context.Context, call llm.FunctionCallParams) error {
		rerun := llm.RerunNever
		if call.ToolCallID == "always" {
			rerun = llm.RerunAlways
		}
		return call.ResultWith(nil, llm.ResultOptions{Rerun: rerun})
	}})
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("results", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 2 })
	r := callResults(h.Down())
	if p := r["never"].Properties.RunLLM; p == nil || *p {
		t.Errorf("never: RunLLM = %v", p)
	}
	if p := r["always"].Properties.RunLLM; p == nil || !*p {
		t.Errorf("always: RunLLM = %v", p)
	}
}

// An interruption mid-stream cancels the provider's context; the service
// pushes a balanced start and end, and no call from the abandoned response
// runs. (The end, pushed while the interruption is under way, may be flushed
// by the next processor's own interruption handling: consumers close an
// open response on Interruption.)
func TestInterruptionCancelsTheStream(t *testing.T) {
	model := &llmtest.Provider{Respond: func(int, *frames.LLMContext) []llm.Event {
		return []llm.Event{llm.TextEvent("Once upon"), toolCall("c1", "f", "{}")}
	}, Hang: llmtest.Always}
	svc := llm.NewService(model, llm.ServiceOptions{})
	var ran atomic.Bool
	_ = svc.Register(llm.Function{Name: "f", Handler: func(context.Context, llm.FunctionCallParams) error { ran.Store(true); return nil }})
	var starts, ends atomic.Int32
	watch := observers.Func(func(e observers.Event) {
		if e.Kind != observers.Pushed || e.Source == nil || e.Source.Processor() != svc {
			return
		}
		switch e.Frame.(type) {
		case *frames.LLMFullResponseStart:
			starts.Add(1)
		case *frames.LLMFullResponseEnd:
			ends.Add(1)
		}
	})
	h := newHarness(t, pipeline.TaskOptions{Observers: []observers.Observer{watch}}, svc)
	h.task.QueueFrame(userContext("story"))
	h.waitFor("first text", func(down, _ []frames.Frame) bool { return count[*frames.LLMText](down) == 1 })
	h.send(&frames.Interruption{})
	h.stop() // drains the observers
	if s, e := starts.Load(), ends.Load(); s != 1 || e != 1 {
		t.Errorf("service pushed %d starts and %d ends", s, e)
	}
	if n := count[*frames.Error](h.Up()); n != 0 {
		t.Errorf("an interruption reported %d errors", n)
	}
	if count[*frames.FunctionCallInProgress](h.Down()) != 0 || ran.Load() {
		t.Error("a call of the interrupted response was dispatched")
	}
}

// Usage that arrived before an interruption is still reported.
func TestUsageIsReportedEvenWhenInterrupted(t *testing.T) {
	model := &llmtest.Provider{Respond: func(int, *frames.LLMContext) []llm.Event {
		return []llm.Event{llm.UsageEvent(frames.LLMTokenUsage{PromptTokens: 40, TotalTokens: 40}), llm.TextEvent("Once")}
	}, Hang: llmtest.Always}
	h := newHarness(t, pipeline.TaskOptions{EnableUsageMetrics: true}, llm.NewService(model, llm.ServiceOptions{}))
	h.task.QueueFrame(userContext("story"))
	h.waitFor("text", func(down, _ []frames.Frame) bool { return count[*frames.LLMText](down) == 1 })
	h.send(&frames.Interruption{})
	h.waitFor("usage", func(down, _ []frames.Frame) bool {
		for _, m := range pipelinetest.OfType[*frames.Metrics](down) {
			for _, d := range m.Data {
				if d.Kind == frames.MetricLLMUsage && d.Usage.PromptTokens == 40 {
					return true
				}
			}
		}
		return false
	})
}

func TestUnregisteredFunctionIsNoLongerAvailable(t *testing.T) {
	svc := llm.NewService(oneCall("c1", "f", `{}`), llm.ServiceOptions{})
	_ = svc.Register(llm.Function{Name: "f", Handler: func(_ context.Context, call llm.FunctionCallParams) error { return call.Result("ran") }})
	svc.Unregister("f")
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("result", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 1 })
	if got := errorText(callResults(h.Down())["c1"].Result); !strings.Contains(got, "not currently available") {
		t.Errorf("result = %q", got)
	}
}

// Calls without ids (some local servers) or with duplicate ids get unique
// ones, so results can never be confused.
func TestMissingAndDuplicateCallIDsAreReplaced(t *testing.T) {
	model := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		if n == 0 {
			return []llm.Event{toolCall("", "f", `{}`), toolCall("dup", "f", `{}`), toolCall("dup", "f", `{}`)}
		}
		return nil
	}}
	svc := llm.NewService(model, llm.ServiceOptions{})
	_ = svc.Register(llm.Function{Name: "f", Handler: func(_ context.Context, call llm.FunctionCallParams) error { return call.Result(call.ToolCallID) }})
	h := newHarness(t, pipeline.TaskOptions{}, svc)
	h.send(userContext("go"))
	h.waitFor("results", func(down, _ []frames.Frame) bool { return count[*frames.FunctionCallResult](down) == 3 })
	ids := map[string]bool{}
	for _, r := range pipelinetest.OfType[*frames.FunctionCallResult](h.Down()) {
		if r.ToolCallID == "" || ids[r.ToolCallID] || r.Result != r.ToolCallID {
			t.Errorf("result %q for id %q", r.Result, r.ToolCallID)
		}
		ids[r.ToolCallID] = true
	}
}
