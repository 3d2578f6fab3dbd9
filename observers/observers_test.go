package observers_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func push(f frames.Frame, at time.Duration) observers.Event {
	return observers.Event{Kind: observers.Pushed, Frame: f, At: at, FirstSeen: true}
}

func TestLoggerLogsOnlyMatchingFrames(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	l := &observers.Logger{Log: zap.New(core), Match: observers.Types(&frames.Text{})}
	for _, f := range []frames.Frame{&frames.Text{Text: "hi"}, &frames.InputAudioRaw{}} {
		if l.Wants(observers.Pushed, f) {
			l.Observe(push(f, 0))
		}
	}
	if logs.Len() != 1 || logs.All()[0].ContextMap()["frame"] != "TextFrame#0" {
		t.Fatalf("logged %v", logs.All())
	}
}

type turnEvent struct {
	turn        int
	d           time.Duration
	interrupted bool
	ended       bool
}

func TestTurnTracker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []turnEvent
		tr := &observers.TurnTracker{
			OnTurnStarted: func(n int) { got = append(got, turnEvent{turn: n}) },
			OnTurnEnded: func(n int, d time.Duration, interrupted bool) {
				got = append(got, turnEvent{n, d, interrupted, true})
			},
		}
		s := time.Second
		tr.Observe(push(&frames.Start{}, 0))
		tr.Observe(push(&frames.UserStartedSpeaking{}, 1*s)) // no bot yet: same turn
		tr.Observe(push(&frames.BotStartedSpeaking{}, 2*s))
		tr.Observe(push(&frames.UserStartedSpeaking{}, 3*s)) // barge-in: turn 1 interrupted
		tr.Observe(push(&frames.BotStartedSpeaking{}, 4*s))
		tr.Observe(push(&frames.BotStoppedSpeaking{}, 5*s))
		time.Sleep(3 * s) // turn 2 ends 2.5s after the bot stopped
		synctest.Wait()
		tr.Observe(push(&frames.UserStartedSpeaking{}, 9*s))
		tr.Observe(push(&frames.End{}, 10*s))
		want := []turnEvent{
			{turn: 1}, {1, 3 * s, true, true}, {turn: 2}, {2, 4500 * time.Millisecond, false, true},
			{turn: 3}, {3, 1 * s, false, true},
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	})
}

func TestLatencyMeasuresFromRealSpeechEnd(t *testing.T) {
	var got []time.Duration
	l := &observers.Latency{OnLatency: func(d time.Duration) { got = append(got, d) }}
	ms := time.Millisecond
	l.Observe(push(&frames.VADUserStoppedSpeaking{StopSecs: 0.8}, 1000*ms))
	l.Observe(push(&frames.BotStartedSpeaking{}, 1400*ms))
	// Interrupted measurement: no report.
	l.Observe(push(&frames.VADUserStoppedSpeaking{StopSecs: 0.8}, 3000*ms))
	l.Observe(push(&frames.Interruption{}, 3100*ms))
	l.Observe(push(&frames.BotStartedSpeaking{}, 3500*ms))
	// Upstream copies are ignored.
	up := push(&frames.BotStartedSpeaking{}, 3600*ms)
	up.Direction = frames.Upstream
	l.Observe(up)
	if !slices.Equal(got, []time.Duration{1200 * ms}) {
		t.Fatalf("latencies = %v", got)
	}
}
