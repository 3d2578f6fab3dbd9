package uibus

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/internal/natstest"
	"github.com/framewire/framewire/processors/uiagent"
)

// The test of this file runs what a deployment runs: a task-group worker
// in another OS process, killed with SIGKILL. (Package bus tests its calls
// the same way, bus/process_test.go.)

// TestMainChildProcess is not a test: it is the callee process of the
// cross-process test (the test binary run again by natstest.StartChild). It
// serves a task-group worker, workers.search, that sends one update and
// works until cancelled, then says "serving" and waits to be killed.
func TestMainChildProcess(t *testing.T) {
	url := natstest.ChildURL()
	if url == "" {
		t.Skip("the callee process of the cross-process tests")
	}
	nc := natstest.Connect(t, url)
	b := bus.NATS(nc, testOptions)
	_, err := ServeWorker(context.Background(), b, "workers.search", func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": "remote searching"})
		fmt.Println("working")
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("serving")
	select {} // until killed
}

func TestGroupWithARemoteWorkerProcessKilledEndsWithinAFewBeats(t *testing.T) {
	bustest.LeakCheck(t)
	url := natstest.Embedded(t)
	c := natstest.StartChild(t, "TestMainChildProcess", url, "serving")
	caller := bus.NATS(natstest.Connect(t, url), testOptions)
	tg, rec := groups(t)
	g, err := tg.Start(uiagent.GroupOptions{}, RemoteWorker(caller, "remote", "workers.search"))
	if err != nil {
		t.Fatal(err)
	}
	c.Await(t, "working")
	time.Sleep(testOptions.Heartbeat) // its update is out
	killed := time.Now()
	c.Kill9(t) // no word to anyone
	got := rec.lifecycle(t, g)
	for i, l := range got { // the error itself is logged; the card gets an error id
		if strings.HasPrefix(l, `completed remote error {"error":"the worker ran into a problem (error id `) {
			got[i] = "completed remote error <gone>"
		}
	}
	checkLifecycle(t, got, map[string][]string{
		"remote": {`update remote {"text":"remote searching"}`, "completed remote error <gone>"},
	})
	if took := time.Since(killed); took > bustest.Silence(testOptions)+2*time.Second {
		t.Errorf("the group ended %v after the kill, want about the silence bound (%v)", took, bustest.Silence(testOptions))
	}
}
