package webrtc

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi/wire"
	"github.com/framewire/framewire/transports/webrtc/internal/testclient"
)

func encode(m wire.Message) []byte { return m.AppendJSON(nil) }

func jobUpdate(v wire.Vocabulary, job, worker string, n int) []byte {
	return encode(wire.TaskMessage(wire.TaskUpdate{TaskID: job, AgentName: worker,
		Data: wire.RawJSON(fmt.Sprintf(`{"step":%d,"worker_name":"decoy","note":%q}`, n, strings.Repeat("x", 200))), At: 1}, v))
}

func TestOnlyLevelsAndTaskProgressUpdatesAreSupersedable(t *testing.T) {
	jg, task := wire.VocabularyJobGroup, wire.VocabularyTask
	level := func(typ string, v float64) []byte {
		return encode(wire.Message{Type: typ, Data: wire.AudioLevel{Value: v}})
	}
	keep := map[string][]byte{
		"group_started":   encode(wire.TaskMessage(wire.GroupStarted{TaskID: "j1", Agents: []string{"a"}, Cancellable: true}, jg)),
		"job_completed":   encode(wire.TaskMessage(wire.TaskCompleted{TaskID: "j1", AgentName: "a", Status: wire.StatusCompleted}, jg)),
		"task_completed":  encode(wire.TaskMessage(wire.TaskCompleted{TaskID: "j1", AgentName: "a", Status: wire.StatusCompleted}, task)),
		"group_completed": encode(wire.TaskMessage(wire.GroupCompleted{TaskID: "j1"}, jg)),
		"bot-output in progress": encode(wire.Message{Type: wire.TypeBotOutput, Data: wire.BotOutput{Text: "one",
			SpokenStatus: wire.SpokenInProgress}}),
		"metrics":        []byte(`{"label":"rtvi-ai","type":"metrics","data":{"ttfb":[{"processor":"llm","value":0.2}]}}`),
		"error":          []byte(`{"label":"rtvi-ai","type":"error","data":{"error":"speech is unavailable","fatal":false}}`),
		"server-message": []byte(`{"label":"rtvi-ai","type":"server-message","data":{"type":"ui-job-group","kind":"job_update","job_id":"j","worker_name":"w"}}`),
		"peerLeft":       peerLeftMessage,
		"not JSON":       []byte(`"type":"user-audio-level`),
	}
	for name, msg := range keep {
		if k := supersedeKey(msg); k != 0 {
			t.Errorf("%s (%s) has supersede key %x; it must never be coalesced", name, msg, k)
		}
	}
	same := [][2][]byte{
		{level(wire.TypeUserAudioLevel, 0.1), level(wire.TypeUserAudioLevel, 0.9)},
		{level(wire.TypeBotAudioLevel, 0.1), level(wire.TypeBotAudioLevel, 0.9)},
		{jobUpdate(jg, "j1", "a", 1), jobUpdate(jg, "j1", "a", 2)},
		{jobUpdate(task, "j1", "a", 1), jobUpdate(task, "j1", "a", 2)},
	}
	for _, p := range same {
		if a, b := supersedeKey(p[0]), supersedeKey(p[1]); a == 0 || a != b {
			t.Errorf("keys %x and %x of\n%s\n%s: want the same non-zero key", a, b, p[0], p[1])
		}
	}
	distinct := [][]byte{
		level(wire.TypeUserAudioLevel, 0), level(wire.TypeBotAudioLevel, 0),
		jobUpdate(jg, "j1", "a", 1), jobUpdate(jg, "j1", "b", 1), jobUpdate(jg, "j2", "a", 1),
		jobUpdate(jg, "j1a", "", 1), jobUpdate(task, "j1", "a", 1),
	}
	seen := map[uint64]string{}
	for _, m := range distinct {
		k := supersedeKey(m)
		if prev, ok := seen[k]; ok || k == 0 {
			t.Errorf("key %x of %s: zero or the same as %s", k, m, prev)
		}
		seen[k] = string(m)
	}
}

func TestSupersedeKeyDoesNotAllocate(t *testing.T) {
	msg := jobUpdate(wire.VocabularyJobGroup, "job-1", "researcher", 3)
	if n := testing.AllocsPerRun(100, func() { supersedeKey(msg) }); n != 0 {
		t.Errorf("supersedeKey allocates %v times per message", n)
	}
}

func TestANewerUpdateReplacesTheQueuedOneAndKeepsTheOrder(t *testing.T) {
	s := offlineSession(t) // no channel: everything queues
	jg := wire.VocabularyJobGroup
	started := encode(wire.TaskMessage(wire.GroupStarted{TaskID: "j", Agents: []string{"a", "b"}}, jg))
	a1, b1, a2 := jobUpdate(jg, "j", "a", 1), jobUpdate(jg, "j", "b", 1), jobUpdate(jg, "j", "a", 2)
	done := encode(wire.TaskMessage(wire.TaskCompleted{TaskID: "j", AgentName: "a", Status: wire.StatusCompleted}, jg))
	a3 := jobUpdate(jg, "j", "a", 3) // past the protocol, but it must not jump ahead of done
	for _, m := range [][]byte{started, a1, b1, a2, done, a3} {
		s.Send(m)
	}
	s.mu.Lock()
	got, high := s.ob.queued(), s.ob.high
	s.mu.Unlock()
	want := [][]byte{started, b1, done, a3}
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
func burst(groups int) [][]byte {
	jg := wire.VocabularyJobGroup
	workers := []string{"w0", "w1", "w2", "w3"}
	var out [][]byte
	for g := range groups {
		id := fmt.Sprintf("job-%03d", g)
		out = append(out, encode(wire.TaskMessage(wire.GroupStarted{TaskID: id, Agents: workers, Cancellable: true, At: 1}, jg)))
		for n := range 8 {
			for _, w := range workers {
				out = append(out, jobUpdate(jg, id, w, n))
			}
		}
		for _, w := range workers {
			out = append(out, encode(wire.TaskMessage(wire.TaskCompleted{TaskID: id, AgentName: w,
				Status: wire.StatusCompleted, Response: wire.RawJSON(`{"ok":true}`), At: 2}, jg)))
		}
		out = append(out, encode(wire.TaskMessage(wire.GroupCompleted{TaskID: id, At: 3}, jg)))
	}
	return out
}

func TestASlowReaderGetsEveryTaskGroupLifecycleMessageInOrder(t *testing.T) {
	// Small buffers so that the burst backs up far past them; the client
	// reads one message per millisecond, a tenth of the server's pace.
	h := newHarness(t, Options{MaxBufferedBytes: 64 << 10, MaxOutboundMessages: 512, MaxOutboundBytes: 256 << 10})
	ctx := testContext(t, 60*time.Second)
	c := h.dial(ctx, testclient.Options{Backpressure: true, ReadDelay: time.Millisecond})
	s, _, task := h.session(c)
	sent := burst(300) // 300 group_started, 9,600 job_update, 1,200 job_completed, 300 group_completed
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, m := range sent {
			task.QueueFrame(&frames.OutputTransportMessageUrgent{Message: m})
		}
	}()
	defer wg.Wait()
	last := string(sent[len(sent)-1])
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
	for _, m := range sent {
		if k := supersedeKey(m); k != 0 {
			lastUpdate[k] = string(m)
			continue
		}
		wantLife = append(wantLife, string(m))
	}
	for _, m := range got {
		if supersedeKey([]byte(m)) == 0 {
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
		for i < len(sent) && string(sent[i]) != m {
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
	c := h.dial(ctx, testclient.Options{Backpressure: true}) // and never reads Messages
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

// BenchmarkSupersedeKey measures the classification every queued message
// pays.
func BenchmarkSupersedeKey(b *testing.B) {
	msgs := [][]byte{
		jobUpdate(wire.VocabularyJobGroup, "job-1", "researcher", 3),
		encode(wire.Message{Type: wire.TypeBotOutput, Data: wire.BotOutput{Text: "hello there"}}),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		supersedeKey(msgs[i&1])
	}
}

// FuzzSupersedeKey checks that any bytes classify without a panic, the
// same way every time, and that only the four supersedable types get a key.
func FuzzSupersedeKey(f *testing.F) {
	jg, task := wire.VocabularyJobGroup, wire.VocabularyTask
	f.Add(jobUpdate(jg, "j", "w", 1))
	f.Add(jobUpdate(task, "j", "w", 1))
	f.Add(encode(wire.Message{Type: wire.TypeUserAudioLevel, Data: wire.AudioLevel{Value: 0.5}}))
	f.Add(encode(wire.TaskMessage(wire.GroupCompleted{TaskID: "j"}, jg)))
	f.Add([]byte(`{"label":"rtvi-ai","type":"ui-job-group","data":{"kind":"job_update","job_id":"a\"b","worker_name":"c\\`))
	f.Add([]byte(`"type":"`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		k := supersedeKey(msg)
		if k != supersedeKey(msg) {
			t.Fatal("not deterministic")
		}
		if k == 0 {
			return
		}
		typ, _ := stringAfter(msg, typeField, typeKeyMaxBytes)
		switch string(typ) {
		case wire.TypeUserAudioLevel, wire.TypeBotAudioLevel, wire.TypeUIJobGroup, wire.TypeUITask:
		default:
			t.Fatalf("type %q got key %x", typ, k)
		}
	})
}
