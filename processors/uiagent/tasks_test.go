package uiagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// testGroups returns task groups that push into a recorder, with a clock
// that ticks one millisecond per envelope.
func testGroups(t testing.TB) (*TaskGroups, *recorder) {
	tg := NewTaskGroups(TaskGroupsOptions{})
	var ms int64 = 1000
	tg.now = func() time.Time { ms++; return time.UnixMilli(ms) }
	return tg, attach(t, tg)
}

// envelopes returns the recorded lifecycle as 2.1.0 wire data.
func envelopes(t testing.TB, fs []frames.Frame) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, f := range fs {
		tf, ok := f.(*rtvi.UITaskFrame)
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(wire.UITask{Event: tf.Event}.AppendJSON(nil), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "at")
		delete(m, "job_id")
		out = append(out, m)
	}
	return out
}

// checkLifecycle checks the invariants every group keeps: group_started
// first, one completion per worker after that worker's updates,
// group_completed exactly once and last, one job id, an "at" everywhere.
func checkLifecycle(t *testing.T, fs []frames.Frame, workers ...string) {
	t.Helper()
	id := ""
	done := map[string]bool{}
	var lastAt int64
	for i, f := range fs {
		tf, ok := f.(*rtvi.UITaskFrame)
		if !ok {
			t.Errorf("frame %d is %s, not a task envelope", i, frames.TypeName(f))
			continue
		}
		var gid string
		var at int64
		switch e := tf.Event.(type) {
		case wire.GroupStarted:
			if i != 0 {
				t.Errorf("group_started at position %d", i)
			}
			if d := cmp.Diff(workers, e.Agents); d != "" {
				t.Errorf("workers (-want +got):\n%s", d)
			}
			gid, at = e.TaskID, e.At
		case wire.TaskUpdate:
			if done[e.AgentName] {
				t.Errorf("update from %s after its completion", e.AgentName)
			}
			gid, at = e.TaskID, e.At
		case wire.TaskCompleted:
			if done[e.AgentName] {
				t.Errorf("second completion for %s", e.AgentName)
			}
			done[e.AgentName] = true
			gid, at = e.TaskID, e.At
		case wire.GroupCompleted:
			if i != len(fs)-1 {
				t.Errorf("group_completed at position %d of %d", i, len(fs))
			}
			if len(done) != len(workers) {
				t.Errorf("group_completed after %d of %d completions", len(done), len(workers))
			}
			gid, at = e.TaskID, e.At
		}
		if id == "" {
			id = gid
		}
		if gid != id || gid == "" {
			t.Errorf("envelope %d has job id %q, want %q", i, gid, id)
		}
		if at < lastAt || at == 0 {
			t.Errorf("envelope %d at %d after %d", i, at, lastAt)
		}
		lastAt = at
	}
	if len(fs) == 0 {
		t.Error("no envelopes")
	}
}

// steppedWorker updates, waits for its step (or cancellation), then
// responds; on cancellation it sends a late update and a late response.
func steppedWorker(name string, step <-chan error) Worker {
	return Worker{Name: name, Work: func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": name + " searching"})
		select {
		case err := <-step:
			if err != nil {
				return nil, err
			}
			return map[string]any{"found": name}, nil
		case <-ctx.Done():
			update(map[string]string{"text": "late"})
			return map[string]string{"late": "response"}, nil
		}
	}}
}

func TestGroupNormalCompletion(t *testing.T) {
	tg, rec := testGroups(t)
	a, b := make(chan error), make(chan error)
	var completed []string
	g, err := tg.Start(GroupOptions{Label: "Research", OnCompleted: func(c Completion) { completed = append(completed, c.Worker) }},
		steppedWorker("wikipedia", a), steppedWorker("news", b))
	if err != nil {
		t.Fatal(err)
	}
	waitEnvelopes(t, rec, 3)
	a <- nil
	waitEnvelopes(t, rec, 4)
	b <- nil
	comps, err := g.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkLifecycle(t, rec.all(), "wikipedia", "news")
	got := envelopes(t, rec.all())
	if d := cmp.Diff(map[string]any{"kind": "group_started", "workers": []any{"wikipedia", "news"}, "label": "Research", "cancellable": true}, got[0]); d != "" {
		t.Errorf("group_started (-want +got):\n%s", d)
	}
	want := []map[string]any{
		{"kind": "job_completed", "worker_name": "wikipedia", "status": "completed", "response": map[string]any{"found": "wikipedia"}},
		{"kind": "job_completed", "worker_name": "news", "status": "completed", "response": map[string]any{"found": "news"}},
		{"kind": "group_completed"},
	}
	if d := cmp.Diff(want, got[3:]); d != "" {
		t.Errorf("ending (-want +got):\n%s", d)
	}
	if len(comps) != 2 || comps[0].Status != wire.StatusCompleted || g.CancelReason() != "" || tg.Running() != 0 {
		t.Errorf("completions %+v, reason %q, running %d", comps, g.CancelReason(), tg.Running())
	}
	if d := cmp.Diff([]string{"wikipedia", "news"}, completed); d != "" {
		t.Errorf("OnCompleted (-want +got):\n%s", d)
	}
	if err := tg.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func waitEnvelopes(t *testing.T, rec *recorder, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.all()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d envelopes, want %d", len(rec.all()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A worker error is reported before the group is torn down; by default
// the other workers are cancelled, and what they send later is dropped.
func TestGroupWorkerError(t *testing.T) {
	tg, rec := testGroups(t)
	a, b := make(chan error), make(chan error)
	g, err := tg.Start(GroupOptions{}, steppedWorker("a", a), steppedWorker("b", b))
	if err != nil {
		t.Fatal(err)
	}
	waitEnvelopes(t, rec, 3)
	a <- errors.New("index unreachable")
	<-g.Done()
	if err := tg.Cleanup(context.Background()); err != nil { // b's late update and response come and go
		t.Fatal(err)
	}
	checkLifecycle(t, rec.all(), "a", "b")
	got := envelopes(t, rec.all())
	if resp, ok := got[3]["response"].(map[string]any); ok && workerErrorRE.MatchString(fmt.Sprint(resp["error"])) {
		resp["error"] = "<generic>" // TestWorkerErrorIsLoggedNotSent checks it
	}
	want := []map[string]any{
		{"kind": "job_completed", "worker_name": "a", "status": "error", "response": map[string]any{"error": "<generic>"}},
		{"kind": "job_completed", "worker_name": "b", "status": "cancelled"},
		{"kind": "group_completed"},
	}
	if d := cmp.Diff(want, got[3:]); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if g.CancelReason() != "worker a ended with error" {
		t.Errorf("reason %q", g.CancelReason())
	}
}

func TestGroupFailedAndKeepOnError(t *testing.T) {
	tg, rec := testGroups(t)
	a, b := make(chan error), make(chan error)
	g, err := tg.Start(GroupOptions{KeepOnError: true}, steppedWorker("a", a), steppedWorker("b", b))
	if err != nil {
		t.Fatal(err)
	}
	waitEnvelopes(t, rec, 3)
	a <- Failed(map[string]string{"reason": "no results"})
	waitEnvelopes(t, rec, 4)
	b <- nil
	comps, _ := g.Wait(context.Background())
	checkLifecycle(t, rec.all(), "a", "b")
	got := envelopes(t, rec.all())
	want := []map[string]any{
		{"kind": "job_completed", "worker_name": "a", "status": "failed", "response": map[string]any{"reason": "no results"}},
		{"kind": "job_completed", "worker_name": "b", "status": "completed", "response": map[string]any{"found": "b"}},
		{"kind": "group_completed"},
	}
	if d := cmp.Diff(want, got[3:]); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if comps[0].Err == nil || comps[1].Err != nil {
		t.Errorf("completions: %+v", comps)
	}
	_ = tg.Cleanup(context.Background())
}

// A timeout cancels the group: every worker gets a synthesized cancelled
// completion, then group_completed; late updates are dropped.
func TestGroupTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg, rec := testGroups(t)
		g, err := tg.Start(GroupOptions{Timeout: 5 * time.Second}, steppedWorker("a", nil), steppedWorker("b", nil))
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := len(rec.all()); n != 3 {
			t.Fatalf("%d envelopes before the timeout, want 3", n)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		<-g.Done()
		checkLifecycle(t, rec.all(), "a", "b")
		got := envelopes(t, rec.all())
		want := []map[string]any{
			{"kind": "job_completed", "worker_name": "a", "status": "cancelled"},
			{"kind": "job_completed", "worker_name": "b", "status": "cancelled"},
			{"kind": "group_completed"},
		}
		if d := cmp.Diff(want, got[3:]); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		if g.CancelReason() != "timed out" {
			t.Errorf("reason %q", g.CancelReason())
		}
		if err := tg.Cleanup(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// The user cancels from the card: honoured for a cancellable group, with
// the default reason; refused for a group started not cancellable, which
// the server can still cancel.
func TestGroupUserCancel(t *testing.T) {
	tg, rec := testGroups(t)
	g, err := tg.Start(GroupOptions{}, steppedWorker("a", nil), steppedWorker("b", nil))
	if err != nil {
		t.Fatal(err)
	}
	waitEnvelopes(t, rec, 3)
	if tg.HandleCancel(&rtvi.UICancelTaskFrame{TaskID: "nope"}) || tg.HandleCancel(&rtvi.UICancelTaskFrame{}) || tg.HandleCancel(nil) {
		t.Error("a cancel for an unknown group was honoured")
	}
	if !tg.HandleCancel(&rtvi.UICancelTaskFrame{TaskID: g.ID()}) {
		t.Fatal("the user's cancel was refused")
	}
	if g.CancelReason() != DefaultCancelReason {
		t.Errorf("reason %q", g.CancelReason())
	}
	if tg.HandleCancel(&rtvi.UICancelTaskFrame{TaskID: g.ID()}) || g.Cancel("again") {
		t.Error("a finished group was cancelled again")
	}
	_ = tg.Cleanup(context.Background())
	checkLifecycle(t, rec.all(), "a", "b")
	if n := len(rec.all()); n != 6 {
		t.Errorf("%d envelopes, want 6 (late update and response dropped)", n)
	}
}

func TestGroupNotCancellable(t *testing.T) {
	tg, rec := testGroups(t)
	a := make(chan error)
	g, err := tg.Start(GroupOptions{NotCancellable: true}, steppedWorker("a", a))
	if err != nil {
		t.Fatal(err)
	}
	waitEnvelopes(t, rec, 2)
	if tg.HandleCancel(&rtvi.UICancelTaskFrame{TaskID: g.ID(), Reason: "stop", Vocabulary: wire.VocabularyTask}) {
		t.Fatal("a non-cancellable group was cancelled by the client")
	}
	if got := envelopes(t, rec.all()); got[0]["cancellable"] != false || len(got) != 2 {
		t.Errorf("envelopes: %v", got)
	}
	a <- nil
	comps, _ := g.Wait(context.Background())
	if len(comps) != 1 || comps[0].Status != wire.StatusCompleted {
		t.Errorf("completions: %+v", comps)
	}
	// The server may cancel any group.
	b := make(chan error)
	g2, _ := tg.Start(GroupOptions{NotCancellable: true}, steppedWorker("b", b))
	if !tg.Cancel(g2.ID(), "shutting down") || g2.CancelReason() != "shutting down" {
		t.Error("the server could not cancel a non-cancellable group")
	}
	_ = tg.Cleanup(context.Background())
}

func TestGroupStartErrors(t *testing.T) {
	tg, _ := testGroups(t)
	ok := func(context.Context, func(any)) (any, error) { return nil, nil }
	for _, ws := range [][]Worker{
		nil,
		{{Name: "", Work: ok}},
		{{Name: "a", Work: ok}, {Name: "a", Work: ok}},
		{{Name: "a"}},
	} {
		if _, err := tg.Start(GroupOptions{}, ws...); err == nil {
			t.Errorf("Start(%v) succeeded", ws)
		}
	}
	_ = tg.Cleanup(context.Background())
	if _, err := tg.Start(GroupOptions{}, Worker{Name: "a", Work: ok}); !errors.Is(err, pipeline.ErrTaskEnded) {
		t.Errorf("Start after cleanup: %v", err)
	}
}

// A panicking worker ends with "error"; Run waits for the group.
func TestGroupPanicAndRun(t *testing.T) {
	tg, rec := testGroups(t)
	comps, err := tg.Run(context.Background(), GroupOptions{KeepOnError: true},
		Worker{Name: "ok", Work: func(context.Context, func(any)) (any, error) { return json.RawMessage(`{"n":1}`), nil }},
		Worker{Name: "bad", Work: func(context.Context, func(any)) (any, error) { panic("boom") }},
	)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]wire.TaskStatus{}
	for _, c := range comps {
		statuses[c.Worker] = c.Status
	}
	if d := cmp.Diff(map[string]wire.TaskStatus{"ok": wire.StatusCompleted, "bad": wire.StatusError}, statuses); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	checkLifecycle(t, rec.all(), "ok", "bad")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec2 := len(rec.all())
	comps, err = tg.Run(ctx, GroupOptions{}, steppedWorker("slow", nil))
	if !errors.Is(err, context.Canceled) || len(comps) != 1 || comps[0].Status != wire.StatusCancelled {
		t.Errorf("Run with a done context: %+v, %v", comps, err)
	}
	checkLifecycle(t, rec.all()[rec2:], "slow")
	_ = tg.Cleanup(context.Background())
}

// End passing through cancels what runs, with envelopes; Cleanup then
// stops the rest silently and waits for the workers.
func TestGroupsEndAndCleanup(t *testing.T) {
	tg, rec := testGroups(t)
	g1, _ := tg.Start(GroupOptions{}, steppedWorker("a", nil))
	if err := tg.ProcessFrame(context.Background(), nil, &frames.End{}, frames.Downstream); err != nil {
		t.Fatal(err)
	}
	<-g1.Done()
	checkLifecycle(t, rec.all(), "a")
	g2, _ := tg.Start(GroupOptions{}, steppedWorker("b", nil))
	before := len(rec.all())
	if err := tg.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-g2.Done()
	if after := len(rec.all()); after != before {
		t.Errorf("cleanup sent %d envelopes", after-before)
	}
}

// Updates and completions never touch the LLM context; they leave the
// agent as UI task frames.
func TestAgentGroupsStayOutOfTheContext(t *testing.T) {
	r := newRig(t, &llmtest.Provider{}, rigOptions{})
	before := r.conv.Messages()
	_, err := r.agent.Tasks().Run(context.Background(), GroupOptions{Label: "x"},
		Worker{Name: "w", Work: func(_ context.Context, update func(any)) (any, error) {
			update("working")
			return "done", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.settle()
	if d := cmp.Diff(before, r.conv.Messages()); d != "" {
		t.Errorf("the context changed (-before +after):\n%s", d)
	}
	r.mu.Lock()
	var tasks []frames.Frame
	for _, f := range r.down {
		if _, ok := f.(*rtvi.UITaskFrame); ok {
			tasks = append(tasks, f)
		}
	}
	r.mu.Unlock()
	checkLifecycle(t, tasks, "w")
	if len(tasks) != 4 {
		t.Errorf("%d envelopes, want 4", len(tasks))
	}
}

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"x", `"x"`},
		{json.RawMessage(`{"a":1}`), `{"a":1}`},
		{json.RawMessage(`{"a":`), `null`},
		{wire.RawJSON(`[1]`), `[1]`},
		{wire.RawJSON(`[`), `null`},
		{wire.Toast{Title: "t"}, `{"title":"t","subtitle":null,"description":null,"image_url":null,"duration_ms":null}`},
		{make(chan int), `null`},
		{map[string]int{"n": 1}, `{"n":1}`},
	} {
		if got := string(encode(tc.in)); got != tc.want {
			t.Errorf("encode(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FailedResponse finds the response of a Failed error, wrapped or not, and
// nothing in other errors.
func TestFailedResponse(t *testing.T) {
	resp := map[string]string{"reason": "sold out"}
	for _, err := range []error{Failed(resp), fmt.Errorf("shop: %w", Failed(resp))} {
		got, ok := FailedResponse(err)
		if !ok || !cmp.Equal(got, any(resp)) {
			t.Errorf("FailedResponse(%v) = %v, %v; want the response, true", err, got, ok)
		}
	}
	for _, err := range []error{nil, errors.New("uiagent: worker failed")} {
		if got, ok := FailedResponse(err); ok || got != nil {
			t.Errorf("FailedResponse(%v) = %v, %v; want nil, false", err, got, ok)
		}
	}
}
