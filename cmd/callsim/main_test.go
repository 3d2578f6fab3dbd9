package main

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/telephony"
	"github.com/framewire/framewire/transports/telephony/twilio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// beep is d of a 440 Hz tone at 24 kHz, as a TTS would send it.
func beep(d time.Duration) *frames.TTSAudioRaw {
	return &frames.TTSAudioRaw{Audio: frames.Audio{PCM: dsp.Sine(440, 0.3, 24000, d), SampleRate: 24000, Channels: 1}}
}

// beeper greets with 300 ms of a tone, answers the caller's first sound
// 200 ms after it stops with 500 ms of a tone, and each key with 200 ms.
type beeper struct {
	heard  bool
	silent time.Duration
	done   bool
}

func (b *beeper) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		h.Push(beep(300*time.Millisecond), frames.Downstream)
	case *frames.InputAudioRaw:
		if b.done {
			return nil
		}
		if dsp.RMS(f.PCM) > 0.02 {
			b.heard, b.silent = true, 0
		} else if b.heard {
			if b.silent += dsp.Duration(f.PCM, f.SampleRate, f.Channels); b.silent >= 200*time.Millisecond {
				b.done = true
				h.Push(beep(500*time.Millisecond), frames.Downstream)
			}
		}
	case *frames.InputDTMF:
		h.Push(beep(200*time.Millisecond), frames.Downstream)
	}
	return nil
}

// serveBeeper serves the beeper as a Twilio bot on loopback and returns
// its webhook's URL.
func serveBeeper(t *testing.T, authToken string) string {
	t.Helper()
	srv, err := telephony.NewServer(twilio.Provider{}, telephony.Options{
		Logger: zap.NewNop(),
		NewPipeline: func(_ context.Context, s *telephony.Session) (*pipeline.Task, error) {
			return pipeline.NewTask(pipeline.New(s.Input(), &beeper{}, s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	mux.Handle("POST /twilio/answer", &twilio.Webhook{Verifier: twilio.Verifier{AuthToken: authToken}, Server: srv,
		StreamURL: "ws" + strings.TrimPrefix(hs.URL, "http") + "/twilio/stream"})
	mux.Handle("GET /twilio/stream", srv)
	t.Cleanup(func() { _ = srv.Close(); hs.Close() })
	return hs.URL + "/twilio/answer"
}

// callerWAV writes a 44.1 kHz stereo WAV: 100 ms of silence, 700 ms of a
// 300 Hz tone, 200 ms of silence.
func callerWAV(t *testing.T) string {
	t.Helper()
	mono := dsp.AppendSilence(nil, 44100, 1, 100*time.Millisecond)
	mono = append(mono, dsp.Sine(300, 0.3, 44100, 700*time.Millisecond)...)
	mono = dsp.AppendSilence(mono, 44100, 1, 200*time.Millisecond)
	path := filepath.Join(t.TempDir(), "caller.wav")
	if err := os.WriteFile(path, dsp.AppendWAV(nil, dsp.AppendInterleaved(nil, mono, 2), 44100, 2), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func noEnv(string) string { return "" }

func TestCallsimCallsABotAndSaysWhatItHeard(t *testing.T) {
	answer := serveBeeper(t, "tok3n")
	record := filepath.Join(t.TempDir(), "bot.wav")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-answer", answer, "-auth-token", "tok3n", "-wav", callerWAV(t),
		"-dtmf", "1", "-record", record, "-quiet", "400ms"}, noEnv, &stdout, &stderr)
	t.Logf("stdout:\n%s", stdout.String())
	if code != 0 {
		t.Fatalf("callsim exited %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"bot audio heard: 1.00 s", "voice-to-voice:  ", "key 1:           answered after", "hang-up:         by the caller"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	if !strings.Contains(out, "bot said  1:") && !strings.Contains(out, "transcript:      - (build callsim with -tags pocketsphinx") {
		t.Error("the summary has neither a transcript nor why not")
	}
	if strings.Contains(out, "voice-to-voice:  -") {
		t.Error("no voice-to-voice latency")
	}
	f, err := os.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := dsp.ReadWAV(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The recording is the whole call at 8 kHz, a second of it the
	// bot's 440 Hz tone.
	if w.SampleRate != 8000 || w.Channels != 1 || w.Duration() < 2*time.Second {
		t.Errorf("the recording: %d Hz × %d, %v; want 8 kHz mono, the whole call", w.SampleRate, w.Channels, w.Duration())
	}
	var voiced []int16
	for _, u := range utterances(dsp.AppendSamples(nil, w.PCM)) {
		voiced = append(voiced, u...)
	}
	pcm := dsp.AppendPCM(nil, voiced)
	if f, _ := dsp.DominantFrequency(pcm, 8000, 1, 300, 440); f != 440 || dsp.RMS(pcm) < 0.15 {
		t.Errorf("the recording's voiced part: %v Hz at an RMS of %.3f, want the bot's 440 Hz at 0.21 (a 0.3 sine)", f, dsp.RMS(pcm))
	}
}

func TestAWAVOfAnyRateBecomesTheCallsAudio(t *testing.T) {
	pcm := dsp.AppendInterleaved(nil, dsp.Sine(300, 0.5, 48000, time.Second), 2)
	got, err := toCallAudio(dsp.WAV{SampleRate: 48000, Channels: 2, PCM: pcm})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 8000 || len(got) > 8100 { // and the filter's tail, from Flush
		t.Errorf("a second at 48 kHz became %d samples, want 8000 and a few ms", len(got))
	}
	b := dsp.AppendPCM(nil, got)
	if f, amp := dsp.DominantFrequency(b, 8000, 1, 300, 1000); f != 300 || math.Abs(amp-0.5) > 0.05 {
		t.Errorf("the tone became %v Hz at %.2f, want 300 Hz at 0.5", f, amp)
	}
	if _, err := toCallAudio(dsp.WAV{}); err == nil {
		t.Error("a WAV without a rate was taken")
	}
}

func TestCallsimExitsThreeOnAProtocolError(t *testing.T) {
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	defer hs.Close()
	mux.HandleFunc("POST /answer", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(twilio.Answer("ws"+strings.TrimPrefix(hs.URL, "http")+"/stream", nil))
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"event":"playAudio"}`))
		_, _, _ = c.Read(r.Context())
	})
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-answer", hs.URL + "/answer"}, noEnv, &stdout, &stderr); code != exitProtocol {
		t.Errorf("exit %d, want %d; stderr %s", code, exitProtocol, stderr.String())
	}
	if !strings.Contains(stderr.String(), "protocol error") {
		t.Errorf("stderr %q does not name the protocol error", stderr.String())
	}
}

func TestCallsimRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-provider", "telnyx"}, {"-dtmf", "12x"}, {"extra"}, {"-nope"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, noEnv, &stdout, &stderr); code != exitUsage {
			t.Errorf("callsim %q exited %d, want %d", args, code, exitUsage)
		}
	}
}

func TestAnUnreachableBotIsAFailure(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	hs.Close()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-answer", hs.URL + "/answer"}, noEnv, &stdout, &stderr); code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
}

func TestTheBotsUtterancesAreCutAtItsPauses(t *testing.T) {
	var heard []int16
	for _, part := range [][]byte{
		dsp.AppendSilence(nil, 8000, 1, 300*time.Millisecond), dsp.Sine(440, 0.3, 8000, 700*time.Millisecond),
		dsp.AppendSilence(nil, 8000, 1, 200*time.Millisecond), dsp.Sine(440, 0.3, 8000, 300*time.Millisecond), // a short pause: one utterance
		dsp.AppendSilence(nil, 8000, 1, 800*time.Millisecond), dsp.Sine(440, 0.3, 8000, 400*time.Millisecond),
	} {
		heard = append(heard, dsp.AppendSamples(nil, part)...)
	}
	var got []time.Duration
	for _, u := range utterances(heard) {
		got = append(got, time.Duration(len(u))*time.Second/8000)
	}
	want := []time.Duration{1200 * time.Millisecond, 400 * time.Millisecond}
	if len(got) != len(want) || got[0] < want[0]-20*time.Millisecond || got[0] > want[0]+40*time.Millisecond || got[1] != want[1] {
		t.Errorf("utterances %v, want about %v", got, want)
	}
}
