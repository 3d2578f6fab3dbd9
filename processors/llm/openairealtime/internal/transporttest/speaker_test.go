package transporttest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// names lists the frames' type names, for a readable comparison.
func names(fs []frames.Frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%T", f))
	}
	return out
}

// The reports are system frames, which overtake data frames, so the test
// looks at the data frames and at each report's count apart.
func TestSpeakerReportsTheBotSpeakingFromTheFirstAudioToTTSStopped(t *testing.T) {
	res := pipelinetest.Run(t, &Speaker{}, pipelinetest.Options{Send: []frames.Frame{
		&frames.TTSAudioRaw{}, &frames.TTSAudioRaw{}, &frames.TTSStopped{}, // one response
		&frames.TTSStopped{}, // not speaking: no report
	}})
	var data []frames.Frame
	for _, f := range res.Down() {
		switch f.(type) {
		case *frames.BotStartedSpeaking, *frames.BotStoppedSpeaking:
		default:
			data = append(data, f)
		}
	}
	want := []string{"*frames.TTSAudioRaw", "*frames.TTSAudioRaw", "*frames.TTSStopped", "*frames.TTSStopped"}
	if d := cmp.Diff(want, names(data)); d != "" {
		t.Errorf("the frames passed on (-want +got):\n%s", d)
	}
	for dir, fs := range map[string][]frames.Frame{"downstream": res.Down(), "upstream": res.Up()} {
		started, stopped := len(pipelinetest.OfType[*frames.BotStartedSpeaking](fs)), len(pipelinetest.OfType[*frames.BotStoppedSpeaking](fs))
		if started != 1 || stopped != 1 {
			t.Errorf("%s: %d BotStartedSpeaking and %d BotStoppedSpeaking, want one of each: %v", dir, started, stopped, names(fs))
		}
	}
}

func TestSpeakerStopsSpeakingAtAnInterruption(t *testing.T) {
	res := pipelinetest.Start(t, &Speaker{}, pipelinetest.Options{NoEnd: true, Send: []frames.Frame{&frames.TTSAudioRaw{}}})
	defer res.Wait()
	defer res.Task.EndWhenDone()
	startedUp := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); len(pipelinetest.OfType[*frames.BotStartedSpeaking](res.Up())) < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not %d BotStartedSpeaking upstream within 5s: %v", n, names(res.Up()))
			}
		}
	}
	startedUp(1)
	res.Task.QueueFrame(&frames.Interruption{}) // cut off: no BotStoppedSpeaking
	for deadline := time.Now().Add(5 * time.Second); len(pipelinetest.OfType[*frames.Interruption](res.Down())) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the interruption did not pass within 5s: %v", names(res.Down()))
		}
	}
	res.Task.QueueFrame(&frames.TTSAudioRaw{}) // the next response speaks again
	startedUp(2)
	if got := pipelinetest.OfType[*frames.BotStoppedSpeaking](res.Up()); len(got) != 0 {
		t.Errorf("BotStoppedSpeaking after an interruption: %v", names(res.Up()))
	}
}
