package webrtc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
)

// offlineSession is a session with no peer connection: its output plays
// into nothing, which is enough to test pacing and ordering.
func offlineSession(t testing.TB) *Session {
	t.Helper()
	srv, err := NewServer(Options{NewPipeline: func(context.Context, *Session) (*pipeline.Task, error) {
		return nil, errors.New("unused")
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The heartbeat's file descriptor would keep a synctest bubble's
	// clock from advancing: the offline tests go without it.
	srv.assist = transports.NewAssist(transports.AssistOptions{NoHeartbeat: true})
	s := newSession(srv, "", nil)
	t.Cleanup(func() { s.cancel(); srv.cancel() })
	return s
}

// arrival is a frame that left the pipeline, with the (fake) time it did.
type arrival struct {
	at time.Duration
	f  frames.Frame
}

type sink struct {
	mu    sync.Mutex
	start time.Time
	got   []arrival
}

func (k *sink) record(f frames.Frame) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.got = append(k.got, arrival{time.Since(k.start), f})
}

func (k *sink) list() []arrival {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]arrival(nil), k.got...)
}

func (k *sink) find(match func(frames.Frame) bool) (arrival, bool) {
	for _, a := range k.list() {
		if match(a.f) {
			return a, true
		}
	}
	return arrival{}, false
}

func textIs(s string) func(frames.Frame) bool {
	return func(f frames.Frame) bool { t, ok := f.(*frames.Text); return ok && t.Text == s }
}

func runOutput(t *testing.T, s *Session, k *sink) (*pipeline.Task, chan error) {
	task := pipeline.NewTask(pipeline.New(s.Input(), s.Output()), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(f frames.Frame) {
		if _, ok := f.(*frames.Start); !ok {
			k.record(f)
		}
	})
	done := make(chan error, 1)
	go func() { done <- task.Run(context.Background()) }()
	return task, done
}

func TestOutputReleasesTextInStepWithTheAudioAheadOfIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := offlineSession(t)
		k := &sink{start: time.Now()}
		task, done := runOutput(t, s, k)
		// 1 s of audio, "a", 0.5 s of audio, "b", End.
		for i := range 25 {
			task.QueueFrame(toneFrame(440, 24000, 960, i*960, 5000))
		}
		task.QueueFrame(&frames.Text{Text: "a"})
		for i := range 12 {
			task.QueueFrame(toneFrame(440, 24000, 1000, i*1000, 5000))
		}
		task.QueueFrame(&frames.Text{Text: "b"})
		task.QueueFrame(&frames.End{})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		a, okA := k.find(textIs("a"))
		b, okB := k.find(textIs("b"))
		if !okA || !okB {
			t.Fatalf("texts did not come out: %v", k.list())
		}
		t.Logf("a at %v, b at %v", a.at, b.at)
		if a.at < time.Second-40*time.Millisecond || a.at > time.Second+40*time.Millisecond {
			t.Errorf(`"a" came out at %v, want after the first second of audio`, a.at)
		}
		if b.at < 1500*time.Millisecond-40*time.Millisecond || b.at > 1500*time.Millisecond+40*time.Millisecond {
			t.Errorf(`"b" came out at %v, want after 1.5 s of audio`, b.at)
		}
		var order []string
		for _, a := range k.list() {
			switch f := a.f.(type) {
			case *frames.BotStartedSpeaking, *frames.BotStoppedSpeaking, *frames.End:
				order = append(order, frames.TypeName(f))
			case *frames.Text:
				order = append(order, f.Text)
			}
		}
		want := []string{"BotStartedSpeakingFrame", "a", "b", "BotStoppedSpeakingFrame", "EndFrame"}
		if len(order) != len(want) {
			t.Fatalf("order %v, want %v", order, want)
		}
		for i := range want {
			if order[i] != want[i] {
				t.Fatalf("order %v, want %v", order, want)
			}
		}
		if st := s.Output().Stats(); st.Underruns != 0 || st.FramesSent < 75 {
			t.Errorf("stats %+v: want no underruns and at least 75 frames", st)
		}
	})
}

func TestInterruptionClearsQueuedAudioAndKeepsUninterruptibleFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := offlineSession(t)
		k := &sink{start: time.Now()}
		task, done := runOutput(t, s, k)
		for i := range 50 { // 2 s
			task.QueueFrame(toneFrame(440, 24000, 960, i*960, 5000))
		}
		task.QueueFrame(&frames.Text{Text: "stale"})
		task.QueueFrame(&frames.FunctionCallResult{GroupID: "keep"})
		time.Sleep(300 * time.Millisecond)
		audioBefore := countAudio(k.list())
		task.QueueFrame(&frames.Interruption{})
		time.Sleep(100 * time.Millisecond)
		stopped, ok := k.find(func(f frames.Frame) bool { _, ok := f.(*frames.BotStoppedSpeaking); return ok })
		if !ok || stopped.at > 320*time.Millisecond {
			t.Errorf("BotStoppedSpeaking: found %v at %v, want right at the interruption (300 ms)", ok, stopped.at)
		}
		kept, ok := k.find(func(f frames.Frame) bool { _, ok := f.(*frames.FunctionCallResult); return ok })
		if !ok || kept.at > 340*time.Millisecond {
			t.Errorf("the uninterruptible frame: found %v at %v, want within a tick of the interruption", ok, kept.at)
		}
		if st := s.Output().Stats(); st.Queued != 0 {
			t.Errorf("%d frames still queued after the interruption", st.Queued)
		}
		time.Sleep(2 * time.Second)
		if _, ok := k.find(textIs("stale")); ok {
			t.Error("text queued behind interrupted audio came out")
		}
		// At most one more tick's worth of audio after the interruption.
		if after := countAudio(k.list()); after > audioBefore+1 {
			t.Errorf("%d audio frames played after the interruption", after-audioBefore)
		}
		task.Cancel("done")
		<-done
	})
}

func countAudio(list []arrival) int {
	n := 0
	for _, a := range list {
		if _, ok := a.f.(*frames.OutputAudioRaw); ok {
			n++
		}
	}
	return n
}

func TestUrgentMessagesOvertakeQueuedAudioAndOrderedOnesWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := offlineSession(t)
		k := &sink{start: time.Now()}
		task, done := runOutput(t, s, k)
		for i := range 25 {
			task.QueueFrame(toneFrame(440, 24000, 960, i*960, 5000))
		}
		task.QueueFrame(&frames.OutputTransportMessage{Message: []byte(`{"n":"ordered"}`)})
		task.QueueFrame(&frames.OutputTransportMessageUrgent{Message: []byte(`{"n":"urgent"}`)})
		time.Sleep(100 * time.Millisecond)
		// No channel yet: both wait in the session's outbound queue, urgent first.
		s.mu.Lock()
		box := s.ob.Queued()
		s.mu.Unlock()
		if len(box) != 1 || string(box[0]) != `{"n":"urgent"}` {
			t.Errorf("outbox after 100 ms = %q, want only the urgent message", box)
		}
		time.Sleep(time.Second)
		s.mu.Lock()
		box = s.ob.Queued()
		s.mu.Unlock()
		if len(box) != 2 || string(box[1]) != `{"n":"ordered"}` {
			t.Errorf("outbox after the audio = %q, want the ordered message second", box)
		}
		task.Cancel("done")
		<-done
	})
}

func TestOutputSendsSilenceWhileIdleWithoutUnderruns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := offlineSession(t)
		k := &sink{start: time.Now()}
		task, done := runOutput(t, s, k)
		time.Sleep(time.Second)
		st := s.Output().Stats()
		if st.FramesSent < 49 || st.FramesSent > 51 || st.Underruns != 0 {
			t.Errorf("after 1 s idle: %+v, want 50 frames and no underrun", st)
		}
		for _, a := range k.list() {
			if _, ok := a.f.(*frames.BotStartedSpeaking); ok {
				t.Error("silence made the bot speak")
			}
		}
		task.Cancel("done")
		<-done
	})
}

// stallingEncoder is a codec's encoder that stalls once, on its call
// number at, for stall: a player descheduled by an overloaded machine.
type stallingEncoder struct {
	codec.Encoder
	calls *int
	at    int
	stall time.Duration
}

func (e stallingEncoder) Encode(pcm []int16, out []byte) (int, error) {
	if *e.calls++; *e.calls == e.at {
		time.Sleep(e.stall)
	}
	return e.Encoder.Encode(pcm, out)
}

func stallEncoderOnce(s *Session, at int, stall time.Duration) {
	newEncoder := s.srv.codec.NewEncoder
	calls := 0
	s.srv.codec.NewEncoder = func(rate int, opts codec.EncoderOptions) (codec.Encoder, error) {
		enc, err := newEncoder(rate, opts)
		return stallingEncoder{enc, &calls, at, stall}, err
	}
}

func TestOutputMakesUpAShortStallAndSkipsALongOne(t *testing.T) {
	for _, tc := range []struct {
		stall         time.Duration
		wantSent      uint64 // in the first second
		wantUnderruns uint64
		wantMaxLate   time.Duration
	}{
		// Frame 5 is sent 70 ms after its tick began: the next frame is
		// due 50 ms before that and the one after 30 ms, so both go out
		// more than a frame late, and the third 10 ms late; the second
		// still has 50 frames in it.
		{70 * time.Millisecond, 50, 2, 50 * time.Millisecond},
		// Past the 200 ms the player makes up, the 24 frames due during
		// the stall are skipped and counted.
		{500 * time.Millisecond, 50 - 24, 24, 480 * time.Millisecond},
	} {
		t.Run(tc.stall.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := offlineSession(t)
				m := metricstest.NewReader(t)
				in, err := newInstruments(m.Provider)
				if err != nil {
					t.Fatal(err)
				}
				s.srv.metrics = in
				stallEncoderOnce(s, 5, tc.stall)
				task, done := runOutput(t, s, &sink{start: time.Now()})
				for i := range 100 {
					task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
				}
				time.Sleep(time.Second - time.Millisecond)
				if st := s.Output().Stats(); st.FramesSent != tc.wantSent || st.Underruns != tc.wantUnderruns || st.MaxLate != tc.wantMaxLate {
					t.Errorf("after 1 s: %d frames sent, %d underruns, %v the latest; want %d, %d and %v",
						st.FramesSent, st.Underruns, st.MaxLate, tc.wantSent, tc.wantUnderruns, tc.wantMaxLate)
				}
				// The metrics have them already, while the session lives.
				if reported := m.Sums(t, "framewire.output.underruns", "")[""]; reported != int64(tc.wantUnderruns) {
					t.Errorf("after 1 s the metrics have %d underruns, want %d", reported, tc.wantUnderruns)
				}
				task.Cancel("done")
				<-done
			})
		})
	}
}

func TestOutputSendsBotSpeakingPairsEvery200msWhileAudioPlays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := offlineSession(t)
		down := &sink{start: time.Now()}
		task, done := runOutput(t, s, down)
		var mu sync.Mutex
		var up []*frames.BotSpeaking
		pipeline.OnUpstream(task, func(f *frames.BotSpeaking) {
			mu.Lock()
			defer mu.Unlock()
			up = append(up, f)
		})
		for i := range 50 { // one second at 24 kHz
			task.QueueFrame(toneFrame(440, 24000, 480, i*480, 5000))
		}
		time.Sleep(1100 * time.Millisecond)
		task.Cancel("done")
		<-done
		var downs []*frames.BotSpeaking
		for _, a := range down.list() {
			if f, ok := a.f.(*frames.BotSpeaking); ok {
				downs = append(downs, f)
				if want := time.Duration(len(downs)) * 200 * time.Millisecond; a.at < want-20*time.Millisecond || a.at > want+20*time.Millisecond {
					t.Errorf("BotSpeaking %d downstream at %v, want about %v", len(downs), a.at, want)
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(downs) != 5 || len(up) != 5 {
			t.Fatalf("%d BotSpeaking downstream and %d upstream in a second of audio, want 5 and 5", len(downs), len(up))
		}
		seen := map[*frames.BotSpeaking]bool{}
		for i := range downs {
			d, u := downs[i], up[i]
			if d.SiblingID != u.ID() || u.SiblingID != d.ID() || d.ID() == 0 || seen[d] || seen[u] || d == u {
				t.Fatalf("pair %d: down %p id %d sibling %d, up %p id %d sibling %d: not a fresh broadcast pair", i, d, d.ID(), d.SiblingID, u, u.ID(), u.SiblingID)
			}
			seen[d], seen[u] = true, true
		}
	})
}
