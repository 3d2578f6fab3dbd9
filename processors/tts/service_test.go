package tts

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// fakeSynth speaks every request as a 440 Hz tone of 10 ms per character at
// rate Hz, in chunks of chunk bytes, and records the texts it was asked for.
type fakeSynth struct {
	rate  int
	chunk int
	words bool // report one timestamp per space-separated word
	fail  map[string]error

	mu    sync.Mutex
	texts []string
}

func (s *fakeSynth) WordTimestamps() bool { return s.words }
func (s *fakeSynth) Model() string        { return "fake-1" }

func (s *fakeSynth) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

func (s *fakeSynth) Synthesize(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		s.mu.Lock()
		s.texts = append(s.texts, req.Text)
		s.mu.Unlock()
		if err := s.fail[req.Text]; err != nil {
			yield(Chunk{}, err)
			return
		}
		pcm := dsp.Sine(440, 0.3, s.rate, time.Duration(len(req.Text))*10*time.Millisecond)
		if s.words {
			var ws []Word
			at := 0
			for _, w := range strings.Fields(req.Text) {
				ws = append(ws, Word{Text: w, Start: time.Duration(at) * 10 * time.Millisecond})
				at += len(w) + 1
			}
			// Timestamps arrive before the audio, as a worst case.
			if !yield(Chunk{Words: ws}, nil) {
				return
			}
		}
		for len(pcm) > 0 {
			n := min(s.chunk, len(pcm))
			if !yield(Chunk{Audio: pcm[:n], SampleRate: s.rate}, nil) {
				return
			}
			pcm = pcm[n:]
		}
	}
}

func llmResponse(tokens ...string) []frames.Frame {
	fs := []frames.Frame{&frames.LLMFullResponseStart{}}
	for _, t := range tokens {
		fs = append(fs, &frames.LLMText{Text: t})
	}
	return append(fs, &frames.LLMFullResponseEnd{})
}

// summary describes frames compactly: audio runs collapse into one "audio"
// entry, texts show their text.
func summary(fs []frames.Frame) []string {
	var out []string
	for _, f := range fs {
		var s string
		switch f := f.(type) {
		case *frames.TTSAudioRaw:
			s = "audio"
			if len(out) > 0 && out[len(out)-1] == s {
				continue
			}
		case *frames.TTSText:
			s = "tts-text(" + f.AggregatedBy + "):" + f.Text
		case *frames.LLMText:
			s = "llm-text:" + f.Text
		case *frames.Metrics:
			continue
		default:
			s = frames.TypeName(f)
		}
		out = append(out, s)
	}
	return out
}

func TestServiceSpeaksSentencesInOrder(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 4800}
	res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{
		Send: llmResponse("Hello", " there.", " How are", " you?", " Fine"),
	})
	want := []string{
		"LLMFullResponseStartFrame",
		"TTSStartedFrame", "audio", "tts-text(sentence):Hello there.", "TTSStoppedFrame",
		"TTSStartedFrame", "audio", "tts-text(sentence):How are you?", "TTSStoppedFrame",
		"TTSStartedFrame", "audio", "tts-text(sentence):Fine", "TTSStoppedFrame",
		"LLMFullResponseEndFrame",
	}
	if diff := cmp.Diff(want, summary(res.Down())); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Hello there.", "How are you?", "Fine"}, synth.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// Every frame of one request carries its context id.
	var ctxID string
	for _, f := range res.Down() {
		switch f := f.(type) {
		case *frames.TTSStarted:
			ctxID = f.ContextID
		case *frames.TTSAudioRaw:
			if f.ContextID != ctxID || ctxID == "" {
				t.Fatalf("audio context %q inside request %q", f.ContextID, ctxID)
			}
		case *frames.TTSText:
			if f.ContextID != ctxID {
				t.Fatalf("text context %q inside request %q", f.ContextID, ctxID)
			}
		case *frames.TTSStopped:
			if f.ContextID != ctxID {
				t.Fatalf("stopped context %q inside request %q", f.ContextID, ctxID)
			}
		}
	}
}

func TestServiceResamplesToTheOutputRate(t *testing.T) {
	for _, tc := range []struct{ in, out int }{{22050, 24000}, {24000, 24000}, {16000, 48000}, {44100, 16000}} {
		synth := &fakeSynth{rate: tc.in, chunk: 333} // odd chunks split samples
		res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{
			Send: []frames.Frame{&frames.TTSSpeak{Text: strings.Repeat("a", 50)}},
			Task: pipeline.TaskOptions{AudioOutSampleRate: tc.out},
		})
		var pcm []byte
		maxFrame := dsp.FrameBytes(tc.out, 1, DefaultFrameDuration)
		for _, f := range res.Down() {
			if a, ok := f.(*frames.TTSAudioRaw); ok {
				if a.SampleRate != tc.out || a.Channels != 1 {
					t.Fatalf("%d→%d: frame at %d Hz, %d channels", tc.in, tc.out, a.SampleRate, a.Channels)
				}
				if len(a.PCM) > maxFrame || len(a.PCM)%2 != 0 {
					t.Fatalf("%d→%d: frame of %d bytes (max %d, whole samples)", tc.in, tc.out, len(a.PCM), maxFrame)
				}
				pcm = append(pcm, a.PCM...)
			}
		}
		got := dsp.Duration(pcm, tc.out, 1)
		if want := 500 * time.Millisecond; got < want-5*time.Millisecond || got > want+5*time.Millisecond {
			t.Errorf("%d→%d: %v of audio, want about %v", tc.in, tc.out, got, want)
		}
		if f, amp := dsp.DominantFrequency(pcm, tc.out, 1, 220, 440, 880); f != 440 || amp < 0.1 {
			t.Errorf("%d→%d: dominant tone %v Hz at %.2f, want 440 Hz", tc.in, tc.out, f, amp)
		}
	}
}

func TestServiceReleasesWordsInStepWithAudio(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 480, words: true} // 10 ms chunks
	res := pipelinetest.Run(t, NewService(synth, Options{FrameDuration: 10 * time.Millisecond}), pipelinetest.Options{
		Send: []frames.Frame{&frames.TTSSpeak{Text: "one two three"}},
	})
	// Each word must come right after the audio that reaches its start:
	// "one" at 0 ms, "two" at 40 ms, "three" at 80 ms.
	var audioMS float64
	starts := map[string]float64{}
	for _, f := range res.Down() {
		switch f := f.(type) {
		case *frames.TTSAudioRaw:
			audioMS += float64(dsp.Duration(f.PCM, f.SampleRate, 1)) / float64(time.Millisecond)
		case *frames.TTSText:
			if f.AggregatedBy != AggregatedByWord {
				t.Errorf("text %q aggregated by %q, want word", f.Text, f.AggregatedBy)
			}
			starts[f.Text] = audioMS
		}
	}
	want := map[string]float64{"one": 0, "two": 40, "three": 80}
	for w, at := range want {
		got, ok := starts[w]
		if !ok {
			t.Errorf("word %q never released", w)
			continue
		}
		if math.Abs(got-at) > 10 {
			t.Errorf("word %q released after %.0f ms of audio, want %.0f ms (±10)", w, got, at)
		}
	}
}

func TestServicePassesSkipTTSTextThrough(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 4800}
	send := []frames.Frame{
		&frames.LLMFullResponseStart{SkipTTS: true},
		&frames.LLMText{Text: "Silent. ", SkipTTS: true},
		&frames.LLMFullResponseEnd{SkipTTS: true},
		&frames.LLMText{Text: "Also silent. ", SkipTTS: true},
		&frames.Text{Text: "Quiet. ", SkipTTS: true},
	}
	res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{Send: send})
	want := []string{"LLMFullResponseStartFrame", "llm-text:Silent. ", "LLMFullResponseEndFrame", "llm-text:Also silent. ", "TextFrame"}
	if diff := cmp.Diff(want, summary(res.Down())); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if n := len(synth.requests()); n != 0 {
		t.Errorf("%d synthesis requests for text that must not be spoken", n)
	}
}

func TestServiceSpeaksTTSSpeakVerbatim(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 4800}
	text := "Dr. Who? Yes. Pi is 3.14 — see example.com."
	send := []frames.Frame{
		&frames.LLMText{Text: "Unfinished"},
		&frames.TTSSpeak{Text: text},
	}
	res := pipelinetest.Run(t, NewService(synth, Options{Transform: strings.ToUpper}), pipelinetest.Options{Send: send})
	// The pending text goes first, so order is kept; the speak text is one
	// request, unsplit; the transform applies to synthesis only.
	if diff := cmp.Diff([]string{"UNFINISHED", strings.ToUpper(text)}, synth.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	want := []string{
		"TTSStartedFrame", "audio", "tts-text(sentence):Unfinished", "TTSStoppedFrame",
		"TTSStartedFrame", "audio", "tts-text(sentence):" + text, "TTSStoppedFrame",
	}
	if diff := cmp.Diff(want, summary(res.Down())); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

// A TTSSpeak with NoContext marks the text frames of its own speech, and
// only those, to stay out of the LLM context, with sentence and with word
// timestamps alike; the pending text spoken before it still counts.
func TestTTSSpeakWithoutContextMarksOnlyItsOwnText(t *testing.T) {
	for _, words := range []bool{false, true} {
		synth := &fakeSynth{rate: 24000, chunk: 480, words: words}
		res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{Send: []frames.Frame{
			&frames.LLMText{Text: "Pending"},
			&frames.TTSSpeak{Text: "Aside words", NoContext: true},
			&frames.TTSSpeak{Text: "Kept"},
		}})
		var got []string
		for _, f := range res.Down() {
			if t, ok := f.(*frames.TTSText); ok {
				got = append(got, fmt.Sprintf("%s:%v", t.Text, t.NoContext))
			}
		}
		want := []string{"Pending:false", "Aside words:true", "Kept:false"}
		if words {
			want = []string{"Pending:false", "Aside:true", "words:true", "Kept:false"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("words=%v: TTSText text:NoContext (-want +got):\n%s", words, diff)
		}
	}
}

func TestServiceFlushesAtEnd(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 4800}
	res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{
		Send: []frames.Frame{&frames.LLMText{Text: "No end punctuation"}},
		Keep: func(frames.Frame) bool { return true },
	})
	got := summary(res.Down())
	want := []string{"StartFrame", "TTSStartedFrame", "audio", "tts-text(sentence):No end punctuation", "TTSStoppedFrame", "EndFrame"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

func TestServiceReportsSynthesisErrors(t *testing.T) {
	boom := &categorized{errors.New("server said no"), frames.ErrorTransient}
	synth := &fakeSynth{rate: 24000, chunk: 4800, fail: map[string]error{"Bad one.": boom}}
	res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{
		Send: llmResponse("Bad one. ", "Good one."),
	})
	want := []string{
		"LLMFullResponseStartFrame",
		"TTSStartedFrame", "tts-text(sentence):Bad one.", "TTSStoppedFrame",
		"TTSStartedFrame", "audio", "tts-text(sentence):Good one.", "TTSStoppedFrame",
		"LLMFullResponseEndFrame",
	}
	if diff := cmp.Diff(want, summary(res.Down())); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	var errs []*frames.Error
	for _, f := range res.Up() {
		if e, ok := f.(*frames.Error); ok {
			errs = append(errs, e)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("%d errors upstream, want 1", len(errs))
	}
	if !errors.Is(errs[0], boom) || errs[0].Category != frames.ErrorTransient || !strings.Contains(errs[0].Error(), `"Bad one."`) {
		t.Errorf("error = %v (category %v); want the synthesizer's transient error naming the text", errs[0], errs[0].Category)
	}
}

type categorized struct {
	error
	cat frames.ErrorCategory
}

func (c *categorized) Category() frames.ErrorCategory { return c.cat }

func TestServiceMetrics(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 4800}
	svc := NewService(synth, Options{Name: "tts"})
	res := pipelinetest.Run(t, svc, pipelinetest.Options{
		Send: []frames.Frame{&frames.TTSSpeak{Text: "Héllo"}, &frames.TTSSpeak{Text: "Again"}},
		Task: pipeline.TaskOptions{EnableMetrics: true, EnableUsageMetrics: true},
	})
	kinds := map[frames.MetricKind]int{}
	for _, f := range res.Down() {
		if m, ok := f.(*frames.Metrics); ok {
			for _, d := range m.Data {
				kinds[d.Kind]++
				if d.Processor != "tts" || d.Model != "fake-1" {
					t.Errorf("metric names processor %q model %q", d.Processor, d.Model)
				}
				if d.Kind == frames.MetricTTSUsage && d.Characters != 5 {
					t.Errorf("usage %d characters, want 5 (runes, not bytes)", d.Characters)
				}
			}
		}
	}
	want := map[frames.MetricKind]int{frames.MetricTTFB: 2, frames.MetricProcessing: 2, frames.MetricTTSUsage: 2}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("metric counts (-want +got):\n%s", diff)
	}
}

// blockingSynth sends one chunk of audio, then, for texts starting with
// "This", waits for cancellation.
type blockingSynth struct {
	started   chan string
	cancelled chan string
}

func (s *blockingSynth) Synthesize(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		if !yield(Chunk{Audio: make([]byte, 960), SampleRate: 24000}, nil) {
			return
		}
		s.started <- req.Text
		if strings.HasPrefix(req.Text, "This") {
			<-ctx.Done()
			s.cancelled <- req.Text
		}
	}
}

// reachedEnd returns a channel closed once a frame of type T has left the
// pipeline downstream (so every processor has handled it).
func reachedEnd[T frames.Frame](task *pipeline.Task) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	pipeline.OnDownstream(task, func(T) { once.Do(func() { close(ch) }) })
	return ch
}

func TestServiceInterruptionCancelsSynthesisAndKeepsUninterruptibleFrames(t *testing.T) {
	synth := &blockingSynth{started: make(chan string, 4), cancelled: make(chan string, 4)}
	svc := NewService(synth, Options{})
	res := pipelinetest.Start(t, svc, pipelinetest.Options{NoEnd: true})
	audioOut := reachedEnd[*frames.TTSAudioRaw](res.Task)
	interruptionOut := reachedEnd[*frames.Interruption](res.Task)
	cancelQueued := make(chan struct{})
	var once sync.Once
	res.Task.AddObserver(observers.Func(func(e observers.Event) {
		if _, ok := e.Frame.(*frames.FunctionCallCancel); ok && e.Kind == observers.Pushed && e.Destination != nil && e.Destination.Processor() == svc {
			once.Do(func() { close(cancelQueued) })
		}
	}))
	call := frames.FunctionCall{Name: "lookup", ToolCallID: "call_1"}
	res.Task.QueueFrames(&frames.LLMFullResponseStart{}, &frames.LLMText{Text: "This is long. "})
	if got := <-synth.started; got != "This is long." {
		t.Fatalf("synthesizing %q", got)
	}
	<-audioOut
	// While the job holds the lane, these wait in the service's queue.
	res.Task.QueueFrames(
		&frames.LLMText{Text: "Never said. "},
		&frames.FunctionCallInProgress{FunctionCall: call},
		&frames.FunctionCallCancel{Name: call.Name, ToolCallID: call.ToolCallID},
		&frames.LLMFullResponseEnd{},
	)
	<-cancelQueued
	res.Task.QueueFrame(&frames.Interruption{})
	if got := <-synth.cancelled; got != "This is long." {
		t.Fatalf("cancelled %q", got)
	}
	<-interruptionOut
	res.Task.QueueFrame(&frames.TTSSpeak{Text: "After."})
	if got := <-synth.started; got != "After." {
		t.Fatalf("after the interruption, synthesizing %q; want the next request", got)
	}
	res.Task.EndWhenDone()
	res.Wait()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []string{
		"LLMFullResponseStartFrame", "TTSStartedFrame", "audio",
		"InterruptionFrame",
		"FunctionCallInProgressFrame", "FunctionCallCancelFrame",
		"TTSStartedFrame", "audio", "tts-text(sentence):After.", "TTSStoppedFrame",
	}
	if diff := cmp.Diff(want, summary(res.Down())); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

// processedBy returns a channel closed once p has begun processing a frame
// of type T that satisfies match (any frame of type T when match is nil).
func processedBy[T frames.Frame](task *pipeline.Task, p pipeline.Processor, match func(T) bool) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	task.AddObserver(observers.Func(func(e observers.Event) {
		if e.Kind != observers.Processed || e.Destination == nil || e.Destination.Processor() != p {
			return
		}
		if f, ok := e.Frame.(T); ok && (match == nil || match(f)) {
			once.Do(func() { close(ch) })
		}
	}))
	return ch
}

func TestServiceInterruptionDropsHalfASentence(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 4800}
	svc := NewService(synth, Options{})
	res := pipelinetest.Start(t, svc, pipelinetest.Options{NoEnd: true})
	half := processedBy(res.Task, svc, func(t *frames.LLMText) bool { return t.Text == "Half a sen" })
	interrupted := processedBy[*frames.Interruption](res.Task, svc, nil)
	res.Task.QueueFrame(&frames.LLMText{Text: "Half a sen"})
	<-half
	res.Task.QueueFrame(&frames.Interruption{})
	<-interrupted
	res.Task.QueueFrame(&frames.LLMText{Text: "Fresh start."})
	res.Task.EndWhenDone()
	res.Wait()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if diff := cmp.Diff([]string{"Fresh start."}, synth.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestServiceCleanupClosesTheSynthesizer(t *testing.T) {
	c := &closingSynth{}
	pipelinetest.Run(t, NewService(c, Options{}), pipelinetest.Options{})
	if !c.closed {
		t.Error("Cleanup did not close the synthesizer")
	}
}

type closingSynth struct {
	fakeSynth
	closed bool
}

func (c *closingSynth) Close() error { c.closed = true; return nil }

func BenchmarkServiceSentence(b *testing.B) {
	// One sentence through a task, 1 s of 22.05 kHz audio resampled to 24 kHz.
	synth := &fakeSynth{rate: 22050, chunk: 4410}
	text := strings.Repeat("a", 100)
	b.ReportAllocs()
	for b.Loop() {
		pipelinetest.Run(b, NewService(synth, Options{}), pipelinetest.Options{
			Send: []frames.Frame{&frames.TTSSpeak{Text: text}},
			Keep: func(frames.Frame) bool { return false },
		})
	}
}

type nopPusher struct{}

func (nopPusher) Push(frames.Frame, frames.Direction) {}
func (nopPusher) PushError(error)                     {}

func BenchmarkAudioChunk(b *testing.B) {
	// One 20 ms chunk of 22.05 kHz synthesizer audio: resampled to 24 kHz
	// and pushed as a frame, the per-chunk work of a synthesis job.
	for _, rate := range []int{22050, 24000} {
		b.Run(strconv.Itoa(rate), func(b *testing.B) {
			s := NewService(&fakeSynth{}, Options{})
			u := &utterance{s: s, cfg: jobConfig{outRate: 24000}}
			r := &request{u: u, out: nopPusher{}, frameBytes: dsp.FrameBytes(24000, 1, DefaultFrameDuration)}
			if err := u.resampler(r, 0, rate); err != nil {
				b.Fatal(err)
			}
			chunk := dsp.Sine(440, 0.3, rate, 20*time.Millisecond)
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for b.Loop() {
				u.scratch = u.rs.Resample(u.scratch[:0], chunk)
				r.emit(u.scratch)
			}
		})
	}
}

func TestServiceReportsWordProgressThroughTheSentence(t *testing.T) {
	synth := &fakeSynth{rate: 24000, chunk: 480, words: true}
	res := pipelinetest.Run(t, NewService(synth, Options{}), pipelinetest.Options{
		Send: []frames.Frame{&frames.TTSSpeak{Text: "Hi, you there?"}},
	})
	var got []string
	var segment uint64
	for _, f := range res.Down() {
		switch f := f.(type) {
		case *frames.AggregatedText:
			if !f.WillBeSpoken || f.AggregatedBy != AggregatedBySentence {
				t.Errorf("segment %+v", f)
			}
			segment = f.ID()
			got = append(got, "segment:"+f.Text)
		case *frames.TTSText:
			got = append(got, "word:"+f.Text)
		case *frames.AggregatedTextProgress:
			if f.SegmentID != segment || f.Text != "Hi, you there?" {
				t.Errorf("progress for segment %d %q, want %d", f.SegmentID, f.Text, segment)
			}
			got = append(got, "progress:"+f.AccumulatedText+"|"+f.RemainingText)
		}
	}
	want := []string{
		"segment:Hi, you there?",
		"word:Hi,", "progress:Hi,|you there?",
		"word:you", "progress:Hi, you|there?",
		"word:there?", "progress:Hi, you there?|",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("segment and progress (-want +got):\n%s", diff)
	}
}
