package uiagent

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// Tests of issue 26, rows 10 and 11: what a client can make the agent
// write (to the log, to the client, to the model) is bounded and says
// nothing of the server's internals.

// workerErrorRE matches the error a worker's response carries.
var workerErrorRE = regexp.MustCompile(`^the worker ran into a problem \(error id [0-9a-f]{12}\)$`)

// Row 11: a worker's error (which may hold an upstream's URL with its
// credentials) reaches neither the client's card nor the response the
// model may read: both get a generic text with an error id, and the log
// line with that id holds the error. A panic is handled the same way.
func TestWorkerErrorIsLoggedNotSent(t *testing.T) {
	const secret = "user:hunter2@search.internal/?api-key=k-123"
	core, logs := observer.New(zapcore.DebugLevel)
	tg := NewTaskGroups(TaskGroupsOptions{Logger: zap.New(core)})
	rec := attach(t, tg)
	comps, err := tg.Run(context.Background(), GroupOptions{KeepOnError: true},
		Worker{Name: "search", Work: func(context.Context, func(any)) (any, error) {
			return nil, errors.New(`Get "https://` + secret + `": connection refused`)
		}},
		Worker{Name: "crash", Work: func(context.Context, func(any)) (any, error) { panic("crashed on " + secret) }},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wireText strings.Builder
	for _, f := range rec.all() {
		if tf, ok := f.(*rtvi.UITaskFrame); ok {
			wireText.Write(wire.UITask{Event: tf.Event}.AppendJSON(nil))
		}
	}
	if strings.Contains(wireText.String(), "hunter2") {
		t.Errorf("the client was sent the worker's error: %s", wireText.String())
	}
	logged := map[string]string{} // error id → error
	for _, e := range logs.FilterMessage("task-group worker ended with an error").All() {
		m := e.ContextMap()
		logged[m["error_id"].(string)] = m["error"].(string)
	}
	for _, c := range comps {
		var resp struct{ Error string }
		if err := json.Unmarshal(c.Response, &resp); err != nil || !workerErrorRE.MatchString(resp.Error) {
			t.Errorf("%s: response %s, want the generic error", c.Worker, c.Response)
			continue
		}
		id := resp.Error[strings.LastIndexByte(resp.Error, ' ')+1 : len(resp.Error)-1]
		if !strings.Contains(logged[id], "hunter2") {
			t.Errorf("%s: error id %s not logged with the error (logged %q)", c.Worker, id, logged)
		}
		if !strings.Contains(wireText.String(), id) {
			t.Errorf("%s: the client's card lacks error id %s", c.Worker, id)
		}
	}
}

// Row 10: a client that floods ui-events past the pending bound causes
// a bounded number of log lines (the first 5 a second, then one in 100),
// not one per event; the same for cancel requests of unknown groups.
func TestClientFloodWritesBoundedLogLines(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	a := New(Options{Logger: zap.New(core), MaxPendingEvents: 1})
	const n = 10_000
	start := time.Now()
	for range n {
		a.handleEvent("scrolled", wire.RawJSON(`{"y":1}`))
		a.tasks.HandleCancel(&rtvi.UICancelTaskFrame{TaskID: "no-such-group"})
	}
	// The sampler lets the first 5 of each message through every second,
	// then one in 100.
	seconds := int(time.Since(start)/time.Second) + 1
	bound := 5*seconds + n/100 + 1
	for _, msg := range []string{
		"too many UI events waiting for the next inference; dropping the oldest",
		"cancel request for an unknown task group",
	} {
		got := logs.FilterMessage(msg).Len()
		t.Logf("%q: %d lines for %d client messages", msg, got, n)
		if got == 0 || got > bound {
			t.Errorf("%q: %d lines for %d client messages, want 1 to %d", msg, got, n, bound)
		}
	}
}
