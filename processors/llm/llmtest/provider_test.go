package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
)

// It plugs into the LLM service like any model.
var _ llm.Provider = (*llmtest.Provider)(nil)

// response is what one stream yielded.
type response struct {
	events []llm.Event
	errs   []error
}

// read reads one stream to its end.
func read(ctx context.Context, p *llmtest.Provider, req *frames.LLMContext) response {
	var r response
	for ev, err := range p.Stream(ctx, req) {
		if err != nil {
			r.errs = append(r.errs, err)
			continue
		}
		r.events = append(r.events, ev)
	}
	return r
}

func request(text string) *frames.LLMContext {
	return &frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage(text)}}
}

func texts(parts ...string) []llm.Event {
	out := make([]llm.Event, len(parts))
	for i, p := range parts {
		out[i] = llm.TextEvent(p)
	}
	return out
}

func TestZeroValueAnswersWithAnEmptySuccessfulResponse(t *testing.T) {
	var p llmtest.Provider
	req := request("hi")
	got := read(context.Background(), &p, req)
	if len(got.events) != 0 || len(got.errs) != 0 {
		t.Errorf("zero provider yielded %v, %v", got.events, got.errs)
	}
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0] != req {
		t.Errorf("requests = %v, want the one request", reqs)
	}
}

func TestScriptAnswersTheRequestsInOrderThenWithNothing(t *testing.T) {
	first := texts("Once ", "upon")
	second := []llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "c1", Name: "f", Arguments: `{}`})}
	p := &llmtest.Provider{Respond: llmtest.Script(first, second)}
	for i, want := range [][]llm.Event{first, second, nil} {
		got := read(context.Background(), p, request("go"))
		if diff := cmp.Diff(want, got.events); diff != "" {
			t.Errorf("response %d (-want +got):\n%s", i, diff)
		}
		if len(got.errs) != 0 {
			t.Errorf("response %d: errors %v", i, got.errs)
		}
	}
}

func TestRespondIsAskedWithTheRequestAndItsNumber(t *testing.T) {
	p := &llmtest.Provider{Respond: func(n int, req *frames.LLMContext) []llm.Event {
		return texts(fmt.Sprintf("%d:%s", n, req.Messages[0].Content))
	}}
	a := read(context.Background(), p, request("a"))
	b := read(context.Background(), p, request("b"))
	if diff := cmp.Diff(texts("0:a", "1:b"), append(a.events, b.events...)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A request counts when its stream starts being read, not when Stream is
// called; Requests is a copy the caller may keep.
func TestRequestsAreRecordedInOrderWhenTheirStreamsAreRead(t *testing.T) {
	p := &llmtest.Provider{}
	a, b := request("a"), request("b")
	streamA := p.Stream(context.Background(), a)
	streamB := p.Stream(context.Background(), b)
	if n := len(p.Requests()); n != 0 {
		t.Fatalf("%d requests recorded before any stream was read", n)
	}
	for range streamB {
	}
	for range streamA {
	}
	got := p.Requests()
	if len(got) != 2 || got[0] != b || got[1] != a {
		t.Fatalf("requests = %v, want b then a", got)
	}
	got[0] = nil
	if p.Requests()[0] != b {
		t.Error("changing the returned slice changed the record")
	}
}

func TestErrComesAfterTheEvents(t *testing.T) {
	boom := errors.New("upstream 500")
	p := &llmtest.Provider{Respond: llmtest.Script(texts("partial")), Err: boom}
	var order []string
	for ev, err := range p.Stream(context.Background(), request("go")) {
		if err != nil {
			order = append(order, "error: "+err.Error())
			continue
		}
		order = append(order, "text: "+ev.Text)
	}
	if diff := cmp.Diff([]string{"text: partial", "error: upstream 500"}, order); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	// Every request fails the same way, events or not.
	if got := read(context.Background(), p, request("again")); len(got.errs) != 1 || !errors.Is(got.errs[0], boom) {
		t.Errorf("second request: errors %v", got.errs)
	}
}

func TestHangHoldsTheStreamOpenAfterItsEventsUntilTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &llmtest.Provider{
			Respond: llmtest.Script(texts("Once ", "upon")),
			Hang:    llmtest.Always,
			Err:     errors.New("never yielded by a hanging stream"),
		}
		ctx, cancel := context.WithCancel(context.Background())
		var (
			mu     sync.Mutex
			events []llm.Event
			errs   []error
		)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ev, err := range p.Stream(ctx, request("story")) {
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					events = append(events, ev)
				}
				mu.Unlock()
			}
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("a hanging stream ended before its context did")
		default:
		}
		mu.Lock()
		if diff := cmp.Diff(texts("Once ", "upon"), events); diff != "" || len(errs) != 0 {
			t.Errorf("while hanging: events (-want +got):\n%s\nerrors %v", diff, errs)
		}
		mu.Unlock()
		cancel()
		<-done
		if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
			t.Errorf("after cancel: errors %v, want only context.Canceled", errs)
		}
	})
}

// A stream that hangs with no events holds from the start: the model
// never answers.
func TestHangWithNoEventsNeverAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &llmtest.Provider{Hang: llmtest.Always}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		got := read(ctx, p, request("anything"))
		if len(got.events) != 0 || len(got.errs) != 1 || !errors.Is(got.errs[0], context.DeadlineExceeded) {
			t.Errorf("got %v, %v; want only context.DeadlineExceeded", got.events, got.errs)
		}
		if waited := time.Since(start); waited != time.Minute {
			t.Errorf("the stream ended after %v, want when the context did (1m)", waited)
		}
	})
}

func TestHangIsDecidedPerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &llmtest.Provider{
			Respond: func(n int, _ *frames.LLMContext) []llm.Event {
				if n == 0 {
					return nil // the first request never answers
				}
				return texts("answer " + strconv.Itoa(n))
			},
			Hang: func(n int) bool { return n == 0 },
		}
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan response, 1)
		go func() { first <- read(ctx, p, request("first")) }()
		synctest.Wait()
		if n := len(p.Requests()); n != 1 {
			t.Fatalf("%d requests, want the first one", n)
		}
		second := read(context.Background(), p, request("second"))
		if diff := cmp.Diff(texts("answer 1"), second.events); diff != "" || len(second.errs) != 0 {
			t.Errorf("second request: events (-want +got):\n%s\nerrors %v", diff, second.errs)
		}
		select {
		case <-first:
			t.Fatal("the first request answered")
		default:
		}
		cancel()
		if got := <-first; len(got.events) != 0 || len(got.errs) != 1 || !errors.Is(got.errs[0], context.Canceled) {
			t.Errorf("first request: %v, %v", got.events, got.errs)
		}
	})
}

// Like a real provider, the stream stops when its context ends: the next
// item is the context's error, and the rest of the script never comes.
func TestStreamStopsWhenTheContextEndsMidResponse(t *testing.T) {
	p := &llmtest.Provider{Respond: llmtest.Script(texts("one", "two", "three")), Err: errors.New("not reached")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	for ev, err := range p.Stream(ctx, request("count")) {
		if err != nil {
			got = append(got, "error: "+err.Error())
			continue
		}
		got = append(got, ev.Text)
		cancel()
	}
	if diff := cmp.Diff([]string{"one", "error: " + context.Canceled.Error()}, got); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
}

func TestStreamEndsWhenTheConsumerStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Hang would block forever here (a deadlock synctest reports) if
		// the stream did not end when the consumer stops.
		p := &llmtest.Provider{Respond: llmtest.Script(texts("one", "two")), Hang: llmtest.Always}
		var got []llm.Event
		for ev, err := range p.Stream(context.Background(), request("go")) {
			if err != nil {
				t.Fatalf("error %v", err)
			}
			got = append(got, ev)
			break
		}
		if diff := cmp.Diff(texts("one"), got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

// Streams read at the same time get distinct numbers, and the n-th of
// Requests is the request answered as n.
func TestConcurrentStreamsAreNumberedOnce(t *testing.T) {
	p := &llmtest.Provider{Respond: func(n int, _ *frames.LLMContext) []llm.Event {
		return texts(strconv.Itoa(n))
	}}
	const streams = 8
	reqs := make([]*frames.LLMContext, streams)
	answers := make([]string, streams)
	var wg sync.WaitGroup
	for i := range streams {
		reqs[i] = request(strconv.Itoa(i))
		wg.Go(func() {
			for ev := range p.Stream(context.Background(), reqs[i]) {
				answers[i] = ev.Text
			}
		})
	}
	wg.Wait()
	recorded := p.Requests()
	if len(recorded) != streams {
		t.Fatalf("%d requests recorded, want %d", len(recorded), streams)
	}
	for i, req := range reqs {
		n, err := strconv.Atoi(answers[i])
		if err != nil || n < 0 || n >= streams || recorded[n] != req {
			t.Errorf("request %d was answered as %q, which Requests does not hold at that place", i, answers[i])
		}
	}
}

// A test scripts the model's answers and checks what it was asked.
func ExampleProvider() {
	model := &llmtest.Provider{Respond: llmtest.Script(
		[]llm.Event{llm.TextEvent("Hello"), llm.TextEvent(" there.")},
	)}
	req := &frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage("Hi!")}}
	for ev, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("%q\n", ev.Text)
	}
	fmt.Println(len(model.Requests()), "request:", model.Requests()[0].Messages[0].Content)
	// Output:
	// "Hello"
	// " there."
	// 1 request: Hi!
}
