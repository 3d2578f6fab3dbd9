package uibus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/processors/uiagent"
)

// envelopes records the task envelopes a TaskGroups pushes, as one line
// each: "started a,b", "update a {...}", "completed a error {...}",
// "group_completed".
type envelopes struct {
	mu    sync.Mutex
	lines []string
	ended chan struct{} // closed at the first group_completed
}

func (r *envelopes) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	tf, ok := f.(*rtvi.UITaskFrame)
	if !ok || dir != frames.Downstream {
		return nil
	}
	h.Consume()
	var line string
	switch e := tf.Event.(type) {
	case wire.GroupStarted:
		line = fmt.Sprintf("started %v", e.Agents)
	case wire.TaskUpdate:
		line = fmt.Sprintf("update %s %s", e.AgentName, payload(e.Data))
	case wire.TaskCompleted:
		line = fmt.Sprintf("completed %s %s %s", e.AgentName, e.Status, payload(e.Response))
	case wire.GroupCompleted:
		line = "group_completed"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	if line == "group_completed" && r.ended != nil {
		close(r.ended)
		r.ended = nil
	}
	return nil
}

func payload(p wire.Payload) string {
	if p == nil {
		return "-"
	}
	return string(p.AppendJSON(nil))
}

// lifecycle returns the envelopes once the group has completed and a few
// heartbeats more have passed (so a second group_completed would show).
func (r *envelopes) lifecycle(t *testing.T, g *uiagent.Group) []string {
	t.Helper()
	bustest.Within(t, g.Done(), bustest.Wait, "the group ended")
	time.Sleep(4 * testOptions.Heartbeat)
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// groups returns task groups in a running pipeline that records their
// envelopes, until the test ends.
func groups(t *testing.T) (*uiagent.TaskGroups, *envelopes) {
	t.Helper()
	tg := uiagent.NewTaskGroups(uiagent.TaskGroupsOptions{})
	rec := &envelopes{ended: make(chan struct{})}
	task := pipeline.NewTask(pipeline.New(tg, rec), pipeline.TaskOptions{})
	runTask(t, task, "the task")
	return tg, rec
}

// localWorker updates, then answers when step is closed, or ends with
// its ctx.
func localWorker(step <-chan struct{}) uiagent.Worker {
	return uiagent.Worker{Name: "local", Work: func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": "local searching"})
		select {
		case <-step:
			return map[string]string{"found": "local"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

func TestGroupWithARemoteWorker(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) { testGroupWithARemoteWorker(t, p.Caller, p.Callee) })
}

func testGroupWithARemoteWorker(t *testing.T, caller, callee bus.Bus) {
	step := make(chan struct{})
	svc, err := ServeWorker(t.Context(), callee, "workers.search", func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": "remote searching"})
		<-step
		return map[string]string{"found": "remote"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop() }()
	tg, rec := groups(t)
	g, err := tg.Start(uiagent.GroupOptions{}, localWorker(step), RemoteWorker(caller, "remote", "workers.search"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * testOptions.Heartbeat) // both updates are out
	close(step)
	got := rec.lifecycle(t, g)
	// The two workers run concurrently: compare each one's envelopes.
	want := map[string][]string{
		"local":  {`update local {"text":"local searching"}`, `completed local completed {"found":"local"}`},
		"remote": {`update remote {"text":"remote searching"}`, `completed remote completed {"found":"remote"}`},
	}
	checkLifecycle(t, got, want)
}

func TestGroupWithARemoteWorkerThatDies(t *testing.T) {
	bustest.Each(t, testOptions, testGroupWithARemoteWorkerThatDies)
}

func testGroupWithARemoteWorkerThatDies(t *testing.T, p bustest.Pair) {
	caller, callee := p.Caller, p.Callee
	working := make(chan struct{})
	remoteEnded := make(chan struct{})
	svc, err := ServeWorker(t.Context(), callee, "workers.search", func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": "remote searching"})
		close(working)
		<-ctx.Done()
		close(remoteEnded)
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	tg, rec := groups(t)
	g, err := tg.Start(uiagent.GroupOptions{}, localWorker(nil), RemoteWorker(caller, "remote", "workers.search"))
	if err != nil {
		t.Fatal(err)
	}
	bustest.Within(t, working, bustest.Wait, "the remote worker started")
	time.Sleep(testOptions.Heartbeat) // its update is out
	p.Kill(svc)                       // the remote process dies
	got := rec.lifecycle(t, g)
	for i, l := range got { // the error itself is logged; the card gets an error id
		if strings.HasPrefix(l, `completed remote error {"error":"the worker ran into a problem (error id `) {
			got[i] = "completed remote error <gone>"
		}
	}
	want := map[string][]string{
		"local":  {`update local {"text":"local searching"}`, `completed local cancelled -`},
		"remote": {`update remote {"text":"remote searching"}`, "completed remote error <gone>"},
	}
	checkLifecycle(t, got, want)
	bustest.Within(t, remoteEnded, bustest.Wait, "the remote work's ctx ended")
}

func TestCancelledGroupCancelsTheRemoteWork(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) { testCancelledGroupCancelsTheRemoteWork(t, p.Caller, p.Callee) })
}

func testCancelledGroupCancelsTheRemoteWork(t *testing.T, caller, callee bus.Bus) {
	blk := make(chan struct{})
	remoteEnded := make(chan struct{})
	svc, err := ServeWorker(t.Context(), callee, "workers.search", func(ctx context.Context, update func(any)) (any, error) {
		close(blk)
		<-ctx.Done()
		close(remoteEnded)
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop() }()
	tg, rec := groups(t)
	g, err := tg.Start(uiagent.GroupOptions{}, RemoteWorker(caller, "remote", "workers.search"))
	if err != nil {
		t.Fatal(err)
	}
	bustest.Within(t, blk, bustest.Wait, "the remote worker started")
	g.Cancel("the user gave up")
	checkLifecycle(t, rec.lifecycle(t, g), map[string][]string{"remote": {"completed remote cancelled -"}})
	bustest.Within(t, remoteEnded, bustest.Wait, "the remote work's ctx ended")
}

func TestRemoteWorkerErrors(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		svc, err := ServeWorker(t.Context(), p.Callee, "workers.broken", func(context.Context, func(any)) (any, error) {
			return nil, errors.New("the index is offline")
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = svc.Stop() }()
		w := RemoteWorker(p.Caller, "broken", "workers.broken")
		_, err = w.Work(t.Context(), func(any) {})
		var re *bus.RemoteError
		if !errors.As(err, &re) || re.Message != "the index is offline" {
			t.Errorf("error %v, want the remote's", err)
		}
		_, err = RemoteWorker(p.Caller, "missing", "workers.missing").Work(t.Context(), func(any) {})
		if !errors.Is(err, bus.ErrNoResponders) {
			t.Errorf("error %v, want ErrNoResponders", err)
		}
	})
}

// checkLifecycle checks a group's envelopes: group_started first, one
// group_completed, last, and each worker's envelopes in order.
func checkLifecycle(t *testing.T, got []string, want map[string][]string) {
	t.Helper()
	if len(got) < 2 || got[len(got)-1] != "group_completed" {
		t.Fatalf("envelopes do not end with group_completed:\n%s", lines(got))
	}
	if !strings.HasPrefix(got[0], "started ") {
		t.Errorf("envelopes do not start with group_started:\n%s", lines(got))
	}
	n := 0
	perWorker := map[string][]string{}
	for _, l := range got[1:] {
		if l == "group_completed" {
			n++
			continue
		}
		var kind, name string
		_, _ = fmt.Sscan(l, &kind, &name)
		perWorker[name] = append(perWorker[name], l)
	}
	if n != 1 {
		t.Errorf("%d group_completed, want exactly 1:\n%s", n, lines(got))
	}
	if d := cmp.Diff(want, perWorker); d != "" {
		t.Errorf("envelopes per worker (-want +got):\n%s", d)
	}
}

func lines(ls []string) string {
	b, _ := json.MarshalIndent(ls, "", "  ")
	return string(b)
}

func TestRemoteWorkerValuesCrossAsJSON(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		svc, err := ServeWorker(t.Context(), p.Callee, "workers.raw", func(_ context.Context, update func(any)) (any, error) {
			update(wire.RawJSON(`{"raw":true}`))
			update(json.RawMessage(`[1,2]`))
			update(json.RawMessage(`{broken`)) // dropped
			update(map[string]int{"n": 3})
			return wire.RawJSON(`{"done":1}`), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = svc.Stop() }()
		var updates []string
		resp, err := RemoteWorker(p.Caller, "raw", "workers.raw").Work(t.Context(), func(v any) {
			updates = append(updates, string(v.(json.RawMessage)))
		})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{`{"raw":true}`, `[1,2]`, `{"n":3}`}, updates); d != "" {
			t.Errorf("updates (-want +got):\n%s", d)
		}
		if got := string(resp.(json.RawMessage)); got != `{"done":1}` {
			t.Errorf("response %s", got)
		}
	})
}

// A served worker that ends with uiagent.Failed reaches the group as
// "failed" with its response, as a worker in the group's own process does.
func TestRemoteWorkerFailsWithItsResponse(t *testing.T) {
	bustest.Each(t, testOptions, func(t *testing.T, p bustest.Pair) {
		svc, err := ServeWorker(t.Context(), p.Callee, "workers.picky", func(context.Context, func(any)) (any, error) {
			return nil, fmt.Errorf("no offer found: %w", uiagent.Failed(map[string]string{"reason": "sold out"}))
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = svc.Stop() }()
		_, err = RemoteWorker(p.Caller, "picky", "workers.picky").Work(t.Context(), func(any) {})
		resp, ok := uiagent.FailedResponse(err)
		if !ok {
			t.Fatalf("error %v, want a uiagent.Failed", err)
		}
		if raw, _ := resp.(json.RawMessage); string(raw) != `{"reason":"sold out"}` {
			t.Errorf("failed response %v (%T), want the worker's JSON", resp, resp)
		}
	})
}
