package websocket

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/metricstest"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/websocket/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The browser client's startBotAndConnect posts its requestData and hands
// the answer to connect as its parameters, which must be {wsUrl} alone.
func TestConnectAnswersOnlyTheSocketURLAndTheSessionGetsTheRequestData(t *testing.T) {
	data := make(chan json.RawMessage, 1)
	h := newHarness(t, echoOptions(nil, data))
	resp := post(t, h, "/connect", `{"user":"ada"}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/connect: %s", resp.Status)
	}
	var answer map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	u := answer["wsUrl"]
	if len(answer) != 1 || !strings.HasPrefix(u, h.wsURL()+"?session=") {
		t.Fatalf("/connect answered %v; want only wsUrl, %s?session=...", answer, h.wsURL())
	}
	dial(t, u)
	select {
	case got := <-data:
		if string(got) != `{"user":"ada"}` {
			t.Errorf("RequestData = %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no session")
	}
	// The id is used up: a second socket with it is refused.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, r, err := websocket.Dial(ctx, u, nil)
	if err == nil || r == nil || r.StatusCode != http.StatusNotFound {
		t.Errorf("second socket with the same id: %v, %v; want a 404", err, r)
	}
}

func TestConnectUnderAPrefixAnswersTheSocketUnderIt(t *testing.T) {
	srv, err := NewServer(echoOptions(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle("/bot/", http.StripPrefix("/bot", srv))
	req, _ := http.NewRequest(http.MethodPost, "http://localhost:7860/bot/connect", strings.NewReader(`{}`))
	req.RequestURI = "/bot/connect"
	rec := &recorder{header: http.Header{}}
	mux.ServeHTTP(rec, req)
	if !strings.HasPrefix(rec.body.String(), `{"wsUrl":"ws://localhost:7860/bot/ws?session=`) {
		t.Errorf("answer %q, want the socket under /bot", rec.body.String())
	}
}

type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

func TestClientMessagesReachThePipelineInOrderAndAnswersComeBack(t *testing.T) {
	h := newHarness(t, echoOptions(nil, nil))
	c := dial(t, h.wsURL())
	var want []string
	for i := range 20 {
		msg := fmt.Sprintf(`{"label":"rtvi-ai","type":"client-message","id":"%d"}`, i)
		want = append(want, msg)
		sendMessage(t, c, msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []string
	for len(got) < len(want) {
		f, err := readFrame(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind != wire.KindMessage {
			t.Fatalf("got a %s frame, want messages only", f.Kind)
		}
		got = append(got, string(f.Data))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("echoes (-sent +got):\n%s", diff)
	}
}

func TestTheBotsAudioIsSentInRealTimeAtThePlayersRate(t *testing.T) {
	tasks := make(chan *pipeline.Task, 1)
	opts := Options{NewPipeline: func(_ context.Context, s *Session) (*pipeline.Task, error) {
		task := pipeline.NewTask(pipeline.New(s.Input(), s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()})
		tasks <- task
		return task, nil
	}}
	h := newHarness(t, opts)
	c := dial(t, h.wsURL())
	task := <-tasks
	start := time.Now()
	task.QueueFrame(ttsFrame(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n := 0
	var at500ms int
	for n < 50 {
		f, err := readFrame(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind != wire.KindAudio || f.SampleRate != 24000 || f.Channels != 1 || len(f.Audio) != 960 {
			t.Fatalf("frame %d: %s at %d Hz × %d, %d bytes; want 20 ms of 24 kHz mono", n, f.Kind, f.SampleRate, f.Channels, len(f.Audio))
		}
		n++
		if time.Since(start) < 500*time.Millisecond {
			at500ms = n
		}
	}
	elapsed := time.Since(start)
	// Real time: a second of audio takes about a second; at half time at
	// most half of it (and a frame or two) has been sent.
	if elapsed < 900*time.Millisecond || at500ms > 27 {
		t.Errorf("a second of audio took %v, %d frames in the first 500 ms; want real time", elapsed, at500ms)
	}
}

func TestTheClientsAudioBecomesTheInputFramesOfThePipeline(t *testing.T) {
	echoes := make(chan *echo, 1)
	h := newHarness(t, echoOptions(echoes, nil))
	c := dial(t, h.wsURL())
	e := <-echoes
	// What the browser sends: 512-byte frames, 16 ms at 16 kHz; a second
	// of them, at real time.
	for i := range 62 {
		sendAudio(t, c, tone(16000, 256, i*256), 16000)
		time.Sleep(16 * time.Millisecond)
	}
	waitFor(t, 5*time.Second, "49 input frames", func() bool { return len(e.frames()) >= 49 })
	for _, f := range e.frames() {
		a, ok := f.(*frames.InputAudioRaw)
		if !ok || a.Audio.SampleRate != 16000 || a.Audio.Channels != 1 || len(a.Audio.PCM) != 640 {
			t.Fatalf("frame %T %+v, want 20 ms of 16 kHz mono input audio", f, f)
		}
	}
}

func TestAudioFasterThanRealTimeIsDroppedPastMaxAhead(t *testing.T) {
	echoes := make(chan *echo, 1)
	opts := echoOptions(echoes, nil)
	opts.Input.MaxAhead = 200 * time.Millisecond
	h := newHarness(t, opts)
	c := dial(t, h.wsURL())
	e := <-echoes
	sendMessage(t, c, `{"label":"rtvi-ai","type":"client-ready"}`) // the reader runs once this is echoed
	if _, err := readFrame(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range 312 { // 5 s of audio at once
		sendAudio(t, c, tone(16000, 256, i*256), 16000)
	}
	sendMessage(t, c, `{"label":"rtvi-ai","type":"after"}`)
	if _, err := readFrame(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	got := time.Duration(len(e.frames())) * 20 * time.Millisecond
	if limit := 200*time.Millisecond + time.Since(start) + 40*time.Millisecond; got > limit {
		t.Errorf("%v of audio taken from 5 s sent at once; want at most real time plus MaxAhead (%v)", got, limit)
	}
	if h.srv.SessionCount() != 1 {
		t.Error("the session ended")
	}
	// The dropped frames are counted: all but what was taken.
	if in := e.input(); in.AudioDropped() == 0 || in.AudioDropped() > 312 {
		t.Errorf("AudioDropped = %d, want the frames past MaxAhead", in.AudioDropped())
	}
}

// closeCode reads until the server closes and returns its code.
func closeCode(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func TestBadFramesCloseTheSocketWithACodeThatSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  websocket.MessageType
		msg  []byte
		want websocket.StatusCode
	}{
		{"malformed protobuf", websocket.MessageBinary, []byte{0x12, 0x80}, CloseInvalidFrame},
		{"audio at 3 Hz", websocket.MessageBinary, wire.AppendAudio(nil, make([]byte, 64), 3, 1), CloseInvalidFrame},
		{"a text message", websocket.MessageText, []byte(`{"label":"rtvi-ai"}`), CloseUnsupportedData},
		{"over the size limit", websocket.MessageBinary, make([]byte, 2<<10), CloseMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := echoOptions(nil, nil)
			opts.MaxMessageBytes = 1 << 10
			h := newHarness(t, opts)
			c := dial(t, h.wsURL())
			if err := c.Write(context.Background(), tc.typ, tc.msg); err != nil {
				t.Fatal(err)
			}
			if got := closeCode(t, c); got != tc.want {
				t.Errorf("closed with %v, want %v", got, tc.want)
			}
			waitFor(t, 5*time.Second, "the session's end", func() bool { return h.srv.SessionCount() == 0 })
		})
	}
}

func TestHostOriginAndAuthorizeAreCheckedBeforeTheUpgrade(t *testing.T) {
	opts := echoOptions(nil, nil)
	opts.AllowOrigins = []string{"https://app.example.com"}
	opts.Authorize = func(r *http.Request) error {
		if r.URL.Query().Get("token") != "secret" {
			return fmt.Errorf("bad token")
		}
		return nil
	}
	h := newHarness(t, opts)
	for _, tc := range []struct {
		name   string
		url    string
		header http.Header
		want   int
	}{
		{"no token", h.wsURL(), nil, http.StatusUnauthorized},
		{"another origin", h.wsURL() + "?token=secret", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"a rebound host", h.wsURL() + "?token=secret", http.Header{"Host": {"evil.example"}}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			dopts := &websocket.DialOptions{HTTPHeader: tc.header}
			if host := tc.header.Get("Host"); host != "" {
				dopts.Host = host
			}
			_, resp, err := websocket.Dial(ctx, tc.url, dopts)
			if err == nil || resp == nil || resp.StatusCode != tc.want {
				t.Fatalf("dial: %v, %v; want a %d", err, resp, tc.want)
			}
			body, _ := io.ReadAll(resp.Body)
			if strings.Contains(string(body), "evil") || strings.Contains(string(body), "secret") {
				t.Errorf("the refusal reflects the request: %q", body)
			}
		})
	}
	// The allowed origin with the token gets a session.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, h.wsURL()+"?token=secret", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://app.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	if h.srv.SessionCount() > 1 {
		t.Error("a refused handshake made a session")
	}
}

func TestSessionsPastMaxSessionsAreRefusedWith503(t *testing.T) {
	opts := echoOptions(nil, nil)
	opts.MaxSessions = 2
	h := newHarness(t, opts)
	dial(t, h.wsURL())
	dial(t, h.wsURL())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, h.wsURL(), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third session: %v, %v; want a 503 with Retry-After", err, resp)
	}
}

// A client that takes nothing has its session ended within WriteTimeout
// (or the ping's timeout), and what waits for it stays bounded.
func TestAClientThatNeverReadsEndsItsSession(t *testing.T) {
	ended := make(chan SessionEvent, 1)
	opts := Options{
		WriteTimeout:     300 * time.Millisecond,
		PingInterval:     -1,
		MaxOutboundBytes: 256 << 10,
		OnSession: func(ev SessionEvent) {
			if ev.Kind == SessionEnded {
				ended <- ev
			}
		},
		NewPipeline: func(_ context.Context, s *Session) (*pipeline.Task, error) {
			go func() {
				big := []byte(`{"label":"rtvi-ai","type":"server-message","data":"` + strings.Repeat("x", 16<<10) + `"}`)
				for s.Context().Err() == nil {
					s.Send(big)
				}
			}()
			return pipeline.NewTask(pipeline.New(s.Input(), s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
		},
	}
	h := newHarness(t, opts)
	dial(t, h.wsURL()) // never read
	select {
	case ev := <-ended:
		if ev.Reason != "the client stopped reading" {
			t.Errorf("ended for %q", ev.Reason)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session of a client that never reads did not end")
	}
}

func TestAClientThatDoesNotAnswerPingsEndsItsSession(t *testing.T) {
	ended := make(chan SessionEvent, 1)
	opts := echoOptions(nil, nil)
	opts.PingInterval, opts.PingTimeout = 50*time.Millisecond, 100*time.Millisecond
	opts.OnSession = func(ev SessionEvent) {
		if ev.Kind == SessionEnded {
			ended <- ev
		}
	}
	h := newHarness(t, opts)
	dial(t, h.wsURL()) // coder/websocket answers pings only while reading
	select {
	case ev := <-ended:
		if ev.Reason != "the client stopped answering pings" {
			t.Errorf("ended for %q", ev.Reason)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end")
	}
}

func TestShutdownEndsSessionsWithGoingAway(t *testing.T) {
	h := newHarness(t, echoOptions(nil, nil))
	c := dial(t, h.wsURL())
	sendMessage(t, c, `{"label":"rtvi-ai","type":"x"}`)
	if _, err := readFrame(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.srv.Shutdown(context.Background()) }()
	if got := closeCode(t, c); got != CloseGoingAway {
		t.Errorf("closed with %v, want going away", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestMessagesPastTheRateAreRefusedToThePipeline(t *testing.T) {
	echoes := make(chan *echo, 1)
	opts := echoOptions(echoes, nil)
	opts.Inbound = transports.InboundLimits{MessagesPerSecond: 5, MessageBurst: 5}
	h := newHarness(t, opts)
	c := dial(t, h.wsURL())
	e := <-echoes
	for i := range 10 {
		sendMessage(t, c, fmt.Sprintf(`{"label":"rtvi-ai","type":"t","id":"%d"}`, i))
	}
	waitFor(t, 5*time.Second, "5 refusals", func() bool { return len(e.frames()) >= 5 })
	for _, f := range e.frames() {
		r, ok := f.(*frames.InputTransportRefused)
		if !ok || r.Message == nil || r.Answer == "" {
			t.Fatalf("frame %T %+v, want refusals with the message and an answer", f, f)
		}
	}
}

func TestServerToServerTextAndTranscriptionFramesReachThePipeline(t *testing.T) {
	echoes := make(chan *echo, 1)
	h := newHarness(t, echoOptions(echoes, nil))
	c := dial(t, h.wsURL())
	e := <-echoes
	for _, f := range []wire.Frame{
		{Kind: wire.KindText, Text: []byte("hello")},
		{Kind: wire.KindTranscription, Text: []byte("hi there"), UserID: []byte("u1"), Timestamp: []byte("2026-12-02T13:00:00Z")},
	} {
		if err := c.Write(context.Background(), websocket.MessageBinary, wire.AppendFrame(nil, &f)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "two frames", func() bool { return len(e.frames()) == 2 })
	got := e.frames()
	if tx, ok := got[0].(*frames.Text); !ok || tx.Text != "hello" {
		t.Errorf("first frame %+v, want the text", got[0])
	}
	if tr, ok := got[1].(*frames.Transcription); !ok || tr.Text != "hi there" || tr.UserID != "u1" || !tr.Finalized {
		t.Errorf("second frame %+v, want the transcription", got[1])
	}
}

// An http.Server's timeouts are for requests: a socket outlives them.
func TestASocketOutlivesTheHTTPServersTimeouts(t *testing.T) {
	srv, err := NewServer(echoOptions(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ReadTimeout, hs.Config.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond
	hs.Start()
	defer hs.Close()
	defer srv.Close()
	c := dial(t, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws")
	for i := range 4 {
		time.Sleep(100 * time.Millisecond)
		sendMessage(t, c, fmt.Sprintf(`{"label":"rtvi-ai","type":"t","id":"%d"}`, i))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := readFrame(ctx, c)
		cancel()
		if err != nil {
			t.Fatalf("after %d ms: %v", (i+1)*100, err)
		}
	}
}

func TestConnectIDsAreForgottenAfterStartTTLOrPastMaxStarts(t *testing.T) {
	srv, err := NewServer(Options{NewPipeline: echoOptions(nil, nil).NewPipeline, MaxStarts: 2, StartTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t0 := time.Unix(1000, 0)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.putStartLocked("a", json.RawMessage(`1`), t0)
	srv.putStartLocked("b", json.RawMessage(`2`), t0)
	srv.putStartLocked("c", json.RawMessage(`3`), t0) // past MaxStarts: "a" goes
	if _, ok := srv.takeStartLocked("a", t0); ok {
		t.Error(`"a" was kept past MaxStarts`)
	}
	if d, ok := srv.takeStartLocked("b", t0.Add(59*time.Second)); !ok || string(d) != "2" {
		t.Errorf(`"b" within its TTL: %s, %v`, d, ok)
	}
	if _, ok := srv.takeStartLocked("b", t0); ok {
		t.Error(`"b" was taken twice`)
	}
	if _, ok := srv.takeStartLocked("c", t0.Add(time.Minute)); ok {
		t.Error(`"c" was taken after its TTL`)
	}
}

// The transport's series carry transport="websocket", beside WebRTC's
// under the same names; a session that ends makes them exist at zero.
func TestTheTransportsMetricsCarryItsName(t *testing.T) {
	m := metricstest.NewReader(t)
	opts := echoOptions(nil, nil)
	opts.MeterProvider = m.Provider
	h := newHarness(t, opts)
	c := dial(t, h.wsURL())
	sendMessage(t, c, `{"label":"rtvi-ai","type":"x"}`)
	if _, err := readFrame(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	waitFor(t, 5*time.Second, "the session's end", func() bool { return h.srv.SessionCount() == 0 })
	for _, name := range []string{"framewire.output.late_frames", "framewire.output.underruns", "framewire.output.dropped_frames"} {
		if _, ok := m.Sums(t, name, "transport")["websocket"]; !ok {
			t.Errorf("%s has no series with transport=websocket", name)
		}
	}
	if got := m.Counts(t, "framewire.queue.high_water", "queue")["websocket.outbound"]; got != 1 {
		t.Errorf("outbound high water reported %d times, want once", got)
	}
}

func TestAPipelineThatCannotBeBuiltClosesTheSocketWithInternalError(t *testing.T) {
	h := newHarness(t, Options{NewPipeline: func(context.Context, *Session) (*pipeline.Task, error) {
		return nil, fmt.Errorf("no model configured")
	}})
	start := time.Now()
	c := dial(t, h.wsURL())
	if got := closeCode(t, c); got != CloseInternalError {
		t.Errorf("closed with %v, want internal error", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the close took %v", d)
	}
	waitFor(t, 5*time.Second, "the session's end", func() bool { return h.srv.SessionCount() == 0 })
}

func TestMaxSessionsSaysTheLimitWithItsDefault(t *testing.T) {
	for _, tc := range []struct{ set, want int }{{0, 500}, {7, 7}, {-1, -1}} {
		srv, err := NewServer(Options{NewPipeline: echoOptions(nil, nil).NewPipeline, MaxSessions: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.MaxSessions(); got != tc.want {
			t.Errorf("MaxSessions with %d set = %d, want %d", tc.set, got, tc.want)
		}
		srv.Close()
	}
}
