package stttest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
)

func TestResultsListTranscriptionsOnly(t *testing.T) {
	fs := Seq(AudioFrames(2), []frames.Frame{
		&frames.InterimTranscription{Text: "hi"},
		&frames.VADUserStoppedSpeaking{},
		&frames.Transcription{Text: "Hi.", Language: "en", UserID: "caller", Timestamp: "t0", Finalized: true},
		&frames.Transcription{Text: "More", Language: "en", UserID: "caller", Timestamp: "t1"},
	})
	want := []string{"interim hi", "final Hi. [en] caller t0 (finalized)", "final More [en] caller t1"}
	if d := cmp.Diff(want, Results(fs)); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	if a, ok := fs[1].(*frames.InputAudioRaw); !ok || len(a.PCM) != 640 || a.SampleRate != 16000 || a.Channels != 1 || a.UserID != "caller" {
		t.Errorf("audio frame %+v", fs[1])
	}
	if len(fs) != 6 {
		t.Errorf("Seq joined %d frames, want 6", len(fs))
	}
}
