package rtvi

import (
	"fmt"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// described observes f alone (a fresh observer for a client of version
// v) and returns the one message it sent: its frame's Type and Supersede
// and the message itself.
func described(t *testing.T, v string, f frames.Frame) (typ string, key uint64, msg []byte) {
	t.Helper()
	p, rec := testProcessor(v)
	o := NewObserver(p, ObserverOptions{EnableUserAudioLevel: true, EnableBotAudioLevel: true})
	observe(o, transportNode, f)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []*frames.OutputTransportMessageUrgent
	for _, f := range rec.frames {
		if m, ok := f.(*frames.OutputTransportMessageUrgent); ok {
			out = append(out, m)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%T sent %d messages, want 1", f, len(out))
	}
	decodeSent(t, out[0])
	return out[0].Type, out[0].Supersede, out[0].Message
}

func level(v int16) *frames.InputAudioRaw { return &frames.InputAudioRaw{Audio: constantPCM(v, 320)} }

func botLevel(v int16) *frames.TTSAudioRaw {
	return &frames.TTSAudioRaw{Audio: constantPCM(v, 320)}
}

func update(job, worker string, n int) *UITaskFrame {
	return &UITaskFrame{Event: wire.TaskUpdate{TaskID: job, AgentName: worker,
		Data: wire.RawJSON(fmt.Sprintf(`{"step":%d,"worker_name":"decoy"}`, n)), At: 1}}
}

// TestObserverKeysOnlyLevelsAndTaskProgressUpdates is the coalescing
// policy a transport applies to a slow reader (transports/webrtc's
// outbound queue): the user's and the bot's audio level are keyed by type,
// a worker's progress update by type, group and worker; everything else
// has key 0 and is never coalesced.
func TestObserverKeysOnlyLevelsAndTaskProgressUpdates(t *testing.T) {
	const jg, task = "2.1.0", "1.3.0"
	type seen struct {
		v string
		f frames.Frame
	}
	keep := map[string]seen{
		"group_started":   {jg, &UITaskFrame{Event: wire.GroupStarted{TaskID: "j1", Agents: []string{"a"}, Cancellable: true}}},
		"job_completed":   {jg, &UITaskFrame{Event: wire.TaskCompleted{TaskID: "j1", AgentName: "a", Status: wire.StatusCompleted}}},
		"task_completed":  {task, &UITaskFrame{Event: wire.TaskCompleted{TaskID: "j1", AgentName: "a", Status: wire.StatusCompleted}}},
		"group_completed": {jg, &UITaskFrame{Event: wire.GroupCompleted{TaskID: "j1"}}},
		"metrics":         {jg, &frames.Metrics{Data: []frames.Metric{{Kind: frames.MetricTTFB, Processor: "llm"}}}},
		"server-message": {jg, &ServerMessageFrame{Data: wire.RawJSON(
			`{"type":"ui-job-group","kind":"job_update","job_id":"j","worker_name":"w"}`)}},
		"ui-command": {jg, NewUICommand(wire.Toast{Title: "hi"})},
		"bot-output in progress": {jg, &frames.AggregatedTextProgress{Text: "one two", AggregatedBy: "sentence",
			AccumulatedText: "one", RemainingText: " two"}},
		"bot-llm-text":       {jg, &frames.LLMText{Text: "hi"}},
		"user-transcription": {jg, &frames.Transcription{Text: "hi"}},
	}
	for name, s := range keep {
		if typ, k, m := described(t, s.v, s.f); k != 0 {
			t.Errorf("%s (%s, %s) has supersede key %x; it must never be coalesced", name, typ, m, k)
		}
	}
	same := [][2]seen{
		{{jg, level(100)}, {jg, level(9000)}},
		{{jg, botLevel(100)}, {jg, botLevel(9000)}},
		{{jg, update("j1", "a", 1)}, {jg, update("j1", "a", 2)}},
		{{task, update("j1", "a", 1)}, {task, update("j1", "a", 2)}},
	}
	for _, p := range same {
		_, a, ma := described(t, p[0].v, p[0].f)
		_, b, mb := described(t, p[1].v, p[1].f)
		if a == 0 || a != b {
			t.Errorf("keys %x and %x of\n%s\n%s: want the same non-zero key", a, b, ma, mb)
		}
	}
	distinct := []seen{
		{jg, level(0)}, {jg, botLevel(0)},
		{jg, update("j1", "a", 1)}, {jg, update("j1", "b", 1)}, {jg, update("j2", "a", 1)},
		{jg, update("j1a", "", 1)}, {task, update("j1", "a", 1)},
	}
	keys := map[uint64]string{}
	for _, s := range distinct {
		_, k, m := described(t, s.v, s.f)
		if prev, ok := keys[k]; ok || k == 0 {
			t.Errorf("key %x of %s: zero or the same as %s", k, m, prev)
		}
		keys[k] = string(m)
	}
}

func TestTaskKeyDoesNotAllocate(t *testing.T) {
	var e wire.TaskEvent = wire.TaskUpdate{TaskID: "job-1", AgentName: "researcher"}
	if n := testing.AllocsPerRun(100, func() { taskKey(wire.TypeUIJobGroup, e) }); n != 0 {
		t.Errorf("taskKey allocates %v times per message", n)
	}
}

// BenchmarkObserverTaskUpdate is the observer's whole path for a
// worker's progress update: encode it, key it, push it.
func BenchmarkObserverTaskUpdate(b *testing.B) {
	p := NewProcessor(Options{})
	p.sink = nopPusher{}
	o := NewObserver(p, ObserverOptions{})
	f := &UITaskFrame{Event: wire.TaskUpdate{TaskID: "job-1", AgentName: "researcher", Data: wire.RawJSON(`{"step":3}`), At: 1}}
	framebook.MarkPushed(f.FrameBase())
	e := observers.Event{Kind: observers.Pushed, Source: llmNode, Frame: f, Direction: frames.Downstream, FirstSeen: true}
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(e)
	}
}

// BenchmarkObserverAudioLevel is the observer's path for the user's audio
// level, sent for every frame here (the period is not reached).
func BenchmarkObserverAudioLevel(b *testing.B) {
	p := NewProcessor(Options{})
	p.sink = nopPusher{}
	o := NewObserver(p, ObserverOptions{EnableUserAudioLevel: true})
	f := level(1000)
	framebook.MarkPushed(f.FrameBase())
	e := observers.Event{Kind: observers.Pushed, Frame: f, Direction: frames.Downstream, FirstSeen: true}
	b.ReportAllocs()
	for b.Loop() {
		o.userLevel = false
		o.Observe(e)
	}
}
