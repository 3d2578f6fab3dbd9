package webrtc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// TestATaskGroupReachesASlowReaderWholeThroughRTVI is the acceptance test
// of issue 18 item 3 end to end: a task group's envelopes go through the
// RTVI observer and processor as in an application, to a client that reads
// one message per millisecond; every group_started, job_completed and
// group_completed arrives, in order, and the updates that arrive are in
// order, with each worker's last.
//
// The transport drops nothing here, and neither does the RTVI observer: it
// is an observers.Lossless observer, so the pipeline waits for it instead
// of its ring dropping events (before, about 30,000-50,000 events of this
// burst were dropped there and half the lifecycle never became a message).
func TestATaskGroupReachesASlowReaderWholeThroughRTVI(t *testing.T) {
	var mu sync.Mutex
	tasks := map[*Session]*pipeline.Task{}
	h := newHarness(t, Options{
		MaxBufferedBytes: 64 << 10, MaxOutboundMessages: 512, MaxOutboundBytes: 256 << 10,
		NewPipeline: func(_ context.Context, s *Session) (*pipeline.Task, error) {
			p := rtvi.NewProcessor(rtvi.Options{})
			task := pipeline.NewTask(pipeline.New(s.Input(), p, s.Output()),
				pipeline.TaskOptions{Observers: []observers.Observer{p.Observer()}})
			mu.Lock()
			tasks[s] = task
			mu.Unlock()
			return task, nil
		},
	})
	ctx := testContext(t, 40*time.Second)
	c := h.dial(ctx, webrtctest.Options{Backpressure: true, ReadDelay: time.Millisecond})
	if err := c.Send(`{"label":"rtvi-ai","type":"client-ready","id":"r1","data":{"version":"2.1.0","about":{"library":"@pipecat-ai/client-js"}}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(ctx, isType(wire.TypeBotReady)); err != nil {
		t.Fatal(err)
	}
	s, ok := h.srv.Session(c.PCID())
	if !ok {
		t.Fatal("no session")
	}
	mu.Lock()
	task := tasks[s]
	mu.Unlock()

	const groups, steps = 300, 8
	workers := []string{"w0", "w1", "w2", "w3"}
	var want []string // the lifecycle, as "kind job worker"
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for g := range groups {
			id := fmt.Sprintf("job-%03d", g)
			task.QueueFrame(&rtvi.UITaskFrame{Event: wire.GroupStarted{TaskID: id, Agents: workers, Cancellable: true, At: 1}})
			for n := range steps {
				for _, w := range workers {
					task.QueueFrame(&rtvi.UITaskFrame{Event: wire.TaskUpdate{TaskID: id, AgentName: w,
						Data: wire.RawJSON(fmt.Sprintf(`{"step":%d}`, n)), At: 1}})
				}
			}
			for _, w := range workers {
				task.QueueFrame(&rtvi.UITaskFrame{Event: wire.TaskCompleted{TaskID: id, AgentName: w, Status: wire.StatusCompleted, At: 2}})
			}
			task.QueueFrame(&rtvi.UITaskFrame{Event: wire.GroupCompleted{TaskID: id, At: 3}})
		}
	}()
	defer wg.Wait()
	for g := range groups {
		id := fmt.Sprintf("job-%03d", g)
		want = append(want, wire.KindGroupStarted+" "+id+" ")
		for _, w := range workers {
			want = append(want, wire.KindJobCompleted+" "+id+" "+w)
		}
		want = append(want, wire.KindGroupCompleted+" "+id+" ")
	}

	var got []string
	lastStep := map[string]int{}
	updates := 0
	for len(got) < len(want) {
		m, err := c.Next(ctx, isType(wire.TypeUIJobGroup))
		if err != nil {
			t.Fatalf("after %d lifecycle messages and %d updates: %v; stats %+v, observer drops %d",
				len(got), updates, err, s.Stats(), task.ObserverDrops())
		}
		var e struct {
			Data struct {
				Kind   string `json:"kind"`
				Job    string `json:"job_id"`
				Worker string `json:"worker_name"`
				Update struct {
					Step int `json:"step"`
				} `json:"data"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(m), &e); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		d := e.Data
		if d.Kind == wire.KindJobUpdate {
			updates++
			k := d.Job + " " + d.Worker
			if prev, ok := lastStep[k]; ok && d.Update.Step <= prev {
				t.Errorf("update %d of %s after %d: out of order", d.Update.Step, k, prev)
			}
			lastStep[k] = d.Update.Step
			continue
		}
		got = append(got, d.Kind+" "+d.Job+" "+d.Worker)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("lifecycle messages lost or out of order (-sent +received):\n%s", diff)
	}
	for g := range groups {
		for _, w := range workers {
			if k := fmt.Sprintf("job-%03d %s", g, w); lastStep[k] != steps-1 {
				t.Errorf("%s: last update received is step %d, want %d", k, lastStep[k], steps-1)
			}
		}
	}
	st := s.Stats()
	if coalesced := uint64(groups*len(workers)*steps - updates); st.OutboundCoalesced != coalesced || st.OutboundDropped != 0 {
		t.Errorf("stats %+v: want %d coalesced (%d updates received) and nothing dropped", st, coalesced, updates)
	}
	if st.OutboundCoalesced == 0 {
		t.Error("nothing was coalesced: the client did not fall behind, so the test proved nothing")
	}
	if d := task.ObserverDrops(); d != 0 {
		t.Errorf("the observers dropped %d events", d)
	}
	t.Logf("received %d lifecycle messages and %d of %d updates; %+v", len(got), updates, groups*len(workers)*steps, st)
}
