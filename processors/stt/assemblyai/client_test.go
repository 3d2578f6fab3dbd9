package assemblyai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/wsfake"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/internal/stttest"
	"github.com/framewire/framewire/processors/upstream"
)

var update = flag.Bool("update", false, "rewrite testdata/session.golden")

func service(f *fakeAssemblyAI, o Options) *stt.Streaming {
	o.BaseURL, o.APIKey = f.base(), "aai-test"
	return stt.NewStreaming(New(o), stt.StreamingOptions{
		Language: "en", ReconnectBackoff: time.Millisecond, MaxReconnectBackoff: 2 * time.Millisecond,
		// Generous: End waits for the server's close, which comes at once;
		// the default of 2 s is short for a loaded machine running -race.
		CloseTimeout: 10 * time.Second,
		Now:          func() time.Time { return time.Date(2025, 6, 12, 9, 41, 27, 315_000_000, time.UTC) },
	})
}

// errorsUp lists the error frames that went upstream.
func errorsUp(res *pipelinetest.Result) []*frames.Error {
	return pipelinetest.OfType[*frames.Error](res.Up())
}

func connect(t *testing.T, o Options) *Session {
	t.Helper()
	st, err := New(o).Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*Session)
}

// recvAll reads events until Recv fails, on a goroutine the test waits for.
type recvAll struct {
	wg     sync.WaitGroup
	events []stt.Event
	err    error
}

func startRecv(s *Session) *recvAll {
	r := &recvAll{}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			ev, err := s.Recv(context.Background())
			if err != nil {
				r.err = err
				return
			}
			r.events = append(r.events, ev)
		}
	}()
	return r
}

func TestATurnThroughTheStreamingService(t *testing.T) {
	f := newFake(t, "hello.ws")
	res := pipelinetest.Run(t, service(f, Options{}), pipelinetest.Options{
		Send: stttest.Seq(stttest.AudioFrames(25), []frames.Frame{&frames.VADUserStoppedSpeaking{}}),
	})
	want := []string{
		"interim hi",
		"interim hi my",
		"interim hi my name is sonny",
		"final Hi, my name is Sonny. [en] caller 2025-06-12T09:41:27.315+00:00 (finalized)",
	}
	if diff := cmp.Diff(want, stttest.Results(res.Down())); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ForceEndpoint", "Terminate"}, f.textTypes()); diff != "" {
		t.Errorf("control messages (-want +got):\n%s", diff)
	}
	if f.audio[0] != 25*640 {
		t.Errorf("AssemblyAI got %d bytes of audio, want %d", f.audio[0], 25*640)
	}
	if f.auth[0] != "aai-test" {
		t.Errorf("Authorization %q, want the bare key", f.auth[0])
	}
	if errs := errorsUp(res); len(errs) != 0 {
		t.Errorf("errors upstream: %v", errs)
	}
}

func TestUnformattedTurnsEndOnceWithTheDetectedLanguage(t *testing.T) {
	f := newFake(t, "unformatted.ws")
	res := pipelinetest.Run(t, service(f, Options{Model: "universal-streaming-multilingual", NoFormatTurns: true, LanguageDetection: true}),
		pipelinetest.Options{Send: stttest.AudioFrames(5)})
	want := []string{"interim hola", "final hola como estas [es] caller 2025-06-12T09:41:27.315+00:00 (finalized)"}
	if diff := cmp.Diff(want, stttest.Results(res.Down())); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	q := f.urls[0].Query()
	if q.Get("format_turns") != "false" || q.Get("language_detection") != "true" || q.Get("speech_model") != "universal-streaming-multilingual" {
		t.Errorf("query %v", q)
	}
}

func TestQueryParameters(t *testing.T) {
	c := New(Options{
		APIKey: "k", BaseURL: "wss://streaming.eu.assemblyai.com", Model: "u3-rt-pro",
		TurnDetection:     TurnDetection{EndOfTurnConfidence: 0.7, MinTurnSilence: 560 * time.Millisecond, MaxTurnSilence: 2 * time.Second},
		Keyterms:          []string{"framewire", "Pipecat Cloud"},
		InactivityTimeout: 90 * time.Second,
		Extra:             url.Values{"speaker_labels": {"true"}, "speech_model": {"whisper-rt"}},
	})
	want := url.Values{
		"speech_model": {"whisper-rt"}, "sample_rate": {"8000"}, "encoding": {"pcm_s16le"}, "format_turns": {"true"},
		"end_of_turn_confidence_threshold": {"0.7"}, "min_turn_silence": {"560"}, "max_turn_silence": {"2000"},
		"keyterms_prompt": {`["framewire","Pipecat Cloud"]`}, "inactivity_timeout": {"90"}, "speaker_labels": {"true"},
	}
	if diff := cmp.Diff(want, c.Query(stt.Format{SampleRate: 8000, Channels: 1})); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if c.URL() != "wss://streaming.eu.assemblyai.com/v3/ws" {
		t.Errorf("URL %q", c.URL())
	}
	short := New(Options{InactivityTimeout: time.Second}).Query(stt.Format{SampleRate: 16000})
	if short.Get("inactivity_timeout") != "5" {
		t.Errorf("inactivity_timeout %q, want the server's minimum of 5", short.Get("inactivity_timeout"))
	}
}

func TestBaseURLs(t *testing.T) {
	for base, want := range map[string]string{
		"wss://streaming.assemblyai.com":        "wss://streaming.assemblyai.com/v3/ws",
		"wss://streaming.assemblyai.com/":       "wss://streaming.assemblyai.com/v3/ws",
		"https://gateway.example/aai":           "wss://gateway.example/aai/v3/ws",
		"http://127.0.0.1:8080":                 "ws://127.0.0.1:8080/v3/ws",
		"streaming.eu.assemblyai.com":           "wss://streaming.eu.assemblyai.com/v3/ws",
		"ws://127.0.0.1:8080/v3/ws":             "ws://127.0.0.1:8080/v3/ws",
		"wss://proxy.example/assemblyai/v3/ws/": "wss://proxy.example/assemblyai/v3/ws",
	} {
		if got := New(Options{BaseURL: base}).URL(); got != want {
			t.Errorf("BaseURL %q: URL %q, want %q", base, got, want)
		}
	}
}

func TestTheEnvironmentFillsKeyAndBaseURL(t *testing.T) {
	t.Setenv("ASSEMBLYAI_API_KEY", "from-env")
	t.Setenv("ASSEMBLYAI_BASE_URL", "ws://127.0.0.1:9")
	c := New(Options{})
	if c.opts.APIKey != "from-env" || c.URL() != "ws://127.0.0.1:9/v3/ws" || c.Model() != DefaultModel {
		t.Errorf("key %q, URL %q, model %q", c.opts.APIKey, c.URL(), c.Model())
	}
	if c := New(Options{APIKey: "mine", BaseURL: "wss://x.example"}); c.opts.APIKey != "mine" || c.URL() != "wss://x.example/v3/ws" {
		t.Errorf("options did not win over the environment: %q %q", c.opts.APIKey, c.URL())
	}
}

// TestGoldenSession records the URL, the headers and every message of one
// session that uses each client message, against testdata/session.golden.
func TestGoldenSession(t *testing.T) {
	f := newFake(t, "golden.ws")
	s := connect(t, Options{
		BaseURL: f.base(), APIKey: "aai-golden",
		TurnDetection: TurnDetection{EndOfTurnConfidence: 0.5, MaxTurnSilence: 1500 * time.Millisecond},
		Keyterms:      []string{"framewire", "Sonny"},
	})
	defer s.Abort()
	r := startRecv(s)
	ctx := context.Background()
	for range 5 {
		if err := s.SendAudio(ctx, make([]byte, 640)); err != nil { // 100 ms in 20 ms frames
			t.Fatal(err)
		}
	}
	if err := s.SendAudio(ctx, make([]byte, 300)); err != nil { // a remainder the finalize pads
		t.Fatal(err)
	}
	if err := s.Finalize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateConfiguration(ctx, TurnDetection{MinTurnSilence: 300 * time.Millisecond, MaxTurnSilence: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepAlive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait()
	if r.err != io.EOF {
		t.Errorf("Recv ended with %v, want io.EOF", r.err)
	}
	var b strings.Builder
	u := f.urls[0]
	b.WriteString("GET " + u.Path + "?" + u.Query().Encode() + "\n")
	b.WriteString("Authorization: " + f.auth[0] + "\n")
	for _, m := range f.sent[0] {
		b.WriteString(m + "\n")
	}
	got := b.String()
	if *update {
		if err := os.WriteFile("testdata/session.golden", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/session.golden")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("session (-want +got):\n%s", diff)
	}
	if s.ID() != "9b1c2f04-5e1a-4c7e-8f43-2d0a6b7e1c55" || !s.ExpiresAt().Equal(time.Unix(1759796682, 0)) {
		t.Errorf("session id %q, expires %v", s.ID(), s.ExpiresAt())
	}
}

func TestATemporaryTokenGoesInTheQuery(t *testing.T) {
	f := newFake(t, "final.ws")
	f.srv.AllowPartial()
	s := connect(t, Options{BaseURL: f.base(), APIKey: "the-key", Token: "tmp-token"})
	_ = s.Abort()
	if f.auth[0] != "" || f.urls[0].Query().Get("token") != "tmp-token" {
		t.Errorf("Authorization %q, token %q: want only the token, in the query", f.auth[0], f.urls[0].Query().Get("token"))
	}
}

func TestRecvEndsWithEOFAfterTermination(t *testing.T) {
	f := newFake(t, "hello.ws")
	s := connect(t, Options{BaseURL: f.base()})
	defer s.Abort()
	r := startRecv(s)
	ctx := context.Background()
	for range 4 {
		if err := s.SendAudio(ctx, make([]byte, 3200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Finalize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait()
	if r.err != io.EOF {
		t.Errorf("Recv ended with %v, want io.EOF", r.err)
	}
	want := []stt.Event{
		{Kind: stt.EventSpeechStarted},
		{Kind: stt.EventInterim, Text: "hi"},
		{Kind: stt.EventInterim, Text: "hi my"},
		{Kind: stt.EventInterim, Text: "hi my name is sonny"},
		{Kind: stt.EventFinal, Text: "Hi, my name is Sonny.", Finalized: true},
	}
	if diff := cmp.Diff(want, r.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestErrorCloses runs each documented error close through the service:
// permanent ones stop it after one attempt, transient ones are reported
// once and the service reconnects.
func TestErrorCloses(t *testing.T) {
	tests := []struct {
		script    string
		permanent bool
		want      string
	}{
		{"error_1008.ws", true, "assemblyai: closed by the server with status 1008 (unauthorized connection)"},
		{"error_4001.ws", true, "status 4001 (not authorized)"},
		{"error_4002.ws", true, "status 4002 (insufficient funds)"},
		{"error_3006.ws", true, "status 3006 (input validation error)"},
		{"error_3009.ws", false, "status 3009 (too many concurrent sessions)"},
		{"error_3005.ws", false, "status 3005 (server error)"},
		{"error_3008.ws", false, "status 3008 (session expired)"},
	}
	for _, tc := range tests {
		t.Run(strings.TrimSuffix(tc.script, ".ws"), func(t *testing.T) {
			f := newFake(t, tc.script, "final.ws")
			res := pipelinetest.Start(t, service(f, Options{}), pipelinetest.Options{NoEnd: true})
			res.Task.QueueFrames(stttest.AudioFrames(5)...)
			if tc.permanent {
				waitUntil(t, "the error", func() bool { return len(errorsUp(res)) > 0 })
			} else {
				waitUntil(t, "a second connection", func() bool { return f.connections() == 2 })
				res.Task.QueueFrames(stttest.AudioFrames(5)...)
				waitUntil(t, "a final result after reconnecting", func() bool {
					got := stttest.Results(res.Down())
					return len(got) > 0 && strings.HasPrefix(got[len(got)-1], "final ")
				})
			}
			res.Task.EndWhenDone()
			res.Wait()
			errs := errorsUp(res)
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("errors %v\nwant one with %q", errs, tc.want)
			}
			if got := errs[0].Category == frames.ErrorPermanent; got != tc.permanent {
				t.Errorf("category %v", errs[0].Category)
			}
			if tc.permanent {
				if f.connections() != 1 {
					t.Errorf("%d connections; a permanent error must stop the service", f.connections())
				}
				if !strings.Contains(errs[0].Error(), "giving up") {
					t.Errorf("error %q does not say the service gave up", errs[0].Error())
				}
				return
			}
			if got := stttest.Results(res.Down()); !strings.HasPrefix(got[len(got)-1], "final Hello.") {
				t.Errorf("results %q; want the second session's turn", got)
			}
		})
	}
}

func TestAnErrorBeforeBeginFailsConnect(t *testing.T) {
	f := newFake(t, "error_1008.ws")
	_, err := New(Options{BaseURL: f.base(), APIKey: "bad"}).Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
	var ce *CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *CloseError", err)
	}
	want := CloseError{Code: 1008, Reason: "Unauthorized Connection: Invalid API key", Message: "Unauthorized Connection: Invalid API key"}
	if diff := cmp.Diff(want, *ce); diff != "" {
		t.Errorf("close error (-want +got):\n%s", diff)
	}
	if frames.CategoryOf(err) != frames.ErrorPermanent {
		t.Errorf("category %v", frames.CategoryOf(err))
	}
}

func TestCloseErrorCategories(t *testing.T) {
	permanent := map[int]bool{1008: true, 3006: true, 4000: true, 4001: true, 4002: true, 4003: true, 4100: true, 4101: true}
	for _, code := range []int{1008, 1011, 1013, 3005, 3006, 3007, 3008, 3009, 4000, 4001, 4002, 4003, 4008, 4029, 4031, 4100, 4101, 4102, 4999} {
		e := &CloseError{Code: code, Reason: "see the Error message", Message: "a long text from the server"}
		if got := e.Category() == frames.ErrorPermanent; got != permanent[code] {
			t.Errorf("%d: permanent = %v", code, got)
		}
		if strings.Contains(e.Error(), "a long text") {
			t.Errorf("%d: Error() %q carries the server's message", code, e.Error())
		}
	}
	if got := (&CloseError{Code: 4999, Reason: "Custom reason"}).Error(); got != "assemblyai: closed by the server with status 4999 (Custom reason)" {
		t.Errorf("unknown code: %q", got)
	}
}

func TestACutMidStreamReconnects(t *testing.T) {
	f := newFake(t, "cut.ws", "final.ws")
	res := pipelinetest.Start(t, service(f, Options{}), pipelinetest.Options{NoEnd: true})
	res.Task.QueueFrames(stttest.AudioFrames(5)...)
	waitUntil(t, "a second connection", func() bool { return f.connections() == 2 })
	res.Task.QueueFrames(stttest.AudioFrames(5)...)
	waitUntil(t, "the final result", func() bool { return len(stttest.Results(res.Down())) == 2 })
	res.Task.EndWhenDone()
	res.Wait()
	want := []string{"interim hel", "final Hello. [en] caller 2025-06-12T09:41:27.315+00:00 (finalized)"}
	if diff := cmp.Diff(want, stttest.Results(res.Down())); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	errs := errorsUp(res)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "stt: session failed, reconnecting: assemblyai: connection lost") || errs[0].Category != frames.ErrorTransient {
		t.Errorf("errors %v; want one transient connection lost", errs)
	}
}

func TestHandshakeRefusals(t *testing.T) {
	tests := []struct {
		status    int
		body      string
		permanent bool
		want      string
	}{
		{401, `{"error":"Invalid API key"}`, true, "assemblyai: connection refused: HTTP 401 Unauthorized: Invalid API key"},
		{403, "", true, "HTTP 403 Forbidden"},
		{429, `{"error":"Too many concurrent sessions"}`, false, "HTTP 429 Too Many Requests: Too many concurrent sessions"},
		{503, "<html>" + strings.Repeat("x", 1000) + "</html>", false, "HTTP 503 Service Unavailable: <html>xxx"},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			f := newFake(t, "final.ws")
			f.reject = func(int) (int, string) { return tc.status, tc.body }
			_, err := New(Options{BaseURL: f.base(), APIKey: "k"}).Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
			if len(err.Error()) > 300 {
				t.Errorf("error text of %d bytes: the body was not shortened", len(err.Error()))
			}
			if got := frames.CategoryOf(err) == frames.ErrorPermanent; got != tc.permanent {
				t.Errorf("category %v", frames.CategoryOf(err))
			}
		})
	}
}

func TestARateLimitedHandshakeIsRetried(t *testing.T) {
	f := newFake(t, "final.ws")
	f.reject = func(n int) (int, string) {
		if n < 2 {
			return 429, `{"error":"Too many concurrent sessions"}`
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
	if errs := errorsUp(res); len(errs) != 1 {
		t.Errorf("errors %v; want one for the streak", errs)
	}
}

func TestInterruptionMidStreamKeepsTheSession(t *testing.T) {
	f := newFake(t, "hello.ws")
	res := pipelinetest.Run(t, service(f, Options{}), pipelinetest.Options{
		Send: stttest.Seq(stttest.AudioFrames(12), []frames.Frame{&frames.Interruption{}}, stttest.AudioFrames(13), []frames.Frame{&frames.VADUserStoppedSpeaking{}}),
	})
	got := stttest.Results(res.Down())
	if len(got) != 4 || !strings.HasPrefix(got[3], "final Hi, my name is Sonny.") {
		t.Errorf("results %q", got)
	}
	if f.connections() != 1 {
		t.Errorf("%d connections, want 1", f.connections())
	}
}

func TestCancelDropsTheSocket(t *testing.T) {
	f := newFake(t, "cancel.ws")
	f.srv.AllowPartial() // Terminate never comes: that is the point
	res := pipelinetest.Start(t, service(f, Options{}), pipelinetest.Options{NoEnd: true})
	res.Task.QueueFrames(stttest.AudioFrames(5)...)
	waitUntil(t, "the interim result", func() bool { return len(stttest.Results(res.Down())) == 1 })
	res.Task.Cancel("the user hung up")
	res.Wait()
	waitUntil(t, "the fake to see the socket go", func() bool { return f.ending(0) != "" })
	if got := f.ending(0); got != "dropped" {
		t.Errorf("the connection ended with %q, want dropped", got)
	}
	for _, typ := range f.textTypes() {
		if typ == "Terminate" {
			t.Error("Cancel sent Terminate; it must drop the session at once")
		}
	}
}

func TestKeepAliveWhileIdle(t *testing.T) {
	f := newFake(t, "idle.ws")
	s := stt.NewStreaming(New(Options{BaseURL: f.base(), APIKey: "k"}), stt.StreamingOptions{KeepAlive: 5 * time.Millisecond})
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	waitUntil(t, "two KeepAlives", func() bool {
		n := 0
		for _, typ := range f.textTypes() {
			if typ == "KeepAlive" {
				n++
			}
		}
		return n >= 2 // the second comes after the first one's ping was answered
	})
	res.Task.EndWhenDone()
	res.Wait()
	if errs := errorsUp(res); len(errs) != 0 {
		t.Errorf("errors %v", errs)
	}
}

// TestAServerThatStopsAnsweringFailsTheKeepAlive: a server that opens the
// session and then reads nothing never answers the ping.
func TestAServerThatStopsAnsweringFailsTheKeepAlive(t *testing.T) {
	release := make(chan struct{})
	var handlers sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		_ = ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"Begin","id":"s-1","expires_at":1759796682}`))
		<-release
	}))
	defer srv.Close()
	defer handlers.Wait()
	defer close(release)
	s := connect(t, Options{BaseURL: srv.URL, Timeouts: upstream.Timeouts{Idle: 50 * time.Millisecond}})
	defer s.Abort()
	r := startRecv(s)
	err := s.KeepAlive(context.Background())
	if err == nil || !strings.Contains(err.Error(), "assemblyai: no answer to a ping within 50ms") || frames.CategoryOf(err) != frames.ErrorTransient {
		t.Errorf("KeepAlive = %v, want a transient timeout", err)
	}
	_ = s.Abort()
	r.wg.Wait()
}

// The first-byte bound runs from the open socket to the server's Begin
// message.
func TestNoBeginWithinTheFirstByteTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	_, err := New(Options{BaseURL: srv.URL, Timeouts: upstream.Timeouts{FirstByte: 50 * time.Millisecond}}).Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
	if err == nil || err.Error() != "assemblyai: no Begin message within 50ms" || frames.CategoryOf(err) != frames.ErrorTransient {
		t.Errorf("Connect = %v, want a transient timeout", err)
	}
}

func TestConnectRefusesWhatTheStreamCannotCarry(t *testing.T) {
	c := New(Options{BaseURL: "ws://127.0.0.1:9"})
	if _, err := c.Connect(context.Background(), stt.Format{}); err == nil || err.Error() != "assemblyai: no sample rate" {
		t.Errorf("no rate: %v", err)
	}
	if _, err := c.Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 2}); err == nil || !strings.Contains(err.Error(), "mono") {
		t.Errorf("stereo: %v", err)
	}
}

func TestAudioIsSentInChunksWithinTheServersBounds(t *testing.T) {
	f := newFake(t, "final.ws")
	f.srv.AllowPartial()
	s := connect(t, Options{BaseURL: f.base(), Chunk: 100 * time.Millisecond})
	r := startRecv(s)
	ctx := context.Background()
	if err := s.SendAudio(ctx, make([]byte, 40000)); err != nil { // 1.25 s in one frame
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil { // flushes the last 50 ms
		t.Fatal(err)
	}
	r.wg.Wait()
	_ = s.Abort()
	want := []string{"audio 3200", "audio 3200", "audio 3200"}
	if got := f.sent[0][:3]; !cmp.Equal(want, got) {
		t.Errorf("first messages %q, want %q", got, want)
	}
	if f.audio[0] != 40000 {
		t.Errorf("%d bytes of audio, want 40000", f.audio[0])
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

// serverMessages returns the messages the scripts send, as a seed corpus.
func serverMessages(tb testing.TB) [][]byte {
	var out [][]byte
	for _, name := range []string{"hello.ws", "unformatted.ws", "error_3005.ws", "error_1008.ws"} {
		for _, st := range wsfake.Load(tb, "testdata/"+name).Steps {
			if st.Kind == wsfake.Send {
				out = append(out, []byte(st.Text))
			}
		}
	}
	return out
}

// FuzzMessage: any server message parses to a kind and maybe an event, or
// to an error; never a panic, and events keep the stream's invariants.
// Whenever encoding/json reads a Turn, the scanner reads the same fields
// from it (see turnOracle).
func FuzzMessage(f *testing.F) {
	for _, m := range serverMessages(f) {
		f.Add(m, true)
	}
	f.Add([]byte(`{"type":"Turn","words":[{"text":""},null,{"text":"a","text":"b"}]}`), false)
	f.Add([]byte(`{"type":"Turn","end_of_turn":"yes"}`), true)
	f.Add([]byte(`{"type":"Tu\u0072n","transcript":"caf\u00e9 \ud83d\ude00","end_of_turn":true,"end_of_turn":false}`), false)
	f.Add([]byte(`{"error":"Unauthorized"}`), true)
	f.Add([]byte(`{"type":"Begin","id":"x","expires_at":"2025-10-07T00:24:42Z"}`), true)
	f.Add([]byte(` {"type" : "Turn" , "words" : [ { "start" : -1.5e3 , "text" : "x\"y" } ] } `), true)
	f.Fuzz(func(t *testing.T, data []byte, formatTurns bool) {
		var p parser
		kind, err := p.parse(data)
		if err != nil && kind != msgOther {
			t.Fatalf("an error with kind %d", kind)
		}
		switch kind {
		case msgTurn:
			if ev, ok := p.event(formatTurns); ok {
				if ev.Kind != stt.EventInterim && ev.Kind != stt.EventFinal {
					t.Fatalf("event kind %d", ev.Kind)
				}
				if ev.Finalized != (ev.Kind == stt.EventFinal) {
					t.Fatal("a final event that does not close the turn, or an interim one that does")
				}
				if ev.Kind == stt.EventInterim && ev.Text == "" {
					t.Fatal("an empty interim event")
				}
			}
		case msgBegin:
			if p.msg.ID == "" {
				t.Fatal("Begin without an id")
			}
			_ = p.expiresAt()
		case msgError:
			if e := p.serverError(); len(e.text) > maxServerText+len("…") {
				t.Fatalf("error text of %d bytes kept", len(e.text))
			}
		}
		want, valid, known := turnOracle(data)
		if !known {
			return
		}
		if err != nil {
			if valid {
				t.Fatalf("encoding/json reads the Turn, the scanner fails: %v", err)
			}
			return
		}
		if kind != msgTurn {
			t.Fatalf("a Turn parsed as kind %d", kind)
		}
		got := turnFields{EndOfTurn: p.endOfTurn, Formatted: p.formatted, Transcript: string(p.transcript), Words: string(p.words), Lang: string(p.lang)}
		if valid && got != want {
			t.Fatalf("scanner %+v\nencoding/json %+v", got, want)
		}
	})
}

// turnFields are what the scanner takes from a Turn.
type turnFields struct {
	EndOfTurn, Formatted    bool
	Transcript, Words, Lang string
}

// turnOracle reads a Turn with encoding/json. known is false when it is not
// one (or encoding/json rejects it, or it is not valid UTF-8, which
// encoding/json rewrites); valid is false when a field the scanner reads
// has the wrong type, or a key repeats (encoding/json keeps the last value
// even when an earlier one had the wrong type; the scanner rejects it).
func turnOracle(data []byte) (want turnFields, valid, known bool) {
	if !utf8.Valid(data) {
		return want, false, false
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil || m == nil || m["type"] != "Turn" {
		return want, false, false
	}
	valid = !repeatsKeys(data)
	str := func(v any) string {
		switch v := v.(type) {
		case nil:
		case string:
			return v
		default:
			valid = false
		}
		return ""
	}
	boolean := func(v any) bool {
		switch v := v.(type) {
		case nil:
		case bool:
			return v
		default:
			valid = false
		}
		return false
	}
	want.EndOfTurn = boolean(m["end_of_turn"])
	want.Formatted = boolean(m["turn_is_formatted"])
	want.Transcript = str(m["transcript"])
	want.Lang = str(m["language_code"])
	switch ws := m["words"].(type) {
	case nil:
	case []any:
		var texts []string
		for _, w := range ws {
			switch w := w.(type) {
			case nil:
			case map[string]any:
				if s := str(w["text"]); s != "" {
					texts = append(texts, s)
				}
			default:
				valid = false
			}
		}
		want.Words = strings.Join(texts, " ")
	default:
		valid = false
	}
	return want, valid, true
}

// repeatsKeys reports whether any object in a valid JSON text has a key
// twice.
func repeatsKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true // a value ended: a key comes next
		}
	}
}

// FuzzRefusal: any refusal body gives a short error text naming the status.
func FuzzRefusal(f *testing.F) {
	f.Add([]byte(`{"error":"Invalid API key"}`))
	f.Add([]byte(`{"message":"Forbidden"}`))
	f.Add([]byte("<html>502 Bad Gateway</html>"))
	f.Add([]byte(strings.Repeat("é", 400)))
	f.Fuzz(func(t *testing.T, body []byte) {
		e := &HandshakeError{StatusCode: 503, Message: refusalMessage(body)}
		if !strings.HasPrefix(e.Error(), "assemblyai: connection refused: HTTP 503") {
			t.Fatalf("error text %q", e.Error())
		}
		if len(e.Message) > maxRefusal+len("…") {
			t.Fatalf("message of %d bytes", len(e.Message))
		}
	})
}

// BenchmarkParseTurn measures one partial Turn message (five words) from
// bytes to event, and one final Turn.
func BenchmarkParseTurn(b *testing.B) {
	var partial, final []byte
	for _, st := range wsfake.Load(b, "testdata/hello.ws").Steps {
		if st.Kind != wsfake.Send {
			continue
		}
		switch {
		case strings.Contains(st.Text, `"turn_is_formatted":false,"end_of_turn":true`):
			partial = []byte(st.Text) // still interim: the formatted end follows
		case strings.Contains(st.Text, `"turn_is_formatted":true`):
			final = []byte(st.Text)
		}
	}
	for _, bc := range []struct {
		name string
		msg  []byte
		kind stt.EventKind
	}{{"interim", partial, stt.EventInterim}, {"final", final, stt.EventFinal}} {
		b.Run(bc.name, func(b *testing.B) {
			var p parser
			b.SetBytes(int64(len(bc.msg)))
			b.ReportAllocs()
			for b.Loop() {
				if k, err := p.parse(bc.msg); k != msgTurn || err != nil {
					b.Fatal(k, err)
				}
				if ev, ok := p.event(true); !ok || ev.Kind != bc.kind {
					b.Fatal(ev)
				}
			}
		})
	}
}

func TestFormatTurnsSetThroughExtraDecidesTheFinal(t *testing.T) {
	f := newFake(t, "unformatted.ws")
	res := pipelinetest.Run(t, service(f, Options{Extra: url.Values{"format_turns": {"false"}}}), pipelinetest.Options{Send: stttest.AudioFrames(5)})
	if got := stttest.Results(res.Down()); len(got) != 2 || !strings.HasPrefix(got[1], "final hola como estas [es]") {
		t.Errorf("results %q; want the unformatted end of turn as the final", got)
	}
}

// TestAServerThatStopsReadingFailsTheWrite: once the socket's buffers are
// full, a write the server does not take within the idle timeout fails the
// session instead of blocking the writer.
func TestAServerThatStopsReadingFailsTheWrite(t *testing.T) {
	release := make(chan struct{})
	var handlers sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		_ = ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"Begin","id":"s-1","expires_at":1759796682}`))
		<-release
	}))
	defer srv.Close()
	defer handlers.Wait()
	defer close(release)
	s := connect(t, Options{BaseURL: srv.URL, Chunk: time.Second, Timeouts: upstream.Timeouts{Idle: 250 * time.Millisecond}})
	defer s.Abort()
	second := make([]byte, 32000)
	var err error
	for i := 0; i < 10000 && err == nil; i++ { // at most 5 min of audio: far past any socket buffer
		err = s.SendAudio(context.Background(), second)
	}
	if err == nil || err.Error() != "assemblyai: the server took no data for 250ms" || frames.CategoryOf(err) != frames.ErrorTransient {
		t.Errorf("SendAudio = %v, want a transient stall", err)
	}
}

// BenchmarkSendAudio measures one 20 ms frame of the pipeline's audio
// going up: gathered into 50 ms messages and written to a loopback server
// that discards them.
func BenchmarkSendAudio(b *testing.B) {
	var handlers sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		_ = ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"Begin","id":"s-1","expires_at":1759796682}`))
		// Read without a deadline into one buffer, so that the figures are
		// the client's.
		buf := make([]byte, 4096)
		for {
			_, rd, err := ws.Reader(context.Background())
			if err != nil {
				return
			}
			for err == nil {
				_, err = rd.Read(buf)
			}
		}
	}))
	defer srv.Close()
	defer handlers.Wait()
	// A context that can end, as the session manager's: coder/websocket
	// arms a watch on it for each write.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := New(Options{BaseURL: srv.URL}).Connect(ctx, stt.Format{SampleRate: 16000, Channels: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Abort()
	frame := make([]byte, 640)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if err := st.SendAudio(ctx, frame); err != nil {
			b.Fatal(err)
		}
	}
}
