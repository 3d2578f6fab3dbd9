package audio

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// step queues a frame into the pipeline at a given time from the start.
type step struct {
	at time.Duration
	f  frames.Frame
}

// mark is a turn frame that reached the end of the pipeline, and when.
type mark struct {
	at   time.Duration
	kind string
}

func (m mark) String() string { return fmt.Sprintf("%s@%v", m.kind, m.at) }

func vadStart() frames.Frame { return &frames.VADUserStartedSpeaking{StartSecs: 0.2} }
func vadStop() frames.Frame  { return &frames.VADUserStoppedSpeaking{StopSecs: 0.2} }
func text(s string) frames.Frame {
	return &frames.Transcription{Text: s, Finalized: true}
}
func interim(s string) frames.Frame { return &frames.InterimTranscription{Text: s} }

// runTurns runs a TurnTracker in fake time, queueing the steps at their
// times, and returns the user-turn and interruption frames that came out
// downstream with their arrival times, until the given end.
func runTurns(t *testing.T, opts TurnTrackerOptions, end time.Duration, steps ...step) (marks []mark, down []frames.Frame) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res := pipelinetest.Start(t, NewTurnTracker(opts), pipelinetest.Options{NoEnd: true, Timeout: time.Hour})
		var mu sync.Mutex
		pipeline.OnDownstream(res.Task, func(f frames.Frame) {
			name := frames.TypeName(f)
			switch f := f.(type) {
			case *frames.UserStartedSpeaking:
				if f.Emulated {
					name += "(emulated)"
				}
			case *frames.UserStoppedSpeaking:
				if f.Emulated {
					name += "(emulated)"
				}
			case *frames.Interruption:
			default:
				return
			}
			mu.Lock()
			marks = append(marks, mark{time.Since(start), name})
			mu.Unlock()
		})
		for _, s := range steps {
			time.Sleep(s.at - time.Since(start))
			res.Task.QueueFrame(s.f)
		}
		time.Sleep(end - time.Since(start))
		synctest.Wait()
		res.Task.EndWhenDone()
		res.Wait()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		down = res.Down()
	})
	return marks, down
}

func sameMarks(t *testing.T, got []mark, want ...mark) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("turn frames:\n got %v\nwant %v", got, want)
	}
}

const (
	started   = "UserStartedSpeakingFrame"
	stopped   = "UserStoppedSpeakingFrame"
	interrupt = "InterruptionFrame"
	ms        = time.Millisecond
)

// A VAD start opens the turn and interrupts the bot at once; the turn
// closes 600 ms after the VAD stop, once a transcription has arrived.
func TestTurnVADStartAndSpeechTimeoutStop(t *testing.T) {
	got, down := runTurns(t, TurnTrackerOptions{}, 5*time.Second,
		step{0, vadStart()}, step{1000 * ms, vadStop()}, step{1300 * ms, text("hello")})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{1600 * ms, stopped})
	// The tracker forwards what it watches, and the turn start follows the
	// VAD frame that caused it.
	var kinds []string
	for _, f := range down {
		kinds = append(kinds, frames.TypeName(f))
	}
	want := "[VADUserStartedSpeakingFrame UserStartedSpeakingFrame InterruptionFrame VADUserStoppedSpeakingFrame TranscriptionFrame UserStoppedSpeakingFrame]"
	if fmt.Sprint(kinds) != want {
		t.Fatalf("downstream %v, want %v", kinds, want)
	}
}

// A transcription that arrives after the speech timeout closes the turn as
// it arrives.
func TestTurnStopWaitsForTranscription(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{}, 5*time.Second,
		step{0, vadStart()}, step{1000 * ms, vadStop()}, step{2500 * ms, text("hello")})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{2500 * ms, stopped})
}

// Speaking again within the timeout keeps the same turn: no second start,
// and the timeout restarts from the next VAD stop.
func TestTurnPauseWithinTimeoutKeepsTurn(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{}, 5*time.Second,
		step{0, vadStart()}, step{1000 * ms, vadStop()}, step{1200 * ms, text("hello")},
		step{1400 * ms, vadStart()}, step{2000 * ms, vadStop()})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{2600 * ms, stopped})
}

// Without VAD (a soft voice), a transcription starts an emulated turn,
// which ends 600 ms after the last transcription.
func TestTurnStartedByTranscription(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{}, 5*time.Second,
		step{100 * ms, interim("hel")}, step{300 * ms, text("hello")}, step{700 * ms, text("world")})
	sameMarks(t, got, mark{100 * ms, started + "(emulated)"}, mark{100 * ms, interrupt}, mark{1300 * ms, stopped + "(emulated)"})
}

// A turn that gets no transcription ends by the watchdog, StopTimeout after
// the last activity.
func TestTurnWatchdog(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{}, 10*time.Second,
		step{0, vadStart()}, step{1000 * ms, vadStop()})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{6000 * ms, stopped})
	got, _ = runTurns(t, TurnTrackerOptions{StopTimeout: 2 * time.Second}, 10*time.Second,
		step{0, vadStart()}, step{1000 * ms, vadStop()})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{3000 * ms, stopped})
}

// Nothing stops a turn while the VAD hears the user, not even the
// watchdog.
func TestTurnNeverStopsWhileUserSpeaks(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{Stop: []TurnStopStrategy{&TranscriptionTurnStop{}}}, 20*time.Second,
		step{0, vadStart()}, step{500 * ms, text("still talking")})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt})
}

// IgnoreTranscripts ends the turn on VAD alone; NoInterruptions leaves the
// bot alone.
func TestTurnWithoutTranscriptsOrInterruptions(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{
		Stop:            []TurnStopStrategy{&SpeechTimeoutTurnStop{IgnoreTranscripts: true, UserSpeechTimeout: 300 * ms}},
		NoInterruptions: true,
	}, 5*time.Second, step{0, vadStart()}, step{1000 * ms, vadStop()})
	sameMarks(t, got, mark{0, started}, mark{1300 * ms, stopped})
}

// The transcription stop strategy closes the turn as soon as the VAD stops
// after text has arrived, waits while an interim result is pending, and
// otherwise closes it 500 ms after the last transcription.
func TestTranscriptionTurnStop(t *testing.T) {
	opts := func() TurnTrackerOptions {
		return TurnTrackerOptions{Stop: []TurnStopStrategy{&TranscriptionTurnStop{}}}
	}
	got, _ := runTurns(t, opts(), 5*time.Second,
		step{0, vadStart()}, step{500 * ms, text("hello")}, step{1000 * ms, vadStop()})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{1000 * ms, stopped})

	got, _ = runTurns(t, opts(), 5*time.Second,
		step{0, vadStart()}, step{1000 * ms, vadStop()}, step{1200 * ms, text("hello")})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{1700 * ms, stopped})

	got, _ = runTurns(t, opts(), 5*time.Second,
		step{0, vadStart()}, step{500 * ms, text("hello")}, step{700 * ms, interim("wor")},
		step{1000 * ms, vadStop()}, step{2000 * ms, text("world")})
	sameMarks(t, got, mark{0, started}, mark{0, interrupt}, mark{2500 * ms, stopped})
}

// Only the start strategies given are used: with VAD only, text alone
// opens no turn.
func TestTurnCustomStartStrategies(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{Start: []TurnStartStrategy{VADTurnStart{}}}, 3*time.Second,
		step{0, text("hello")})
	sameMarks(t, got)
	got, _ = runTurns(t, TurnTrackerOptions{Start: []TurnStartStrategy{TranscriptionTurnStart{IgnoreInterim: true}}}, 3*time.Second,
		step{0, interim("hel")}, step{200 * ms, text("hello")})
	sameMarks(t, got, mark{200 * ms, started + "(emulated)"}, mark{200 * ms, interrupt}, mark{800 * ms, stopped + "(emulated)"})
}

// Two turns in a row, each with its own start and stop.
func TestTurnTwoTurns(t *testing.T) {
	got, _ := runTurns(t, TurnTrackerOptions{}, 6*time.Second,
		step{0, vadStart()}, step{1000 * ms, vadStop()}, step{1100 * ms, text("one")},
		step{3000 * ms, vadStart()}, step{4000 * ms, vadStop()}, step{4100 * ms, text("two")})
	sameMarks(t, got,
		mark{0, started}, mark{0, interrupt}, mark{1600 * ms, stopped},
		mark{3000 * ms, started}, mark{3000 * ms, interrupt}, mark{4600 * ms, stopped})
}

// The voice front end end to end: speech synthesized by espeak-ng, in 20 ms
// frames, through the VAD processor and the turn tracker, gives one VAD
// start, one user turn with its interruption, one VAD stop and the turn's
// end, in that order.
func TestVADAndTurnTrackerOnSpeech(t *testing.T) {
	speech := espeak(t, "What is the weather like in Paris?")
	pcm := new(scene).silence(time.Second).add(speech).silence(time.Second).pcm
	send := audioFrames(pcm, rate16k, 1, 20*time.Millisecond)
	synctest.Test(t, func(t *testing.T) {
		vad := NewVADProcessor(VADProcessorOptions{SpeakingPeriod: -1})
		turns := NewTurnTracker(TurnTrackerOptions{Stop: []TurnStopStrategy{&SpeechTimeoutTurnStop{IgnoreTranscripts: true}}})
		res := pipelinetest.Start(t, pipelineOf(vad, turns), pipelinetest.Options{Send: send, NoEnd: true, Timeout: time.Hour})
		time.Sleep(2 * time.Second)
		res.Task.EndWhenDone()
		res.Wait()
		got := events(t, res.Down(), send)
		var kinds []string
		for _, e := range got {
			kinds = append(kinds, e.kind)
		}
		want := "[VADUserStartedSpeakingFrame UserStartedSpeakingFrame InterruptionFrame VADUserStoppedSpeakingFrame UserStoppedSpeakingFrame]"
		if fmt.Sprint(kinds) != want {
			t.Fatalf("got %v, want %v", got, want)
		}
		first, last := voicedSpan(pcm)
		if start := got[0].after; start < (first+19)/2 || start > (first+39)/2+1 {
			t.Errorf("VAD start after audio frame %d; speech begins in frame %d", start, first/2)
		}
		if stop := got[3].after; stop < (last+20)/2 || stop > (last+45)/2+1 {
			t.Errorf("VAD stop after audio frame %d; speech ends in frame %d", stop, last/2)
		}
	})
}

func pipelineOf(ps ...pipeline.Processor) pipeline.Processor { return pipeline.New(ps...) }
