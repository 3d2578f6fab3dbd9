package twilio

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/telephony"
)

// phoneBot is a call's pipeline for the tests: it counts the caller's
// audio, and answers each key pressed with 300 ms of a tone and then the
// text "answered" (which the output holds until the caller heard the
// tone).
type phoneBot struct {
	mu      sync.Mutex
	audio   int
	digits  []string
	call    telephony.Call
	outlet  pipeline.Outlet
	release chan time.Time // when "answered" left the output
}

func (b *phoneBot) Setup(_ context.Context, su pipeline.Setup) error {
	su.Attach(&b.outlet)
	return nil
}

func (b *phoneBot) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.InputAudioRaw:
		b.mu.Lock()
		b.audio++
		b.mu.Unlock()
	case *frames.InputDTMF:
		b.mu.Lock()
		b.digits = append(b.digits, f.Button)
		b.mu.Unlock()
		if f.Button == "9" { // the caller barges in
			h.Push(&frames.Interruption{}, frames.Downstream)
			return nil
		}
		if f.Button == "0" { // the bot is done with the call
			h.Push(&frames.End{Reason: "goodbye"}, frames.Downstream)
			return nil
		}
		pcm := make([]byte, 2*7200) // 300 ms at 24 kHz
		for i := range 7200 {
			binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(8000*math.Sin(2*math.Pi*440*float64(i)/24000))))
		}
		h.Push(&frames.TTSAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 24000, Channels: 1}}, frames.Downstream)
		h.Push(&frames.Text{Text: "answered"}, frames.Downstream)
	}
	return nil
}

// after is the processor behind the output: it notes when "answered"
// comes out.
type after struct{ b *phoneBot }

func (a after) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if t, ok := f.(*frames.Text); ok && t.Text == "answered" {
		a.b.release <- time.Now()
	}
	return nil
}

// rig is a telephony server of Twilio streams behind its webhook, on
// loopback.
type rig struct {
	srv  *telephony.Server
	http *httptest.Server
	bots chan *phoneBot
}

func newRig(t *testing.T) *rig { return newRigWith(t, Provider{}) }

func newRigWith(t *testing.T, p Provider) *rig { return newRigOpts(t, p, telephony.Options{}) }

func newRigOpts(t *testing.T, p Provider, opts telephony.Options) *rig {
	t.Helper()
	r := &rig{bots: make(chan *phoneBot, 4)}
	opts.Logger = zap.NewNop()
	srv, err := telephony.NewServer(p, telephony.Options{
		Logger: opts.Logger, StartTimeout: opts.StartTimeout, MaxSessions: opts.MaxSessions,
		NewPipeline: func(_ context.Context, s *telephony.Session) (*pipeline.Task, error) {
			b := &phoneBot{call: s.Call(), release: make(chan time.Time, 1)}
			r.bots <- b
			return pipeline.NewTask(pipeline.New(s.Input(), b, s.Output(), after{b}), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	r.http = httptest.NewServer(mux)
	mux.Handle("POST /answer", &Webhook{Verifier: Verifier{Insecure: true}, Server: srv, StreamURL: "ws" + strings.TrimPrefix(r.http.URL, "http") + "/stream"})
	mux.Handle("GET /stream", srv)
	r.srv = srv
	t.Cleanup(func() { srv.Close(); r.http.Close() })
	return r
}

// caller plays Twilio's side of a call.
type caller struct {
	t   *testing.T
	c   *websocket.Conn
	sid string
	seq int
}

// dial does what Twilio does for an incoming call: it posts the webhook,
// reads the TwiML and opens the stream with its parameters.
func (r *rig) dial(t *testing.T, params map[string]string) *caller {
	t.Helper()
	resp, err := http.PostForm(r.http.URL+"/answer", url.Values{"From": {"+15550001"}, "To": {"+15550002"}, "CallSid": {"CA123"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer twiml
	if err := xml.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %s, %v", resp.Status, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, answer.Stream.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	k := &caller{t: t, c: c, sid: "MZ0000000000000000000000000000000a"}
	custom := map[string]string{}
	for _, p := range answer.Stream.Parameters {
		custom[p.Name] = p.Value
	}
	for k, v := range params {
		custom[k] = v
	}
	k.send(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"})
	k.send(map[string]any{"event": "start", "streamSid": k.sid, "start": map[string]any{
		"accountSid": "AC1", "streamSid": k.sid, "callSid": "CA123", "tracks": []string{"inbound"},
		"mediaFormat":      map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
		"customParameters": custom,
	}})
	return k
}

func (k *caller) send(m map[string]any) {
	k.t.Helper()
	k.seq++
	m["sequenceNumber"] = fmt.Sprint(k.seq)
	b, _ := json.Marshal(m)
	if err := k.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		k.t.Fatal(err)
	}
}

// speak sends d of a tone as the caller, at real time.
func (k *caller) speak(d time.Duration) {
	for i := range int(d / (20 * time.Millisecond)) {
		s := make([]int16, 160)
		for j := range s {
			s[j] = int16(6000 * math.Sin(2*math.Pi*300*float64(i*160+j)/8000))
		}
		k.send(map[string]any{"event": "media", "streamSid": k.sid, "media": map[string]any{
			"track": "inbound", "chunk": fmt.Sprint(i + 1), "timestamp": fmt.Sprint(i * 20),
			"payload": base64.StdEncoding.EncodeToString(dsp.AppendULaw(nil, s)),
		}})
		time.Sleep(20 * time.Millisecond)
	}
}

// out is one message from the bot.
type out struct {
	Event     string `json:"event"`
	StreamSID string `json:"streamSid"`
	Media     struct {
		Payload string `json:"payload"`
	} `json:"media"`
	Mark struct {
		Name string `json:"name"`
	} `json:"mark"`
}

func (k *caller) read(ctx context.Context) (out, error) {
	typ, b, err := k.c.Read(ctx)
	if err != nil {
		return out{}, err
	}
	var m out
	if typ != websocket.MessageText {
		return m, fmt.Errorf("a binary message from the bot")
	}
	return m, json.Unmarshal(b, &m)
}

func TestACallIsAnsweredHeardAndHungUp(t *testing.T) {
	r := newRig(t)
	k := r.dial(t, nil)
	var b *phoneBot
	select {
	case b = <-r.bots:
	case <-time.After(5 * time.Second):
		t.Fatal("no pipeline for the call")
	}
	if b.call.CallID != "CA123" || b.call.From != "+15550001" || b.call.To != "+15550002" || b.call.SampleRate != 8000 {
		t.Errorf("call %+v", b.call)
	}
	if _, ok := b.call.Parameters[telephony.TokenParameter]; ok {
		t.Error("the pipeline sees the stream's token")
	}
	k.speak(500 * time.Millisecond)
	k.send(map[string]any{"event": "dtmf", "streamSid": k.sid, "dtmf": map[string]any{"track": "inbound_track", "digit": "5"}})

	// The bot's answer: 300 ms of μ-law media, then a mark, which the
	// caller echoes once it has "played" what came before.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var media int
	var echoed time.Time
	for echoed.IsZero() {
		m, err := k.read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.StreamSID != k.sid {
			t.Fatalf("a %s message for stream %q, want %q", m.Event, m.StreamSID, k.sid)
		}
		switch m.Event {
		case "media":
			if p, err := base64.StdEncoding.DecodeString(m.Media.Payload); err != nil || len(p) != 160 {
				t.Fatalf("media payload: %d bytes, %v; want 20 ms of 8 kHz μ-law", len(p), err)
			}
			media++
		case "mark":
			select {
			case <-b.release:
				t.Fatal(`"answered" left the output before the caller's mark echo`)
			default:
			}
			time.Sleep(100 * time.Millisecond) // the caller is still listening
			k.send(map[string]any{"event": "mark", "streamSid": k.sid, "mark": map[string]any{"name": m.Mark.Name}})
			echoed = time.Now()
		}
	}
	if media < 14 || media > 16 {
		t.Errorf("%d media messages for 300 ms, want 15", media)
	}
	select {
	case at := <-b.release:
		if d := at.Sub(echoed); d < 0 || d > 100*time.Millisecond {
			t.Errorf(`"answered" came out %v after the echo, want within a few ticks`, d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal(`"answered" never came out`)
	}
	b.mu.Lock()
	if b.audio < 20 || len(b.digits) != 1 || b.digits[0] != "5" {
		t.Errorf("the bot heard %d frames and keys %v, want about 25 frames and 5", b.audio, b.digits)
	}
	b.mu.Unlock()

	k.send(map[string]any{"event": "stop", "streamSid": k.sid, "stop": map[string]any{"accountSid": "AC1", "callSid": "CA123"}})
	deadline := time.Now().Add(5 * time.Second)
	for r.srv.SessionCount() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.srv.SessionCount(); n != 0 {
		t.Errorf("%d calls left after stop", n)
	}
}

func TestAStreamWithoutTheWebhooksTokenIsRefused(t *testing.T) {
	r := newRig(t)
	k := r.dial(t, map[string]string{telephony.TokenParameter: "forged"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := k.read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusPolicyViolation {
		t.Errorf("a forged token: %v, want a close with 1008", err)
	}
	select {
	case <-r.bots:
		t.Error("a pipeline was built for a forged stream")
	default:
	}
}

func TestATokenServesOneStream(t *testing.T) {
	r := newRig(t)
	k := r.dial(t, nil)
	<-r.bots
	token := ""
	resp, err := http.PostForm(r.http.URL+"/answer", nil)
	if err != nil {
		t.Fatal(err)
	}
	var answer twiml
	_ = xml.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	for _, p := range answer.Stream.Parameters {
		if p.Name == telephony.TokenParameter {
			token = p.Value
		}
	}
	k2 := r.dial(t, map[string]string{telephony.TokenParameter: token})
	<-r.bots
	k3 := r.dial(t, map[string]string{telephony.TokenParameter: token}) // used
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := k3.read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("a used token: %v, want 1008", err)
	}
	_, _ = k, k2
}

func TestAudioBeforeTheStartEndsTheStream(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.http.URL, "http")+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	k := &caller{t: t, c: c, sid: "MZ1"}
	k.send(map[string]any{"event": "media", "streamSid": "MZ1", "media": map[string]any{"track": "inbound", "payload": "AAAA"}})
	if _, err := k.read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("audio before start: %v, want 1008", err)
	}
}

func TestAnAnswerIsTwiMLThatConnectsTheStream(t *testing.T) {
	got := string(Answer("wss://bot.example.com/stream", []Parameter{{"framewire_token", "t0k"}, {"From", "+1 & <2>"}}))
	want := xml.Header + `<Response><Connect><Stream url="wss://bot.example.com/stream">` +
		`<Parameter name="framewire_token" value="t0k"></Parameter><Parameter name="From" value="+1 &amp; &lt;2&gt;"></Parameter>` +
		`</Stream></Connect></Response>`
	if got != want {
		t.Errorf("Answer =\n%s\nwant\n%s", got, want)
	}
}

func TestAnInterruptionClearsWhatTheCallerHasNotHeard(t *testing.T) {
	r := newRig(t)
	k := r.dial(t, nil)
	b := <-r.bots
	k.send(map[string]any{"event": "dtmf", "streamSid": k.sid, "dtmf": map[string]any{"digit": "5"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if m, err := k.read(ctx); err != nil || m.Event != "media" {
		t.Fatalf("first message %+v, %v; want media", m, err)
	}
	barge := time.Now()
	k.send(map[string]any{"event": "dtmf", "streamSid": k.sid, "dtmf": map[string]any{"digit": "9"}})
	after := 0
	for {
		m, err := k.read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Event == "clear" {
			if d := time.Since(barge); d > 300*time.Millisecond {
				t.Errorf("clear came %v after the barge-in, want within 300 ms", d)
			}
			break
		}
		if m.Event == "media" {
			after++
		}
	}
	if after > 5 {
		t.Errorf("%d media messages between the barge-in and the clear", after)
	}
	select {
	case <-b.release:
		t.Error(`"answered", behind audio the caller did not hear, came out after the interruption`)
	case <-time.After(500 * time.Millisecond):
	}
}

// The shape of Twilio's "Update a Call resource" (twilio.com/docs/voice/api/call-resource#update-a-call-resource):
// POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json, form
// Status=completed, basic auth with the account SID and auth token.
func TestABotThatEndsTheCallHangsItUpThroughTheRESTAPI(t *testing.T) {
	type hangUp struct{ path, status, user, pass, contentType string }
	got := make(chan hangUp, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		_ = r.ParseForm()
		got <- hangUp{r.Method + " " + r.URL.Path, r.PostForm.Get("Status"), user, pass, r.Header.Get("Content-Type")}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"sid":"CA123","status":"completed"}`))
	}))
	defer api.Close()
	r := newRigWith(t, Provider{REST: &REST{BaseURL: api.URL, AccountSID: "AC1", AuthToken: "secret"}})
	k := r.dial(t, nil)
	<-r.bots
	go func() { // Twilio reads on, and answers the close
		for {
			if _, _, err := k.c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	k.send(map[string]any{"event": "dtmf", "streamSid": k.sid, "dtmf": map[string]any{"digit": "0"}})
	select {
	case h := <-got:
		want := hangUp{"POST /2010-04-01/Accounts/AC1/Calls/CA123.json", "completed", "AC1", "secret", "application/x-www-form-urlencoded"}
		if h != want {
			t.Errorf("hang-up request %+v, want %+v", h, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call was not hung up")
	}
}

func TestACallerWhoHungUpIsNotHungUpAgain(t *testing.T) {
	calls := make(chan struct{}, 1)
	api := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls <- struct{}{} }))
	defer api.Close()
	r := newRigWith(t, Provider{REST: &REST{BaseURL: api.URL, AccountSID: "AC1", AuthToken: "secret"}})
	k := r.dial(t, nil)
	<-r.bots
	k.send(map[string]any{"event": "stop", "streamSid": k.sid, "stop": map[string]any{}})
	deadline := time.Now().Add(5 * time.Second)
	for r.srv.SessionCount() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-calls:
		t.Error("a call the caller hung up was hung up again")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestAHangUpWithoutCredentialsSaysSo(t *testing.T) {
	t.Setenv("TWILIO_ACCOUNT_SID", "")
	t.Setenv("TWILIO_AUTH_TOKEN", "")
	if err := (&REST{}).HangUp(context.Background(), "CA1"); err != ErrNoCredentials {
		t.Errorf("HangUp = %v, want ErrNoCredentials", err)
	}
}

func TestAHangUpThatFailsReportsTheStatusNotTheBody(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"message":"secret upstream detail"}`, http.StatusNotFound)
	}))
	defer api.Close()
	err := (&REST{BaseURL: api.URL, AccountSID: "AC1", AuthToken: "t"}).HangUp(context.Background(), "CA1")
	if err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "secret upstream") {
		t.Errorf("HangUp = %v, want the status without the body", err)
	}
}

func TestAMessageForAnotherStreamEndsTheCall(t *testing.T) {
	r := newRig(t)
	k := r.dial(t, nil)
	<-r.bots
	k.send(map[string]any{"event": "dtmf", "streamSid": "MZ-someone-else", "dtmf": map[string]any{"digit": "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, err := k.read(ctx); err != nil {
			if got := websocket.CloseStatus(err); got != websocket.StatusPolicyViolation {
				t.Errorf("closed with %v, want 1008", err)
			}
			return
		}
	}
}

func TestAStreamThatDoesNotStartInTimeIsClosed(t *testing.T) {
	r := newRigOpts(t, Provider{}, telephony.Options{StartTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.http.URL, "http")+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	k := &caller{t: t, c: c}
	k.send(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"})
	start := time.Now()
	if _, err := k.read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("no start: %v, want 1008", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("closed after %v, want StartTimeout (200 ms)", d)
	}
}

func TestCallsPastMaxSessionsAreRefusedBeforeTheUpgrade(t *testing.T) {
	r := newRigOpts(t, Provider{}, telephony.Options{MaxSessions: 1})
	r.dial(t, nil)
	<-r.bots
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.http.URL, "http")+"/stream", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a second call: %v, %v; want a 503", err, resp)
	}
}
