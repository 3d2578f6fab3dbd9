package deepgram

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/wsfake"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/internal/stttest"
)

func service(f *fakeDeepgram, o Options) *stt.Streaming {
	o.URL, o.APIKey = f.url(), "dg-test"
	return stt.NewStreaming(New(o), stt.StreamingOptions{
		Language: "en", ReconnectBackoff: time.Millisecond, MaxReconnectBackoff: 2 * time.Millisecond,
		Now: func() time.Time { return time.Date(2025, 6, 12, 9, 41, 27, 315_000_000, time.UTC) },
	})
}

func TestATurnThroughTheStreamingService(t *testing.T) {
	f := newFake(t, "hello.ws")
	res := pipelinetest.Run(t, service(f, Options{}), pipelinetest.Options{
		Send: stttest.Seq(stttest.AudioFrames(25), []frames.Frame{&frames.VADUserStoppedSpeaking{}}),
	})
	want := []string{
		"interim hello",
		"interim hello there",
		"final Hello there. [en] caller 2025-06-12T09:41:27.315+00:00 (finalized)",
	}
	if diff := cmp.Diff(want, stttest.Results(res.Down())); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Finalize", "CloseStream"}, f.textTypes()); diff != "" {
		t.Errorf("control messages (-want +got):\n%s", diff)
	}
	if f.audio[0] != 25*640 {
		t.Errorf("Deepgram got %d bytes of audio, want %d", f.audio[0], 25*640)
	}
	if f.auth[0] != "Token dg-test" {
		t.Errorf("Authorization %q", f.auth[0])
	}
}

func TestQueryParameters(t *testing.T) {
	c := New(Options{
		SmartFormat: true, Endpointing: 300, UtteranceEndMS: 1000, VADEvents: true,
		Keyterms: []string{"framewire", "Pipecat"}, Extra: url.Values{"diarize": {"true"}, "model": {"nova-3-medical"}},
	})
	got := c.Query(stt.Format{SampleRate: 16000, Channels: 1})
	want := url.Values{
		"model": {"nova-3-medical"}, "language": {"en"}, "encoding": {"linear16"}, "sample_rate": {"16000"},
		"channels": {"1"}, "interim_results": {"true"}, "punctuate": {"true"}, "smart_format": {"true"},
		"endpointing": {"300"}, "utterance_end_ms": {"1000"}, "vad_events": {"true"},
		"keyterm": {"framewire", "Pipecat"}, "diarize": {"true"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	off := New(Options{NoInterimResults: true, NoPunctuate: true, Endpointing: -1}).Query(stt.Format{SampleRate: 8000})
	if off.Get("interim_results") != "false" || off.Get("punctuate") != "false" || off.Get("endpointing") != "false" || off.Get("sample_rate") != "8000" {
		t.Errorf("query with features off: %v", off)
	}
}

func TestDetectedLanguage(t *testing.T) {
	f := newFake(t, "multilingual.ws")
	res := pipelinetest.Run(t, service(f, Options{Language: "multi"}), pipelinetest.Options{Send: stttest.AudioFrames(5)})
	got := stttest.Results(res.Down())
	if len(got) != 1 || !strings.HasPrefix(got[0], "final ¿Hola, cómo estás? [es]") || !strings.HasSuffix(got[0], "(finalized)") {
		t.Errorf("results %q; want the Spanish result, finalized by speech_final", got)
	}
	if q := f.queries[0].Get("language"); q != "multi" {
		t.Errorf("language parameter %q", q)
	}
}

func TestReconnectsAfterNET0001(t *testing.T) {
	f := newFake(t, "net0001.ws", "hello.ws")
	s := service(f, Options{})
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	res.Task.QueueFrames(stttest.AudioFrames(5)...)
	waitUntil(t, "a second connection", func() bool { return f.connections() == 2 })
	res.Task.QueueFrames(stttest.AudioFrames(25)...)
	res.Task.QueueFrame(&frames.VADUserStoppedSpeaking{})
	waitUntil(t, "the final result", func() bool {
		for _, r := range stttest.Results(res.Down()) {
			if strings.HasPrefix(r, "final Hello there.") {
				return true
			}
		}
		return false
	})
	res.Task.EndWhenDone()
	res.Wait()
	var errs []string
	for _, fr := range res.Up() {
		if e, ok := fr.(*frames.Error); ok {
			errs = append(errs, e.Error())
			if e.Category != frames.ErrorTransient {
				t.Errorf("error %v is not transient", e)
			}
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "deepgram: closed by the server with status 1011 (NET-0001)") {
		t.Errorf("errors %q", errs)
	}
	if got := stttest.Results(res.Down()); got[0] != "interim hel" {
		t.Errorf("the first session's result was lost: %q", got)
	}
}

func TestDATA0000IsReportedAndRetried(t *testing.T) {
	f := newFake(t, "data0000.ws", "multilingual.ws")
	res := pipelinetest.Start(t, service(f, Options{}), pipelinetest.Options{NoEnd: true})
	res.Task.QueueFrames(stttest.AudioFrames(5)...)
	waitUntil(t, "a second connection", func() bool { return f.connections() == 2 })
	res.Task.QueueFrames(stttest.AudioFrames(5)...)
	waitUntil(t, "a result", func() bool { return len(stttest.Results(res.Down())) == 1 })
	res.Task.EndWhenDone()
	res.Wait()
	found := false
	for _, fr := range res.Up() {
		if e, ok := fr.(*frames.Error); ok && strings.Contains(e.Error(), "status 1008 (DATA-0000)") {
			found = true
		}
	}
	if !found {
		t.Errorf("no DATA-0000 error upstream: %v", res.Up())
	}
}

func TestHandshakeRefusals(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		permanent bool
		want      string
	}{
		{"bad key", 401, "error_401.json", true, "deepgram: connection refused: HTTP 401 Unauthorized: Invalid credentials. (INVALID_AUTH) [request req-0]"},
		{"bad model", 400, "error_400_model.json", true, "HTTP 400 Bad Request: No such model/language/tier combination found."},
		{"no body", 403, "", true, "HTTP 403 Forbidden: refused by the fake [request req-0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			if tc.body != "" {
				b, err := os.ReadFile("testdata/" + tc.body)
				if err != nil {
					t.Fatal(err)
				}
				body = string(b)
			}
			f := newFake(t, "hello.ws")
			f.reject = func(int) (int, string) { return tc.status, body }
			_, err := New(Options{URL: f.url(), APIKey: "bad"}).Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
			var c frames.Categorizer
			if !errors.As(err, &c) || (c.Category() == frames.ErrorPermanent) != tc.permanent {
				t.Errorf("category %v", c)
			}
		})
	}
}

func TestRateLimitedHandshakeIsRetried(t *testing.T) {
	body, _ := os.ReadFile("testdata/error_429.json")
	f := newFake(t, "multilingual.ws")
	f.reject = func(n int) (int, string) {
		if n < 2 {
			return 429, string(body)
		}
		return 0, ""
	}
	res := pipelinetest.Start(t, service(f, Options{}), pipelinetest.Options{NoEnd: true})
	res.Task.QueueFrames(stttest.AudioFrames(5)...)
	waitUntil(t, "a result", func() bool { return len(stttest.Results(res.Down())) == 1 })
	res.Task.EndWhenDone()
	res.Wait()
	if f.connections() != 3 {
		t.Errorf("%d attempts, want 3", f.connections())
	}
	var errs []string
	for _, fr := range res.Up() {
		if e, ok := fr.(*frames.Error); ok {
			errs = append(errs, e.Error())
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "HTTP 429 Too Many Requests: Too many requests. Please try again later. Concurrency limit reached for project. (TOO_MANY_REQUESTS)") {
		t.Errorf("errors %q; want one for the streak", errs)
	}
}

func TestInterruptionMidStreamKeepsTheSession(t *testing.T) {
	f := newFake(t, "hello.ws")
	res := pipelinetest.Run(t, service(f, Options{}), pipelinetest.Options{
		Send: stttest.Seq(stttest.AudioFrames(12), []frames.Frame{&frames.Interruption{}}, stttest.AudioFrames(13), []frames.Frame{&frames.VADUserStoppedSpeaking{}}),
	})
	got := stttest.Results(res.Down())
	if len(got) != 3 || !strings.HasPrefix(got[2], "final Hello there.") {
		t.Errorf("results %q", got)
	}
	if f.connections() != 1 {
		t.Errorf("%d connections, want 1", f.connections())
	}
}

func TestKeepAliveWhileIdle(t *testing.T) {
	f := newFake(t, "idle.ws")
	s := stt.NewStreaming(New(Options{URL: f.url(), APIKey: "k"}), stt.StreamingOptions{KeepAlive: 5 * time.Millisecond})
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	waitUntil(t, "a KeepAlive", func() bool {
		for _, typ := range f.textTypes() {
			if typ == "KeepAlive" {
				return true
			}
		}
		return false
	})
	res.Task.EndWhenDone()
	res.Wait()
}

func TestEmptyAudioIsNotSent(t *testing.T) {
	f := newFake(t, "hello.ws")
	f.srv.AllowPartial() // the session ends before the script's audio
	st, err := New(Options{URL: f.url()}).Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendAudio(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = st.Abort()
	waitUntil(t, "the fake to see the close", func() bool { return len(f.textTypes()) > 0 || f.connections() == 1 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.audio[0] != 0 {
		t.Errorf("%d bytes of audio for an empty send", f.audio[0])
	}
}

func TestRecvEndsWithEOFOnANormalClose(t *testing.T) {
	f := newFake(t, "hello.ws")
	st, err := New(Options{URL: f.url()}).Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	var wg sync.WaitGroup
	wg.Add(1)
	var events []stt.Event
	var recvErr error
	go func() {
		defer wg.Done()
		for {
			ev, err := st.Recv(context.Background())
			if err != nil {
				recvErr = err
				return
			}
			events = append(events, ev)
		}
	}()
	ctx := context.Background()
	for range 4 {
		if err := st.SendAudio(ctx, make([]byte, 3200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Finalize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if recvErr != io.EOF {
		t.Errorf("Recv ended with %v, want io.EOF", recvErr)
	}
	var kinds []stt.EventKind
	for _, ev := range events {
		kinds = append(kinds, ev.Kind)
	}
	want := []stt.EventKind{stt.EventSpeechStarted, stt.EventInterim, stt.EventInterim, stt.EventFinal, stt.EventFinal, stt.EventUtteranceEnd}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
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

// FuzzMessage: any server message parses to an event, nothing, or an
// error; never a panic.
func FuzzMessage(f *testing.F) {
	for _, name := range []string{"hello.ws", "multilingual.ws"} {
		for _, st := range wsfake.Load(f, "testdata/"+name).Steps {
			if st.Kind == wsfake.Send {
				f.Add([]byte(st.Text))
			}
		}
	}
	f.Add([]byte(`{"type":"Results","channel":{"alternatives":[]}}`))
	f.Add([]byte(`{"type":"Results","is_final":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, ok, err := parseMessage(data)
		if err != nil && ok {
			t.Fatal("an error with an event")
		}
		if ok && (ev.Kind < stt.EventInterim || ev.Kind > stt.EventUtteranceEnd) {
			t.Fatalf("event kind %d", ev.Kind)
		}
		if ok && ev.Finalized && ev.Kind != stt.EventFinal {
			t.Fatal("a finalized event that is not final")
		}
	})
}

// FuzzRefusal: any refusal body gives an error text naming the status.
func FuzzRefusal(f *testing.F) {
	for _, name := range []string{"error_401.json", "error_400_model.json", "error_429.json"} {
		b, _ := os.ReadFile("testdata/" + name)
		f.Add(b)
	}
	f.Add([]byte("<html>502</html>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		e := &HandshakeError{StatusCode: 503}
		parseRefusal(e, body)
		if !strings.HasPrefix(e.Error(), "deepgram: connection refused: HTTP 503") {
			t.Fatalf("error text %q", e.Error())
		}
	})
}

func BenchmarkParseResults(b *testing.B) {
	var msg []byte
	for _, st := range wsfake.Load(b, "testdata/hello.ws").Steps {
		if st.Kind == wsfake.Send && strings.Contains(st.Text, `"is_final":true`) {
			msg = []byte(st.Text)
			break
		}
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := parseMessage(msg); !ok || err != nil {
			b.Fatal(err)
		}
	}
}
