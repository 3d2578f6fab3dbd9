package openai

import (
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/upstream"
)

// A server that accepts the connection and never completes the TLS
// handshake trips the connect bound; the connection is closed.
func TestConnectTimeout(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	c := New(Options{BaseURL: "https://" + srv.Addr, APIKey: "k", HTTP: upstream.HTTP{Timeouts: llmhttptest.ShortTimeouts}})
	_, err := c.Transcribe(t.Context(), utterance())
	llmhttptest.WantTimeout(t, err, llmhttp.PhaseConnect, "openai stt: timed out connecting after 100ms")
	llmhttptest.WaitClosed(t, srv.Closed, "connection")
}

// A server that takes the upload and never answers, or sends the headers
// and then nothing, trips the first-byte bound; the request is closed and
// not retried.
func TestFirstByteTimeout(t *testing.T) {
	for name, a := range map[string]llmhttptest.Answer{
		"no headers":   {Hang: true},
		"headers only": {ContentType: "application/json", Stall: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmhttptest.New(t, a)
			c := New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{HTTPClient: srv.Client(), Timeouts: llmhttptest.ShortTimeouts}})
			_, err := c.Transcribe(t.Context(), utterance())
			llmhttptest.WantTimeout(t, err, llmhttp.PhaseFirstByte, "openai stt: no first byte within 100ms")
			llmhttptest.WaitClosed(t, srv.Closed, "request")
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a timeout was retried", n)
			}
		})
	}
}

// An answer that stops coming halfway trips the idle bound; the request
// is closed.
func TestIdleTimeout(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{ContentType: "application/json", Body: []byte(`{"text":"Hello fr`), Stall: true})
	c := New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{HTTPClient: srv.Client(), Timeouts: llmhttptest.ShortTimeouts}})
	_, err := c.Transcribe(t.Context(), utterance())
	llmhttptest.WantTimeout(t, err, llmhttp.PhaseIdle, "openai stt: the stream stalled: nothing received for 100ms")
	llmhttptest.WaitClosed(t, srv.Closed, "request")
}

// The defaults are the speech ones: 10s to connect, 10s to the first byte
// of the answer, 20s between reads.
func TestDefaultTimeouts(t *testing.T) {
	want := upstream.Timeouts{Connect: llmhttp.DefaultConnectTimeout, FirstByte: llmhttp.DefaultSpeechFirstByteTimeout, Idle: llmhttp.DefaultSpeechIdleTimeout}
	if got := New(Options{}).opts.Timeouts; got != want {
		t.Errorf("timeouts %+v, want %+v", got, want)
	}
	off := upstream.Timeouts{Connect: -1, FirstByte: -1, Idle: -1}
	if got := New(Options{HTTP: upstream.HTTP{Timeouts: off}}).opts.Timeouts; got != off {
		t.Errorf("timeouts %+v, want %+v (negative is off)", got, off)
	}
}

// Through the segmented service, a silent server ends the utterance with
// an error frame that names the bound, instead of holding the turn.
func TestSilentServerThroughTheSegmentedService(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{Hang: true})
	c := New(Options{BaseURL: srv.URL, HTTP: upstream.HTTP{HTTPClient: srv.Client(), Timeouts: llmhttptest.ShortTimeouts}})
	s := stt.NewSegmented(c, stt.SegmentedOptions{})
	send := []frames.Frame{&frames.VADUserStartedSpeaking{}}
	tone := dsp.Tone{Freq: 300, Amplitude: 0.3, SampleRate: 16000}
	for range 25 {
		send = append(send, &frames.InputAudioRaw{Audio: frames.Audio{PCM: tone.Append(nil, 320), SampleRate: 16000, Channels: 1}, UserID: "u1"})
	}
	send = append(send, &frames.VADUserStoppedSpeaking{})
	start := time.Now()
	res := pipelinetest.Run(t, s, pipelinetest.Options{Send: send})
	errs := pipelinetest.OfType[*frames.Error](res.Up())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "openai stt: no first byte within 100ms") {
		t.Errorf("errors %v, want one naming the first-byte bound", errs)
	}
	t.Logf("the utterance failed after %v", time.Since(start))
	llmhttptest.WaitClosed(t, srv.Closed, "request")
}
