package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/transports/telephony/telephonytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hangUp is a request to the fake of Twilio's REST API.
type hangUp struct{ path, status, user, pass string }

// rig is the bot's server on loopback with a fake REST API, and what its
// pipelines saw.
type rig struct {
	answerURL string
	cfg       config
	hangUps   chan hangUp
	mu        sync.Mutex
	keys      []string
	said      []string
	contexts  chan *llm.Context
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{hangUps: make(chan hangUp, 4), contexts: make(chan *llm.Context, 4)}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, pass, _ := req.BasicAuth()
		_ = req.ParseForm()
		r.hangUps <- hangUp{req.Method + " " + req.URL.Path, req.PostForm.Get("Status"), user, pass}
		_, _ = w.Write([]byte(`{"status":"completed"}`))
	}))
	t.Cleanup(api.Close)
	env := map[string]string{
		"ADDR": "127.0.0.1:0", "TWILIO_AUTH_TOKEN": "the-auth-token", "TWILIO_ACCOUNT_SID": "AC0123",
		"TWILIO_REST_BASE_URL": api.URL,
	}
	r.cfg = configure(func(k string) string { return env[k] })
	if r.cfg.TTS.missing != "" {
		t.Skip("the offline bot cannot speak, so there is no greeting to hear: " + r.cfg.TTS.missing)
	}
	b := &bot{log: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), contexts: r.contexts, tap: func(f frames.Frame) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch f := f.(type) {
		case *frames.InputDTMF:
			r.keys = append(r.keys, f.Button)
		case *frames.Transcription:
			r.said = append(r.said, f.Text)
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, r.cfg, b, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case addr := <-ready:
		r.answerURL = "http://" + addr + answerPath
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return r
}

// voicedFor returns how long heard (8 kHz) is voiced, in 20 ms frames.
func voicedFor(heard []int16) time.Duration {
	var d time.Duration
	for i := 0; i+160 <= len(heard); i += 160 {
		if dsp.RMS(dsp.AppendPCM(nil, heard[i:i+160])) > 0.01 {
			d += 20 * time.Millisecond
		}
	}
	return d
}

func TestACallIsGreetedKeyedAndHungUp(t *testing.T) {
	r := newRig(t)
	res, err := telephonytest.Call(context.Background(), telephonytest.Options{
		AnswerURL: r.answerURL, AuthToken: "the-auth-token", CallSID: "CA42", DTMF: "1#",
		Quiet: 1500 * time.Millisecond, GreetingTimeout: 20 * time.Second, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The greeting is two sentences of espeak-ng: seconds of voice.
	if v := voicedFor(res.Heard); v < 2*time.Second || res.BotAudio > 30*time.Second {
		t.Errorf("heard %v voiced in %v of the bot's audio, want the greeting's seconds", v, res.BotAudio)
	}
	if len(res.KeyAnswers) != 2 || res.KeyAnswers[0] < 0 {
		t.Errorf("key answers %v, want the first key answered", res.KeyAnswers)
	}
	r.mu.Lock()
	keys := strings.Join(r.keys, "")
	r.mu.Unlock()
	if keys != "1#" {
		t.Errorf("the pipeline got keys %q, want 1#", keys)
	}
	if !res.BotHungUp {
		t.Error("the bot did not end the call on #")
	}
	select {
	case h := <-r.hangUps:
		want := hangUp{"POST /2010-04-01/Accounts/AC0123/Calls/CA42.json", "completed", "AC0123", "the-auth-token"}
		if h != want {
			t.Errorf("hang-up %+v, want %+v", h, want)
		}
	case <-time.After(10 * time.Second):
		t.Error("the call was not hung up through the REST API")
	}
	t.Logf("heard %v of the bot (%v voiced), the key answered after %v, %d marks, %d late ticks",
		res.BotAudio, voicedFor(res.Heard), res.KeyAnswers[0], res.Marks, res.LateTicks)
}

func TestAnUnsignedCallIsRefused(t *testing.T) {
	r := newRig(t)
	_, err := telephonytest.Call(context.Background(), telephonytest.Options{AnswerURL: r.answerURL})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("an unsigned webhook: %v, want 403", err)
	}
}

// say says text with espeak-ng, as 8 kHz mono.
func say(t *testing.T, text string) []int16 {
	t.Helper()
	out, err := exec.Command("espeak-ng", "--stdout", text).Output()
	if err != nil {
		t.Fatalf("espeak-ng: %v", err)
	}
	w, err := dsp.ReadWAV(bytes.NewReader(out), 0)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := dsp.NewResampler(w.SampleRate, 8000, 1, dsp.ResamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pcm := rs.Flush(rs.Resample(nil, dsp.AppendMono(nil, w.PCM, w.Channels)))
	pcm = dsp.AppendSilence(pcm, 8000, 1, 300*time.Millisecond)
	return dsp.AppendSamples(nil, pcm)
}

func TestTheCallersSpeechIsHeardAndAnswered(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng is not installed: there is no caller's speech to send")
	}
	r := newRig(t)
	if r.cfg.STT.build == nil {
		t.Skip("no speech-to-text: STT is " + r.cfg.STT.Name)
	}
	res, err := telephonytest.Call(context.Background(), telephonytest.Options{
		AnswerURL: r.answerURL, AuthToken: "the-auth-token", CallSID: "CA43", Speech: say(t, "hello there"), DTMF: "#",
		Quiet: 1500 * time.Millisecond, GreetingTimeout: 20 * time.Second, ReplyTimeout: 20 * time.Second, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	said := strings.Join(r.said, " | ")
	r.mu.Unlock()
	if said == "" {
		t.Error("the caller's speech was not transcribed")
	}
	if !res.Answered {
		t.Fatalf("the bot did not answer the speech (transcripts %q)", said)
	}
	t.Logf("transcript %q; voice-to-voice %v (speech %v-%v)", said, res.VoiceToVoice, res.SpeechStart, res.SpeechEnd)
	if res.VoiceToVoice > 5*time.Second {
		t.Errorf("voice-to-voice %v, want within 5 s", res.VoiceToVoice)
	}
	<-r.hangUps
}

func TestACallerWhoSpeaksOverTheGreetingInterruptsIt(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng is not installed: there is no caller's speech to send")
	}
	r := newRig(t)
	if r.cfg.STT.build == nil {
		t.Skip("no speech-to-text, so no VAD to hear the caller: STT is " + r.cfg.STT.Name)
	}
	res, err := telephonytest.Call(context.Background(), telephonytest.Options{
		AnswerURL: r.answerURL, AuthToken: "the-auth-token", CallSID: "CA44", Speech: say(t, "stop, please"), DTMF: "#",
		BargeIn: 1500 * time.Millisecond, Quiet: 1500 * time.Millisecond, GreetingTimeout: 20 * time.Second, ReplyTimeout: 20 * time.Second, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cleared || res.ClearAfter > 300*time.Millisecond {
		t.Errorf("cleared %v, %v after the caller started speaking; want within 300 ms", res.Cleared, res.ClearAfter)
	}
	// The context holds no more of the greeting than the caller heard:
	// its last sentence, which the caller cut off, is not in it.
	c := <-r.contexts
	var said []string
	for _, m := range c.Messages() {
		if m.Role == "assistant" {
			said = append(said, m.Content)
		}
	}
	spoken := strings.Join(said, " | ")
	if strings.Contains(spoken, "hash key") {
		t.Errorf("the context's answers %q hold the greeting's unheard end", spoken)
	}
	t.Logf("clear %v after the speech started (%v of audio dropped); the context's answers: %q", res.ClearAfter, res.Dropped, spoken)
	<-r.hangUps
}
