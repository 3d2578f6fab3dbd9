package webrtc

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

func encode(m wire.Message) []byte { return m.AppendJSON(nil) }

// keyedMsg is a message for the client with the supersede key its frame
// carries (the RTVI observer sets them; processors/rtvi's tests check
// which messages get which key).
type keyedMsg struct {
	b   []byte
	key uint64
}

// updateKey stands for the observer's key of a worker's progress update.
func updateKey(job, worker string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(job + "\x00" + worker))
	return h.Sum64() | 1
}

func jobUpdate(job, worker string, n int) keyedMsg {
	b := encode(wire.TaskMessage(wire.TaskUpdate{TaskID: job, AgentName: worker,
		Data: wire.RawJSON(fmt.Sprintf(`{"step":%d,"note":%q}`, n, strings.Repeat("x", 200))), At: 1}, wire.VocabularyJobGroup))
	return keyedMsg{b, updateKey(job, worker)}
}

func lifecycle(e wire.TaskEvent) keyedMsg {
	return keyedMsg{b: encode(wire.TaskMessage(e, wire.VocabularyJobGroup))}
}

func TestANewerUpdateReplacesTheQueuedOneAndKeepsTheOrder(t *testing.T) {
	s := offlineSession(t) // no channel: everything queues
	started := lifecycle(wire.GroupStarted{TaskID: "j", Agents: []string{"a", "b"}})
	a1, b1, a2 := jobUpdate("j", "a", 1), jobUpdate("j", "b", 1), jobUpdate("j", "a", 2)
	done := lifecycle(wire.TaskCompleted{TaskID: "j", AgentName: "a", Status: wire.StatusCompleted})
	a3 := jobUpdate("j", "a", 3) // past the protocol, but it must not jump ahead of done
	for _, m := range []keyedMsg{started, a1, b1, a2, done, a3} {
		s.SendSuperseding(m.b, m.key)
	}
	s.mu.Lock()
	got, high := s.ob.Queued(), s.ob.HighWater()
	s.mu.Unlock()
	want := [][]byte{started.b, b1.b, done.b, a3.b}
	if high != len(want) {
		t.Errorf("queue high water %d, want %d: a replaced update does not count twice", high, len(want))
	}
	if diff := cmp.Diff(strs(want), strs(got)); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	if st := s.Stats(); st.OutboundCoalesced != 2 || st.OutboundDropped != 0 {
		t.Errorf("stats %+v, want 2 coalesced and nothing dropped", st)
	}
}

func strs(b [][]byte) []string {
	out := make([]string, len(b))
	for i, m := range b {
		out[i] = string(m)
	}
	return out
}

// burst returns what a busy task group says: groups of four workers, each
// worker sending eight progress updates (interleaved), then completing.
func burst(groups int) []keyedMsg {
	workers := []string{"w0", "w1", "w2", "w3"}
	var out []keyedMsg
	for g := range groups {
		id := fmt.Sprintf("job-%03d", g)
		out = append(out, lifecycle(wire.GroupStarted{TaskID: id, Agents: workers, Cancellable: true, At: 1}))
		for n := range 8 {
			for _, w := range workers {
				out = append(out, jobUpdate(id, w, n))
			}
		}
		for _, w := range workers {
			out = append(out, lifecycle(wire.TaskCompleted{TaskID: id, AgentName: w,
				Status: wire.StatusCompleted, Response: wire.RawJSON(`{"ok":true}`), At: 2}))
		}
		out = append(out, lifecycle(wire.GroupCompleted{TaskID: id, At: 3}))
	}
	return out
}

func TestASlowReaderGetsEveryTaskGroupLifecycleMessageInOrder(t *testing.T) {
	// Small buffers so that the burst backs up far past them; the client
	// reads one message per millisecond, a tenth of the server's pace.
	h := newHarness(t, Options{MaxBufferedBytes: 64 << 10, MaxOutboundMessages: 512, MaxOutboundBytes: 256 << 10})
	ctx := testContext(t, 60*time.Second)
	c := h.dial(ctx, webrtctest.Options{Backpressure: true, ReadDelay: time.Millisecond})
	s, _, task := h.session(c)
	sent := burst(300) // 300 group_started, 9,600 job_update, 1,200 job_completed, 300 group_completed
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, m := range sent {
			task.QueueFrame(&frames.OutputTransportMessageUrgent{Message: m.b, Type: wire.TypeUIJobGroup, Supersede: m.key})
		}
	}()
	defer wg.Wait()
	last := string(sent[len(sent)-1].b)
	var got []string
	for {
		m, err := c.Next(ctx, isType(wire.TypeUIJobGroup))
		if err != nil {
			t.Fatalf("after %d messages: %v", len(got), err)
		}
		got = append(got, m)
		if m == last {
			break
		}
	}

	// Every message that is not a progress update arrives, in order.
	var wantLife, gotLife []string
	lastUpdate := map[uint64]string{}
	keyOf := map[string]uint64{}
	for _, m := range sent {
		keyOf[string(m.b)] = m.key
		if m.key != 0 {
			lastUpdate[m.key] = string(m.b)
			continue
		}
		wantLife = append(wantLife, string(m.b))
	}
	for _, m := range got {
		if keyOf[m] == 0 {
			gotLife = append(gotLife, m)
		}
	}
	if diff := cmp.Diff(wantLife, gotLife); diff != "" {
		t.Fatalf("lifecycle messages lost or out of order (-sent +received):\n%s", diff)
	}
	// What arrives is what was sent, in the order sent, less the updates
	// a newer one replaced; the newest update of each worker arrives.
	i := 0
	for _, m := range got {
		for i < len(sent) && string(sent[i].b) != m {
			i++
		}
		if i == len(sent) {
			t.Fatalf("received out of order: %s", m)
		}
		i++
	}
	received := map[string]bool{}
	for _, m := range got {
		received[m] = true
	}
	for _, m := range lastUpdate {
		if !received[m] {
			t.Errorf("the newest update of a worker was lost: %s", m)
		}
	}
	st := s.Stats()
	if coalesced := uint64(len(sent) - len(got)); st.OutboundCoalesced != coalesced || st.OutboundDropped != 0 || st.OutboundStalled != 0 {
		t.Errorf("stats %+v: want %d coalesced (sent %d, received %d) and nothing dropped or stalled",
			st, coalesced, len(sent), len(got))
	}
	if st.OutboundCoalesced == 0 {
		t.Error("nothing was coalesced: the client did not fall behind, so the test proved nothing")
	}
	t.Logf("sent %d, received %d, %+v", len(sent), len(got), st)
}

func TestAClientThatStopsReadingEndsItsSessionWithinTheBound(t *testing.T) {
	const limit = 500 * time.Millisecond
	h := newHarness(t, Options{MaxBufferedBytes: 16 << 10, MaxOutboundMessages: 64, StalledClientTimeout: limit})
	ctx := testContext(t, 60*time.Second)
	c := h.dial(ctx, webrtctest.Options{Backpressure: true}) // and never reads Messages
	s, _, task := h.session(c)
	pad := strings.Repeat("x", 1000)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // must-arrive messages until the session ends
		defer wg.Done()
		for n := 0; s.Context().Err() == nil; n++ {
			task.QueueFrame(&frames.OutputTransportMessageUrgent{Message: []byte(
				fmt.Sprintf(`{"label":"rtvi-ai","type":"server-message","data":{"n":%d,"pad":%q}}`, n, pad))})
			if n%64 == 63 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	defer wg.Wait()
	// The client's own buffers (1024 messages, 1 MiB of SCTP window) fill
	// in well under a second on loopback; then nothing moves for limit.
	select {
	case <-s.Done():
	case <-time.After(limit + 10*time.Second):
		st := s.Stats()
		s.Close("the test gave up") // and the producer with it
		t.Fatalf("the session of a client that stopped reading did not end; stats %+v", st)
	}
	if r := s.Reason(); !strings.Contains(r, "the client stopped reading") {
		t.Errorf("reason %q, want the client stopped reading", r)
	}
	st := s.Stats()
	if st.OutboundStalled == 0 || st.OutboundDropped != 0 || st.OutboundCoalesced != 0 {
		t.Errorf("stats %+v: want the waiting messages counted as stalled, nothing dropped or coalesced", st)
	}
}

// BenchmarkSendSuperseding measures the queueing of a message a newer
// one supersedes, while the client cannot take it: the progress updates
// of four workers, each replacing the worker's queued one.
func BenchmarkSendSuperseding(b *testing.B) {
	s := offlineSession(b)
	var msgs []keyedMsg
	for _, w := range []string{"w0", "w1", "w2", "w3"} {
		msgs = append(msgs, jobUpdate("job-1", w, 3))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m := msgs[i&3]
		s.SendSuperseding(m.b, m.key)
	}
}
