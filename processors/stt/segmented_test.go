package stt

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

var fixedNow = time.Date(2025, 3, 4, 5, 6, 7, 891_000_000, time.UTC)

func now() time.Time { return fixedNow }

// speech returns n 20 ms frames of 16 kHz audio: a tone when loud, else
// silence.
func speech(n int, loud bool) []frames.Frame {
	var fs []frames.Frame
	tone := dsp.Tone{Freq: 440, Amplitude: 0.3, SampleRate: 16000, Channels: 1}
	for range n {
		pcm := make([]byte, 640)
		if loud {
			pcm = tone.Append(nil, 320)
		}
		fs = append(fs, &frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 16000, Channels: 1}, UserID: "user-1"})
	}
	return fs
}

func seq(parts ...[]frames.Frame) []frames.Frame {
	var out []frames.Frame
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func one(f frames.Frame) []frames.Frame { return []frames.Frame{f} }

// recordingTranscriber answers with texts[i] for the i-th utterance and
// records the utterances.
type recordingTranscriber struct {
	mu    sync.Mutex
	got   []Utterance
	texts []string
	lang  string
	err   error
	gate  map[int]chan struct{} // request i waits for its gate
}

func (r *recordingTranscriber) Model() string { return "whisper-test" }

func (r *recordingTranscriber) Transcribe(ctx context.Context, u Utterance) (Result, error) {
	r.mu.Lock()
	i := len(r.got)
	r.got = append(r.got, u)
	gate := r.gate[i]
	r.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	if r.err != nil {
		return Result{}, r.err
	}
	text := ""
	if i < len(r.texts) {
		text = r.texts[i]
	}
	return Result{Text: text, Language: r.lang}, nil
}

func (r *recordingTranscriber) utterances() []Utterance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Utterance(nil), r.got...)
}

func transcriptions(fs []frames.Frame) []frames.Transcription {
	var out []frames.Transcription
	for _, f := range fs {
		if t, ok := f.(*frames.Transcription); ok {
			c := *t
			c.Base = frames.Base{}
			out = append(out, c)
		}
	}
	return out
}

func TestSegmentedTranscribesOneUtterance(t *testing.T) {
	tr := &recordingTranscriber{texts: []string{"  Hello there.  "}}
	s := NewSegmented(tr, SegmentedOptions{Now: now, Language: "en"})
	send := seq(
		speech(150, false), // 3 s of silence before: only PreSpeech (1 s) is kept
		one(&frames.VADUserStartedSpeaking{}),
		speech(50, true), // 1 s of speech
		one(&frames.VADUserStoppedSpeaking{}),
		speech(10, false),
	)
	res := pipelinetest.Run(t, s, pipelinetest.Options{Send: send})
	us := tr.utterances()
	if len(us) != 1 {
		t.Fatalf("%d requests, want 1", len(us))
	}
	u := us[0]
	if u.SampleRate != 16000 || u.Channels != 1 || u.Language != "en" {
		t.Errorf("utterance format %d Hz × %d, language %q", u.SampleRate, u.Channels, u.Language)
	}
	if d := u.Duration(); d != 2*time.Second {
		t.Errorf("utterance of %v, want 2s (1 s before the VAD start, 1 s of speech)", d)
	}
	if amp := dsp.ToneAmplitude(u.PCM[32000:], 16000, 1, 440); amp < 0.2 {
		t.Errorf("the speech is not at the end of the utterance (tone amplitude %.2f)", amp)
	}
	want := []frames.Transcription{{Text: "Hello there.", UserID: "user-1", Timestamp: "2025-03-04T05:06:07.891+00:00", Language: "en", Finalized: true}}
	if diff := cmp.Diff(want, transcriptions(res.Down()), pipelinetest.CmpOptions()); diff != "" {
		t.Errorf("transcriptions (-want +got):\n%s", diff)
	}
	// Audio and VAD frames pass through.
	var audioFrames int
	for _, f := range res.Down() {
		if _, ok := f.(*frames.InputAudioRaw); ok {
			audioFrames++
		}
	}
	if audioFrames != 210 {
		t.Errorf("%d audio frames passed, want 210", audioFrames)
	}
}

func TestSegmentedKeepsTheOrderOfUtterances(t *testing.T) {
	// The first utterance (100 ms) is answered last: its request waits
	// until the second (200 ms) has been answered.
	release := make(chan struct{})
	tr := TranscriberFunc(func(ctx context.Context, u Utterance) (Result, error) {
		if u.Duration() == 100*time.Millisecond {
			<-release
			return Result{Text: "first"}, nil
		}
		defer close(release)
		return Result{Text: "second"}, nil
	})
	s := NewSegmented(tr, SegmentedOptions{PreSpeech: time.Millisecond})
	res := pipelinetest.Run(t, s, pipelinetest.Options{
		Send: seq(
			one(&frames.VADUserStartedSpeaking{}), speech(5, true), one(&frames.VADUserStoppedSpeaking{}),
			one(&frames.VADUserStartedSpeaking{}), speech(10, true), one(&frames.VADUserStoppedSpeaking{}),
		),
	})
	var texts []string
	for _, tc := range transcriptions(res.Down()) {
		texts = append(texts, tc.Text)
	}
	if strings.Join(texts, ",") != "first,second" {
		t.Errorf("transcriptions %q, want the order the utterances ended", texts)
	}
}

func TestSegmentedInterruptionDoesNotCancelTheRequest(t *testing.T) {
	gate := make(chan struct{})
	tr := &recordingTranscriber{texts: []string{"still wanted"}, gate: map[int]chan struct{}{0: gate}}
	s := NewSegmented(tr, SegmentedOptions{})
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	interrupted := make(chan struct{})
	var once sync.Once
	pipeline.OnDownstream(res.Task, func(*frames.Interruption) { once.Do(func() { close(interrupted) }) })
	res.Task.QueueFrames(seq(one(&frames.VADUserStartedSpeaking{}), speech(5, true), one(&frames.VADUserStoppedSpeaking{}))...)
	for len(tr.utterances()) < 1 {
		time.Sleep(time.Millisecond)
	}
	res.Task.QueueFrame(&frames.Interruption{})
	<-interrupted
	close(gate)
	res.Task.EndWhenDone()
	res.Wait()
	if got := transcriptions(res.Down()); len(got) != 1 || got[0].Text != "still wanted" {
		t.Errorf("transcriptions %v, want the one requested before the interruption", got)
	}
}

type transientErr struct{ error }

func (transientErr) Category() frames.ErrorCategory { return frames.ErrorTransient }

func TestSegmentedReportsErrors(t *testing.T) {
	tr := &recordingTranscriber{err: transientErr{errors.New("HTTP 503")}}
	s := NewSegmented(tr, SegmentedOptions{})
	res := pipelinetest.Run(t, s, pipelinetest.Options{
		Send: seq(one(&frames.VADUserStartedSpeaking{}), speech(25, true), one(&frames.VADUserStoppedSpeaking{})),
	})
	if got := transcriptions(res.Down()); len(got) != 0 {
		t.Errorf("transcriptions %v after a failed request", got)
	}
	var errs []*frames.Error
	for _, f := range res.Up() {
		if e, ok := f.(*frames.Error); ok {
			errs = append(errs, e)
		}
	}
	if len(errs) != 1 || errs[0].Category != frames.ErrorTransient || !strings.Contains(errs[0].Error(), "stt: transcribing 500ms of audio: HTTP 503") {
		t.Fatalf("errors %v", errs)
	}
}

func TestSegmentedTranscribesSpeechCutByEnd(t *testing.T) {
	tr := &recordingTranscriber{texts: []string{"cut short"}}
	s := NewSegmented(tr, SegmentedOptions{})
	res := pipelinetest.Run(t, s, pipelinetest.Options{
		Send: seq(one(&frames.VADUserStartedSpeaking{}), speech(25, true)),
		Keep: func(f frames.Frame) bool {
			switch f.(type) {
			case *frames.Transcription, *frames.End:
				return true
			}
			return false
		},
	})
	got := res.Down()
	if len(got) != 2 {
		t.Fatalf("got %d frames, want the transcription then End", len(got))
	}
	if tc, ok := got[0].(*frames.Transcription); !ok || tc.Text != "cut short" {
		t.Errorf("first %s, want the transcription", frames.Name(got[0]))
	}
	if _, ok := got[1].(*frames.End); !ok {
		t.Errorf("second %s, want End", frames.Name(got[1]))
	}
}

func TestSegmentedSplitsLongUtterances(t *testing.T) {
	tr := &recordingTranscriber{texts: []string{"one", "two"}}
	s := NewSegmented(tr, SegmentedOptions{MaxUtterance: time.Second, PreSpeech: 100 * time.Millisecond})
	pipelinetest.Run(t, s, pipelinetest.Options{
		Send: seq(one(&frames.VADUserStartedSpeaking{}), speech(75, true), one(&frames.VADUserStoppedSpeaking{})),
	})
	var ds []time.Duration
	for _, u := range tr.utterances() {
		ds = append(ds, u.Duration())
	}
	slices.Sort(ds) // the two requests run concurrently
	if !slices.Equal(ds, []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Fatalf("utterances %v, want 1s and 500ms", ds)
	}
}

func TestSegmentedSkipsEmptyTextAndReportsMetrics(t *testing.T) {
	tr := &recordingTranscriber{texts: []string{"   "}}
	s := NewSegmented(tr, SegmentedOptions{Name: "stt"})
	res := pipelinetest.Run(t, s, pipelinetest.Options{
		Send: seq(one(&frames.VADUserStartedSpeaking{}), speech(25, true), one(&frames.VADUserStoppedSpeaking{})),
		Task: pipeline.TaskOptions{EnableMetrics: true, EnableUsageMetrics: true},
	})
	if got := transcriptions(res.Down()); len(got) != 0 {
		t.Errorf("transcriptions %v for an empty answer", got)
	}
	checkTTFBAndUsage(t, res.Down(), "stt", "whisper-test", 0.5)
}

// checkTTFBAndUsage checks that down carries a TTFB metric then an STT
// usage metric of seconds, both from processor and model.
func checkTTFBAndUsage(t *testing.T, down []frames.Frame, processor, model string, seconds float64) {
	t.Helper()
	var kinds []frames.MetricKind
	for _, f := range down {
		if m, ok := f.(*frames.Metrics); ok {
			for _, d := range m.Data {
				kinds = append(kinds, d.Kind)
				if d.Processor != processor || d.Model != model {
					t.Errorf("metric from %q/%q, want %q/%q", d.Processor, d.Model, processor, model)
				}
				if d.Kind == frames.MetricSTTUsage && d.AudioSeconds != seconds {
					t.Errorf("usage %v s, want %v", d.AudioSeconds, seconds)
				}
			}
		}
	}
	if diff := cmp.Diff([]frames.MetricKind{frames.MetricTTFB, frames.MetricSTTUsage}, kinds); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestSegmentedStopWithoutStartIsIgnored(t *testing.T) {
	tr := &recordingTranscriber{}
	pipelinetest.Run(t, NewSegmented(tr, SegmentedOptions{}), pipelinetest.Options{
		Send: seq(speech(10, true), one(&frames.VADUserStoppedSpeaking{})),
	})
	if n := len(tr.utterances()); n != 0 {
		t.Errorf("%d requests for a stop without a start", n)
	}
}

func TestTimestampFormat(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	if got := Timestamp(time.Date(2025, 1, 2, 16, 4, 5, 123_456_789, loc)); got != "2025-01-02T15:04:05.123+00:00" {
		t.Errorf("Timestamp = %q", got)
	}
}

func BenchmarkSegmentedAudioFrame(b *testing.B) {
	// The cost of one 20 ms frame of silence (the common case: buffering
	// the pre-speech window) in ProcessFrame, without the runtime.
	s := NewSegmented(&recordingTranscriber{}, SegmentedOptions{})
	f := speech(1, false)[0].(*frames.InputAudioRaw)
	b.ReportAllocs()
	for b.Loop() {
		s.audio(nil, f)
	}
}
