package telephonytest

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/telephony"
	"github.com/framewire/framewire/transports/telephony/twilio"
)

// toneBot is a tiny call pipeline: it greets with 400 ms of a tone,
// answers each utterance of the caller (voiced audio, then 300 ms of
// silence) with 600 ms of a tone, answers a key with 300 ms of a tone,
// and ends the call on "#". The caller's first voiced frame interrupts it
// (the telephony output then sends clear).
type toneBot struct {
	greet   time.Duration // default 400 ms
	mu      sync.Mutex
	digits  []string
	talking bool
	silent  time.Duration
}

func toneAudio(d time.Duration) *frames.TTSAudioRaw {
	n := int(d.Seconds() * 24000)
	pcm := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(8000*math.Sin(2*math.Pi*440*float64(i)/24000))))
	}
	return &frames.TTSAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 24000, Channels: 1}}
}

func (b *toneBot) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		h.Push(toneAudio(cmp.Or(b.greet, 400*time.Millisecond)), frames.Downstream)
	case *frames.InputAudioRaw:
		var sum float64
		n := len(f.PCM) / 2
		for i := range n {
			v := float64(int16(binary.LittleEndian.Uint16(f.PCM[2*i:])))
			sum += v * v
		}
		voicedFrame := n > 0 && math.Sqrt(sum/float64(n)) > 300
		d := time.Duration(n) * time.Second / time.Duration(f.SampleRate)
		switch {
		case voicedFrame && !b.talking:
			h.Push(&frames.Interruption{}, frames.Downstream)
			b.talking, b.silent = true, 0
		case voicedFrame:
			b.silent = 0
		case b.talking:
			if b.silent += d; b.silent >= 300*time.Millisecond {
				b.talking = false
				h.Push(toneAudio(600*time.Millisecond), frames.Downstream)
			}
		}
	case *frames.InputDTMF:
		b.mu.Lock()
		b.digits = append(b.digits, f.Button)
		b.mu.Unlock()
		if f.Button == "#" {
			h.Push(&frames.End{Reason: "the caller pressed #"}, frames.Downstream)
			return nil
		}
		h.Push(toneAudio(300*time.Millisecond), frames.Downstream)
	}
	return nil
}

// newToneBot serves the tone bot behind Twilio's webhook on loopback.
func newToneBot(t *testing.T, authToken string) (answerURL string, bots chan *toneBot) {
	return newToneBotGreeting(t, authToken, 0)
}

func newToneBotGreeting(t *testing.T, authToken string, greet time.Duration) (answerURL string, bots chan *toneBot) {
	t.Helper()
	bots = make(chan *toneBot, 4)
	srv, err := telephony.NewServer(twilio.Provider{}, telephony.Options{
		Logger: zap.NewNop(),
		NewPipeline: func(_ context.Context, s *telephony.Session) (*pipeline.Task, error) {
			b := &toneBot{greet: greet}
			bots <- b
			return pipeline.NewTask(pipeline.New(s.Input(), b, s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	v := twilio.Verifier{AuthToken: authToken, Insecure: authToken == ""}
	mux.Handle("POST /twilio/answer", &twilio.Webhook{Verifier: v, Server: srv, StreamURL: "ws" + strings.TrimPrefix(hs.URL, "http") + "/twilio/stream"})
	mux.Handle("GET /twilio/stream", srv)
	t.Cleanup(func() { _ = srv.Close(); hs.Close() })
	return hs.URL + "/twilio/answer", bots
}

func TestACallIsGreetedAnsweredAndKeyed(t *testing.T) {
	answerURL, bots := newToneBot(t, "the-auth-token")
	speech := append(tone(800*time.Millisecond, 8000), make([]int16, 1600)...) // 0.8 s of a tone, 0.2 s of silence
	res, err := Call(context.Background(), Options{
		AnswerURL: answerURL, AuthToken: "the-auth-token", Speech: speech, DTMF: "1", Quiet: time.Second,
		Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := <-bots
	b.mu.Lock()
	digits := b.digits
	b.mu.Unlock()
	if len(digits) != 1 || digits[0] != "1" {
		t.Errorf("the bot got keys %v, want [1]", digits)
	}
	// 400 ms of greeting, 600 ms of answer, 300 ms for the key.
	if res.BotAudio < 1250*time.Millisecond || res.BotAudio > 1400*time.Millisecond {
		t.Errorf("heard %v of the bot, want 1.3 s", res.BotAudio)
	}
	// The bot waits 300 ms of silence; about 0.35 s on an idle machine,
	// seconds when the machine stalls.
	if !res.Answered || res.VoiceToVoice < 300*time.Millisecond || res.VoiceToVoice > 4*time.Second {
		t.Errorf("answered %v, %v after the speech; want an answer 0.3 s after it or a little later", res.Answered, res.VoiceToVoice)
	}
	t.Logf("voice-to-voice %v (the bot waits 300 ms of silence), key answered after %v, %d media, %d marks, %d echoes",
		res.VoiceToVoice, res.KeyAnswers, res.Media, res.Marks, res.MarkEchoes)
	if len(res.KeyAnswers) != 1 || res.KeyAnswers[0] < 0 || res.KeyAnswers[0] > time.Second {
		t.Errorf("key answers %v, want one within a second", res.KeyAnswers)
	}
	if res.Marks == 0 || res.MarkEchoes != res.Marks {
		t.Errorf("%d marks, %d echoed; want each mark echoed", res.Marks, res.MarkEchoes)
	}
	if res.BotHungUp || res.Parameters["CallSid"] == "" {
		t.Errorf("bot hung up %v, parameters %v", res.BotHungUp, res.Parameters)
	}
	if _, ok := res.Parameters[telephony.TokenParameter]; !ok {
		t.Error("the TwiML's parameters lack the stream token")
	}
	if d := time.Duration(len(res.Heard)) * time.Second / 8000; d < 2*time.Second {
		t.Errorf("the recording lasts %v, want the whole call", d)
	}
}

func TestABotThatEndsTheCallIsNoted(t *testing.T) {
	answerURL, _ := newToneBot(t, "")
	res, err := Call(context.Background(), Options{AnswerURL: answerURL, DTMF: "#", Quiet: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.BotHungUp {
		t.Error("the bot ended the call, but the result does not say so")
	}
}

func TestAnUnsignedWebhookIsRefused(t *testing.T) {
	answerURL, _ := newToneBot(t, "the-auth-token")
	_, err := Call(context.Background(), Options{AnswerURL: answerURL, AuthToken: "another-token"})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a wrongly signed webhook: %v, want a 403", err)
	}
}

// fakeBot answers the webhook and sends msg on the stream.
func fakeBot(t *testing.T, msg string) string {
	t.Helper()
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	mux.HandleFunc("POST /answer", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(twilio.Answer("ws"+strings.TrimPrefix(hs.URL, "http")+"/stream", nil))
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		_ = c.Write(ctx, websocket.MessageText, []byte(msg))
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	})
	return hs.URL + "/answer"
}

func TestABotOffTheProtocolIsAProtocolError(t *testing.T) {
	sid := "MZ" + strings.Repeat("0", 31) + "1"
	for name, msg := range map[string]string{
		"an unknown event": `{"event":"play","streamSid":"` + sid + `"}`,
		"another stream":   `{"event":"clear","streamSid":"MZ2"}`,
		"bad base64":       `{"event":"media","streamSid":"` + sid + `","media":{"payload":"@@@"}}`,
		"not JSON":         `media`,
		"a nameless mark":  `{"event":"mark","streamSid":"` + sid + `","mark":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Call(context.Background(), Options{AnswerURL: fakeBot(t, msg), GreetingTimeout: time.Second})
			if !errors.Is(err, ErrProtocol) {
				t.Errorf("Call = %v, want ErrProtocol", err)
			}
		})
	}
}

func TestACallerWhoSpeaksOverTheGreetingClearsIt(t *testing.T) {
	answerURL, _ := newToneBotGreeting(t, "", 5*time.Second)
	res, err := Call(context.Background(), Options{
		AnswerURL: answerURL, Speech: tone(600*time.Millisecond, 8000), BargeIn: 500 * time.Millisecond, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cleared || res.ClearAfter > 300*time.Millisecond {
		t.Errorf("cleared %v, %v after the caller started speaking; want within 300 ms", res.Cleared, res.ClearAfter)
	}
	// The 5 s greeting stopped about when the caller spoke; the rest
	// was dropped, not played.
	if res.BotAudio > 2*time.Second || res.Dropped == 0 {
		t.Errorf("heard %v of the bot, %v dropped; want the greeting cut short", res.BotAudio, res.Dropped)
	}
	t.Logf("clear %v after the speech started; heard %v of the bot, %v dropped, %d marks echoed", res.ClearAfter, res.BotAudio, res.Dropped, res.MarkEchoes)
}
