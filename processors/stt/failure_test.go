package stt

import (
	"context"
	"errors"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// flakyTranscriber fails the utterances that are failLen bytes long and
// answers "ok" to the others. It tells them apart by length, not by the
// order of the calls: Segmented transcribes utterances concurrently, so
// the calls may arrive in any order.
type flakyTranscriber struct{ failLen int }

func (f *flakyTranscriber) Transcribe(_ context.Context, u Utterance) (Result, error) {
	if len(u.PCM) == f.failLen {
		return Result{}, transientErr{errors.New("HTTP 503 <html>gateway 10.0.0.1</html>")}
	}
	return Result{Text: "ok"}, nil
}

// Issue 18 item 2: a failing STT tells the client once per outage that
// speech recognition failed, in those words, keeps listening, and tells
// again only after it recovered and failed anew.
func TestSegmentedTellsOncePerOutageAndKeepsListening(t *testing.T) {
	utterance := func(frames20ms int) []frames.Frame {
		return seq(one(&frames.VADUserStartedSpeaking{}), speech(frames20ms, true), one(&frames.VADUserStoppedSpeaking{}))
	}
	fails, works := utterance(25), utterance(30)
	tr := &flakyTranscriber{failLen: 25 * 640}
	res := pipelinetest.Run(t, NewSegmented(tr, SegmentedOptions{}), pipelinetest.Options{
		Send: seq(fails, fails, fails, works, fails, works), // two outages
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
