package stt

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// flakyTranscriber fails the utterances whose index is in fail and
// answers "ok" to the others.
type flakyTranscriber struct {
	fail map[int]bool
	mu   sync.Mutex
	n    int
}

func (f *flakyTranscriber) Transcribe(context.Context, Utterance) (Result, error) {
	f.mu.Lock()
	i := f.n
	f.n++
	f.mu.Unlock()
	if f.fail[i] {
		return Result{}, transientErr{errors.New("HTTP 503 <html>gateway 10.0.0.1</html>")}
	}
	return Result{Text: "ok"}, nil
}

// Issue 18 item 2: a failing STT tells the client once per outage that
// speech recognition failed, in those words, keeps listening, and tells
// again only after it recovered and failed anew.
func TestSegmentedTellsOncePerOutageAndKeepsListening(t *testing.T) {
	utterance := seq(one(&frames.VADUserStartedSpeaking{}), speech(25, true), one(&frames.VADUserStoppedSpeaking{}))
	tr := &flakyTranscriber{fail: map[int]bool{0: true, 1: true, 2: true, 4: true}}
	res := pipelinetest.Run(t, NewSegmented(tr, SegmentedOptions{}), pipelinetest.Options{
		Send: seq(utterance, utterance, utterance, utterance, utterance, utterance),
	})
	if got := transcriptions(res.Down()); len(got) != 2 {
		t.Errorf("%d transcriptions, want the 2 utterances that did not fail: %v", len(got), got)
	}
	var errs []*frames.Error
	for _, f := range res.Up() {
		if e, ok := f.(*frames.Error); ok {
			errs = append(errs, e)
		}
	}
	if len(errs) != 2 {
		t.Fatalf("%d errors for two outages, want 2: %v", len(errs), errs)
	}
	for _, e := range errs {
		if e.Subject != "Speech recognition" {
			t.Errorf("error subject %q, want Speech recognition", e.Subject)
		}
	}
}
