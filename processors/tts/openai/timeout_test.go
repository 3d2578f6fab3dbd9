package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/internal/openaiapi/openaiapitest"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/upstream"
)

// A server that accepts the connection and never completes the TLS
// handshake trips the connect bound; the connection is closed.
func TestConnectTimeout(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	c := New(Options{BaseURL: "https://" + srv.Addr, APIKey: "k", HTTP: upstream.HTTP{Timeouts: llmhttptest.ShortTimeouts}})
	_, _, _, err := collect(t.Context(), c, "Hello.")
	llmhttptest.WantTimeout(t, err, llmhttp.PhaseConnect, "openai tts: timed out connecting after 100ms")
	llmhttptest.WaitClosed(t, srv.Closed, "connection")
}

// A server that accepts the request and never answers, or sends the
// headers of an audio answer and then nothing (raw PCM, or a WAV whose
// header never comes), trips the first-byte bound; the request is closed
// and not retried.
func TestFirstByteTimeout(t *testing.T) {
	for name, a := range map[string]llmhttptest.Answer{
		"no headers":         {Hang: true},
		"pcm headers":        {ContentType: "audio/pcm", Stall: true},
		"wav headers":        {ContentType: "audio/wav", Stall: true},
		"error headers only": {ContentType: "application/json", Stall: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmhttptest.New(t, a)
			c := New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{HTTPClient: srv.Client(), Timeouts: llmhttptest.ShortTimeouts}})
			_, _, _, err := collect(t.Context(), c, "Hello.")
			llmhttptest.WantTimeout(t, err, llmhttp.PhaseFirstByte, "openai tts: no first byte within 100ms")
			llmhttptest.WaitClosed(t, srv.Closed, "request")
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a timeout was retried", n)
			}
		})
	}
}

// Audio that stops coming mid-answer trips the idle bound after the audio
// that came; the request is closed.
func TestIdleTimeout(t *testing.T) {
	pcm := openaiapitest.Fixture(t, "speech_hello.pcm")[:4000]
	srv := llmhttptest.New(t, llmhttptest.Answer{ContentType: "audio/pcm", Body: pcm, Stall: true})
	c := New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{HTTPClient: srv.Client(), Timeouts: llmhttptest.ShortTimeouts}})
	got, _, _, err := collect(t.Context(), c, "Hello.")
	llmhttptest.WantTimeout(t, err, llmhttp.PhaseIdle, "openai tts: the stream stalled: nothing received for 100ms")
	if len(got) != len(pcm) {
		t.Errorf("%d bytes of audio before the stall, want %d", len(got), len(pcm))
	}
	llmhttptest.WaitClosed(t, srv.Closed, "request")
}

// The defaults are the speech ones: 10s to connect, 10s to the first
// audio, 20s between reads.
func TestDefaultTimeouts(t *testing.T) {
	want := upstream.Timeouts{Connect: llmhttp.DefaultConnectTimeout, FirstByte: llmhttp.DefaultSpeechFirstByteTimeout, Idle: llmhttp.DefaultSpeechIdleTimeout}
	if got := New(Options{}).opts.Timeouts; got != want {
		t.Errorf("timeouts %+v, want %+v", got, want)
	}
	if got := New(Options{HTTP: upstream.HTTP{Timeouts: upstream.Timeouts{Idle: -1}}}).opts.Timeouts.Idle; got != -1 {
		t.Errorf("a disabled idle bound became %v", got)
	}
	off := upstream.Timeouts{Connect: -1, FirstByte: -1, Idle: -1}
	if got := New(Options{HTTP: upstream.HTTP{Timeouts: off}}).opts.Timeouts; got != off {
		t.Errorf("timeouts %+v, want %+v (negative is off)", got, off)
	}
}

// Through the service, a silent server ends the sentence with an error
// frame that names the bound, instead of holding the turn.
func TestSilentServerThroughTheService(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Hang: true})
	c := New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{HTTPClient: srv.Client(), Timeouts: llmhttptest.ShortTimeouts}})
	res := pipelinetest.Run(t, tts.NewService(c, tts.Options{}), pipelinetest.Options{
		Send: []frames.Frame{&frames.TTSSpeak{Text: "Hello from framewire."}},
	})
	errs := pipelinetest.OfType[*frames.Error](res.Up())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "openai tts: no first byte within 100ms") {
		t.Errorf("errors %v, want one naming the first-byte bound", errs)
	}
	var te *llmhttp.TimeoutError
	if len(errs) == 1 && !errors.As(errs[0].Err, &te) {
		t.Errorf("error frame %v does not carry the *llmhttp.TimeoutError", errs[0])
	}
	llmhttptest.WaitClosed(t, srv.Closed, "request")
}
