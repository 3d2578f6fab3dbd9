package stt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// fakeStreamer hands out fakeStreams and records them. Connect fails with
// the errors in connectErrs first, one per attempt.
type fakeStreamer struct {
	mu          sync.Mutex
	connectErrs []error
	attempts    int
	streams     []*fakeStream
	opened      chan *fakeStream
	block       bool // Connect waits for ctx
}

func newFakeStreamer(errs ...error) *fakeStreamer {
	return &fakeStreamer{connectErrs: errs, opened: make(chan *fakeStream, 16)}
}

func (f *fakeStreamer) Model() string { return "nova-test" }

func (f *fakeStreamer) Connect(ctx context.Context, format Format) (Stream, error) {
	f.mu.Lock()
	f.attempts++
	block := f.block
	var err error
	if len(f.connectErrs) > 0 {
		err, f.connectErrs = f.connectErrs[0], f.connectErrs[1:]
	}
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	st := &fakeStream{format: format, events: make(chan Event, 16), broken: make(chan error, 1), aborted: make(chan struct{}), log: make(chan string, 1024)}
	f.mu.Lock()
	f.streams = append(f.streams, st)
	f.mu.Unlock()
	f.opened <- st
	return st, nil
}

func (f *fakeStreamer) attemptCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts
}

// fakeStream records what the service sends; tests feed its events.
type fakeStream struct {
	format  Format
	events  chan Event
	broken  chan error
	aborted chan struct{}
	once    sync.Once
	log     chan string // "audio:<n>", "finalize", "keepalive", "close"

	mu    sync.Mutex
	audio []byte
}

func (s *fakeStream) SendAudio(_ context.Context, pcm []byte) error {
	s.mu.Lock()
	s.audio = append(s.audio, pcm...)
	s.mu.Unlock()
	s.log <- "audio"
	return nil
}
func (s *fakeStream) Finalize(context.Context) error  { s.log <- "finalize"; return nil }
func (s *fakeStream) KeepAlive(context.Context) error { s.log <- "keepalive"; return nil }
func (s *fakeStream) Close(context.Context) error {
	s.log <- "close"
	// The server sends its last result, then ends the session.
	s.events <- Event{Kind: EventFinal, Text: "last words", Finalized: true}
	s.broken <- io.EOF
	return nil
}
func (s *fakeStream) Abort() error { s.once.Do(func() { close(s.aborted) }); return nil }

func (s *fakeStream) Recv(ctx context.Context) (Event, error) {
	select {
	case ev := <-s.events:
		return ev, nil
	default:
	}
	select {
	case ev := <-s.events:
		return ev, nil
	case err := <-s.broken:
		// A server's last results come before its end: Close queues both
		// at once, and select would pick either.
		select {
		case ev := <-s.events:
			s.broken <- err
			return ev, nil
		default:
		}
		return Event{}, err
	case <-s.aborted:
		return Event{}, errors.New("aborted")
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

func (s *fakeStream) sent() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.audio...)
}

// waitFor reads the stream's log until want appears.
func (s *fakeStream) waitFor(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-s.log:
			if got == want {
				return
			}
		case <-timeout:
			t.Fatalf("the stream never got %q", want)
		}
	}
}

// numbered returns n 20 ms frames whose samples carry their index, so the
// order of audio can be checked.
func numbered(from, n int) []frames.Frame {
	var fs []frames.Frame
	for i := from; i < from+n; i++ {
		pcm := bytes.Repeat([]byte{byte(i), 0}, 320)
		fs = append(fs, &frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 16000, Channels: 1}, UserID: "user-7"})
	}
	return fs
}

func pcmOf(fs []frames.Frame) []byte {
	var b []byte
	for _, f := range fs {
		b = append(b, f.(*frames.InputAudioRaw).PCM...)
	}
	return b
}

// waitUntil polls cond until it holds, failing after a generous bound.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func fastOptions() StreamingOptions {
	return StreamingOptions{Now: now, ReconnectBackoff: time.Millisecond, MaxReconnectBackoff: 4 * time.Millisecond}
}

func TestStreamingSendsAudioAndPushesResults(t *testing.T) {
	fs := newFakeStreamer()
	s := NewStreaming(fs, fastOptions())
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	st := <-fs.opened
	if st.format != (Format{SampleRate: 16000, Channels: 1}) {
		t.Errorf("session format %+v", st.format)
	}
	audio := numbered(0, 10)
	res.Task.QueueFrames(audio...)
	res.Task.QueueFrame(&frames.VADUserStoppedSpeaking{})
	st.waitFor(t, "finalize")
	if !bytes.Equal(st.sent(), pcmOf(audio)) {
		t.Errorf("the session got %d bytes, want the %d sent before the finalize", len(st.sent()), len(pcmOf(audio)))
	}
	st.events <- Event{Kind: EventInterim, Text: "hel"}
	st.events <- Event{Kind: EventSpeechStarted}
	st.events <- Event{Kind: EventFinal, Text: "hello there", Language: "en-US", Finalized: true, Confidence: 0.75}
	st.events <- Event{Kind: EventFinal, Text: "   "}
	res.Task.EndWhenDone()
	res.Wait()
	var got []string
	for _, f := range res.Down() {
		switch f := f.(type) {
		case *frames.InterimTranscription:
			got = append(got, "interim:"+f.Text+"|"+f.UserID+"|"+f.Timestamp)
		case *frames.Transcription:
			got = append(got, fmt.Sprintf("final:%s|%s|%s|%s|%.2f", f.Text, f.UserID, f.Language, map[bool]string{true: "finalized", false: "open"}[f.Finalized], f.Confidence))
		}
	}
	want := []string{
		"interim:hel|user-7|2025-03-04T05:06:07.891+00:00",
		"final:hello there|user-7|en-US|finalized|0.75", // the service's confidence is kept
		"final:last words|user-7||finalized|0.00",       // sent by the server when End closed the session; no confidence
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestStreamingReconnectsAndReplaysHeldAudio(t *testing.T) {
	fs := newFakeStreamer()
	s := NewStreaming(fs, fastOptions())
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	first := <-fs.opened
	res.Task.QueueFrames(numbered(0, 5)...)
	for len(first.sent()) < len(pcmOf(numbered(0, 5))) {
		first.waitFor(t, "audio")
	}
	fs.mu.Lock()
	fs.connectErrs = []error{transientErr{errors.New("dial: connection refused")}}
	fs.mu.Unlock()
	first.broken <- errors.New("closed by the server with status 1011 (NET-0001)")
	// Audio keeps coming while the session is down.
	res.Task.QueueFrames(numbered(5, 5)...)
	second := <-fs.opened
	res.Task.QueueFrames(numbered(10, 5)...)
	res.Task.QueueFrame(&frames.VADUserStoppedSpeaking{})
	second.waitFor(t, "finalize")
	res.Task.EndWhenDone()
	res.Wait()
	all := append(first.sent(), second.sent()...)
	if !bytes.Equal(all, pcmOf(numbered(0, 15))) {
		t.Errorf("audio across the two sessions: %d bytes, want all %d in order", len(all), len(pcmOf(numbered(0, 15))))
	}
	if n := fs.attemptCount(); n != 3 {
		t.Errorf("%d connection attempts, want 3 (open, refused, open)", n)
	}
	var errs []string
	for _, f := range res.Up() {
		if e, ok := f.(*frames.Error); ok {
			errs = append(errs, e.Error())
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "stt: session failed, reconnecting: closed by the server with status 1011 (NET-0001)") {
		t.Errorf("errors upstream %q; want one for the failure streak", errs)
	}
}

type permanentErr struct{ error }

func (permanentErr) Category() frames.ErrorCategory { return frames.ErrorPermanent }

func TestStreamingGivesUpOnPermanentErrors(t *testing.T) {
	fs := newFakeStreamer(transientErr{errors.New("HTTP 503")}, permanentErr{errors.New("HTTP 401: Invalid credentials.")})
	s := NewStreaming(fs, fastOptions())
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	res.Task.QueueFrames(numbered(0, 3)...)
	waitUntil(t, "a permanent error upstream", func() bool {
		for _, f := range res.Up() {
			if e, ok := f.(*frames.Error); ok && e.Permanent() {
				return true
			}
		}
		return false
	})
	res.Task.EndWhenDone()
	res.Wait()
	var errs []*frames.Error
	for _, f := range res.Up() {
		if e, ok := f.(*frames.Error); ok {
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		t.Fatal("no error upstream")
	}
	last := errs[len(errs)-1]
	if !last.Permanent() || !strings.Contains(last.Error(), "giving up on the session: HTTP 401: Invalid credentials.") {
		t.Errorf("last error %v (permanent %v)", last, last.Permanent())
	}
	if n := fs.attemptCount(); n != 2 {
		t.Errorf("%d attempts, want 2: no retry after a permanent error", n)
	}
}

func TestStreamingIgnoresInterruptions(t *testing.T) {
	fs := newFakeStreamer()
	s := NewStreaming(fs, fastOptions())
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	st := <-fs.opened
	interrupted := make(chan struct{})
	var once sync.Once
	pipeline.OnDownstream(res.Task, func(*frames.Interruption) { once.Do(func() { close(interrupted) }) })
	res.Task.QueueFrames(numbered(0, 3)...)
	res.Task.QueueFrame(&frames.Interruption{})
	<-interrupted
	res.Task.QueueFrames(numbered(3, 3)...)
	res.Task.QueueFrame(&frames.VADUserStoppedSpeaking{})
	st.waitFor(t, "finalize")
	st.events <- Event{Kind: EventFinal, Text: "barge in", Finalized: true}
	res.Task.EndWhenDone()
	res.Wait()
	if !bytes.Equal(st.sent(), pcmOf(numbered(0, 6))) || fs.attemptCount() != 1 {
		t.Errorf("the session did not carry on through the interruption: %d bytes, %d sessions", len(st.sent()), fs.attemptCount())
	}
	found := false
	for _, f := range res.Down() {
		if tc, ok := f.(*frames.Transcription); ok && tc.Text == "barge in" {
			found = true
		}
	}
	if !found {
		t.Error("the result after the interruption was lost")
	}
}

func TestStreamingKeepsIdleSessionsAlive(t *testing.T) {
	fs := newFakeStreamer()
	o := fastOptions()
	o.KeepAlive = 5 * time.Millisecond
	s := NewStreaming(fs, o)
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	st := <-fs.opened
	st.waitFor(t, "keepalive")
	res.Task.EndWhenDone()
	res.Wait()
}

func TestStreamingBoundsHeldAudio(t *testing.T) {
	fs := newFakeStreamer()
	fs.block = true // the session never opens
	o := fastOptions()
	o.MaxBuffered = 100 * time.Millisecond
	o.CloseTimeout = 10 * time.Millisecond
	s := NewStreaming(fs, o)
	res := pipelinetest.Run(t, s, pipelinetest.Options{Send: numbered(0, 50), Task: pipeline.TaskOptions{CancelTimeout: time.Second}})
	if s.Dropped() != 45 {
		t.Errorf("dropped %d frames, want 45 (1 s of audio, 100 ms held)", s.Dropped())
	}
	if q := s.queuedBytes.Load(); q > int64(3200) {
		t.Errorf("%d bytes held, more than MaxBuffered", q)
	}
	_ = res
}

func TestStreamingMetrics(t *testing.T) {
	fs := newFakeStreamer()
	s := NewStreaming(fs, StreamingOptions{Name: "dg"})
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true, Task: pipeline.TaskOptions{EnableMetrics: true, EnableUsageMetrics: true}})
	st := <-fs.opened
	res.Task.QueueFrames(numbered(0, 25)...)
	res.Task.QueueFrame(&frames.VADUserStoppedSpeaking{})
	st.waitFor(t, "finalize")
	st.events <- Event{Kind: EventFinal, Text: "done", Finalized: true}
	res.Task.EndWhenDone()
	res.Wait()
	checkTTFBAndUsage(t, res.Down(), "dg", "nova-test", 0.5)
}

func TestStreamingResamplesOtherRates(t *testing.T) {
	fs := newFakeStreamer()
	s := NewStreaming(fs, fastOptions())
	in := &frames.InputAudioRaw{Audio: frames.Audio{PCM: make([]byte, 4*960), SampleRate: 48000, Channels: 2}}
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	st := <-fs.opened
	res.Task.QueueFrame(in)
	res.Task.QueueFrame(&frames.VADUserStoppedSpeaking{})
	st.waitFor(t, "finalize")
	res.Task.EndWhenDone()
	res.Wait()
	// 20 ms of 48 kHz stereo becomes 20 ms of 16 kHz mono.
	if n := len(st.sent()); n != 640 {
		t.Errorf("sent %d bytes, want 640", n)
	}
}

// Audio at a rate no resampler should serve (1 Hz, which made 16000
// samples of each one: 245 MB for 10 KB of input) is dropped, and costs no
// allocation that grows with the ratio; a frame at a real rate after it
// still goes through.
func TestStreamingDropsAudioAtAnInsaneRateCheaply(t *testing.T) {
	s := NewStreaming(newFakeStreamer(), StreamingOptions{})
	s.format = frames.Audio{SampleRate: 16000, Channels: 1}
	s.maxBytes.Store(1 << 40)
	bomb := &frames.InputAudioRaw{Audio: frames.Audio{PCM: make([]byte, 8000), SampleRate: 1, Channels: 1}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 5 {
		s.enqueue(bomb)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("5 frames at 1 Hz allocated %d bytes, want under 64 KiB", got)
	}
	if n := s.q.Len(); n != 0 {
		t.Fatalf("%d frames queued at 1 Hz", n)
	}
	s.enqueue(&frames.InputAudioRaw{Audio: frames.Audio{PCM: make([]byte, 1920), SampleRate: 48000, Channels: 1}})
	if n := s.q.Len(); n != 1 {
		t.Fatalf("%d frames queued after a 48 kHz frame, want 1", n)
	}
}

func BenchmarkStreamingAudioFrame(b *testing.B) {
	// The cost of queueing one 20 ms frame for the writer, on the node
	// goroutine.
	s := NewStreaming(newFakeStreamer(), StreamingOptions{})
	s.format = frames.Audio{SampleRate: 16000, Channels: 1}
	s.maxBytes.Store(1 << 40)
	f := numbered(0, 1)[0].(*frames.InputAudioRaw)
	b.ReportAllocs()
	for b.Loop() {
		s.enqueue(f)
		if _, _, ok := s.q.Pop(); ok {
			s.queuedBytes.Add(-int64(len(f.PCM)))
		}
	}
}

// End can be handled before the session manager's goroutine has begun its
// first connection attempt (the pipeline starts, audio comes, and End
// follows at once). The audio queued by then is still transcribed, as it
// is when End comes during an attempt; with nothing queued, no connection
// is made.
func TestStreamingEndBeforeTheFirstAttemptStillTranscribesQueuedAudio(t *testing.T) {
	for _, tc := range []struct {
		name         string
		audio        int // frames queued before End
		wantAttempts int
	}{
		{"audio queued", 5, 1},
		{"nothing queued", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeStreamer()
			s := NewStreaming(fs, fastOptions())
			// Hold the manager until End has closed the session.
			s.testHookManage = func(closing <-chan struct{}) { <-closing }
			res := pipelinetest.Run(t, s, pipelinetest.Options{Send: numbered(0, tc.audio)})
			if n := fs.attemptCount(); n != tc.wantAttempts {
				t.Fatalf("%d connection attempts, want %d", n, tc.wantAttempts)
			}
			if tc.audio == 0 {
				return
			}
			if sent, want := fs.streams[0].sent(), pcmOf(numbered(0, tc.audio)); !bytes.Equal(sent, want) {
				t.Errorf("the session got %d bytes, want the %d queued before End", len(sent), len(want))
			}
			var finals []string
			for _, f := range res.Down() {
				if tr, ok := f.(*frames.Transcription); ok {
					finals = append(finals, tr.Text)
				}
			}
			if len(finals) != 1 || finals[0] != "last words" {
				t.Errorf("transcriptions %q, want the server's last words", finals)
			}
		})
	}
}
