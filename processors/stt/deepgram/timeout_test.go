package deepgram

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/stt/internal/stttest"
	"github.com/framewire/framewire/processors/upstream"
)

var format16k = stt.Format{SampleRate: 16000, Channels: 1}

// A server that accepts the TCP connection and never answers the
// websocket handshake trips the connect bound; the connection is closed.
func TestConnectTimeout(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	c := New(Options{URL: "ws://" + srv.Addr + "/v1/listen", Timeouts: llmhttptest.ShortTimeouts})
	_, err := c.Connect(t.Context(), format16k)
	llmhttptest.WantTimeout(t, err, llmhttp.PhaseConnect, "deepgram: timed out connecting after 100ms")
	llmhttptest.WaitClosed(t, srv.Closed, "connection")
}

// recvErr sends one piece of audio on st and returns the error Recv ends
// with, skipping events.
func recvErr(t *testing.T, st stt.Stream) error {
	t.Helper()
	if err := st.SendAudio(t.Context(), make([]byte, 640)); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Recv(t.Context()); err != nil {
			return err
		}
		// An answer came: send more, which the stalled server leaves
		// unanswered.
		if err := st.SendAudio(t.Context(), make([]byte, 640)); err != nil {
			t.Fatal(err)
		}
	}
}

// A server that takes audio and never answers it trips the first-byte
// bound: Recv ends with the timeout and the connection is closed.
func TestFirstByteTimeout(t *testing.T) {
	f := newFake(t, "silent.ws")
	st, err := New(Options{URL: f.url(), Timeouts: llmhttptest.ShortTimeouts}).Connect(t.Context(), format16k)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	llmhttptest.WantTimeout(t, recvErr(t, st), llmhttp.PhaseFirstByte, "deepgram: no first byte within 100ms")
	llmhttptest.WaitClosed(t, f.hungUp, "connection")
}

// A server that answered and then goes silent while audio keeps coming
// trips the idle bound; the connection is closed.
func TestIdleTimeout(t *testing.T) {
	f := newFake(t, "stall.ws")
	st, err := New(Options{URL: f.url(), Timeouts: llmhttptest.ShortTimeouts}).Connect(t.Context(), format16k)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	llmhttptest.WantTimeout(t, recvErr(t, st), llmhttp.PhaseIdle, "deepgram: the stream stalled: nothing received for 100ms")
	llmhttptest.WaitClosed(t, f.hungUp, "connection")
}

// A session with no audio out owes no answer: its silence, with
// keep-alives only, is not a timeout.
func TestNoAudioIsNoTimeout(t *testing.T) {
	f := newFake(t, "silent.ws")
	f.srv.AllowPartial()
	st, err := New(Options{URL: f.url(), Timeouts: llmhttptest.ShortTimeouts}).Connect(t.Context(), format16k)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	if err := st.KeepAlive(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = st.Recv(ctx)
	var te *llmhttp.TimeoutError
	if errors.As(err, &te) || ctx.Err() == nil {
		t.Errorf("Recv ended with %v before the caller's deadline, want only that deadline", err)
	}
}

// Through the streaming service, a server that goes silent is left and
// the session opens again: the turn goes on with one transient error.
func TestSilentServerReconnects(t *testing.T) {
	f := newFake(t, "stall.ws", "hello.ws")
	// The second session must not trip a bound on a loaded machine: a
	// first answer may take 5s, a stall is noticed after 300ms.
	s := service(f, Options{Timeouts: upstream.Timeouts{FirstByte: 5 * time.Second, Idle: 300 * time.Millisecond}})
	res := pipelinetest.Start(t, s, pipelinetest.Options{NoEnd: true})
	// Audio keeps coming, 20ms at a time, as from a microphone.
	for deadline := time.Now().Add(10 * time.Second); f.connections() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no second connection")
		}
		res.Task.QueueFrames(stttest.AudioFrames(1)...)
	}
	llmhttptest.WaitClosed(t, f.hungUp, "stalled connection")
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
	errs := pipelinetest.OfType[*frames.Error](res.Up())
	// The stall is noticed by the reader or by the next audio write,
	// whichever comes first ("sending audio: ..." then).
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "stt: session failed, reconnecting: ") ||
		!strings.Contains(errs[0].Error(), "deepgram: the stream stalled: nothing received for 300ms") || errs[0].Category != frames.ErrorTransient {
		t.Errorf("errors %v, want one transient stall", errs)
	}
}

// The defaults are the speech ones; a negative bound stays off.
func TestDefaultTimeouts(t *testing.T) {
	want := upstream.Timeouts{Connect: llmhttp.DefaultConnectTimeout, FirstByte: llmhttp.DefaultSpeechFirstByteTimeout, Idle: llmhttp.DefaultSpeechIdleTimeout}
	if got := New(Options{}).opts.Timeouts; got != want {
		t.Errorf("timeouts %+v, want %+v", got, want)
	}
	off := upstream.Timeouts{Connect: -1, FirstByte: -1, Idle: -1}
	if got := New(Options{Timeouts: off}).opts.Timeouts; got != off {
		t.Errorf("timeouts %+v, want %+v (negative is off)", got, off)
	}
}
