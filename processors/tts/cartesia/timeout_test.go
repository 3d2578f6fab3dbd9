package cartesia

import (
	"testing"
	"time"

	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/upstream"
)

// shortClient is a client of f whose bounds are 100ms each.
func shortClient(url string) *Client {
	return New(Options{URL: url, APIKey: "sk_car_test", VoiceID: "voice-1", HTTP: upstream.HTTP{RetryBackoff: time.Millisecond, Timeouts: llmhttptest.ShortTimeouts}})
}

// A server that accepts the TCP connection and never answers the
// websocket handshake trips the connect bound (not retried); the
// connection is closed.
func TestConnectTimeout(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	c := shortClient("ws://" + srv.Addr + "/tts/websocket")
	defer c.Close()
	r := run(t.Context(), c, "Hello world.", "ctx-1")
	llmhttptest.WantTimeout(t, r.Err, llmhttp.PhaseConnect, "cartesia: timed out connecting after 100ms")
	llmhttptest.WaitClosed(t, srv.Closed, "connection")
}

// A server that takes the request and never answers it trips the
// first-byte bound; the silent connection is closed, and the next request
// opens a new one.
func TestFirstByteTimeout(t *testing.T) {
	f := newFake(t, "silent.ws", "hello.ws")
	defer f.close()
	// A long idle bound: the healthy request after the timeout must not
	// trip it on a loaded machine.
	c := New(Options{URL: f.url(), APIKey: "sk_car_test", VoiceID: "voice-1",
		HTTP: upstream.HTTP{RetryBackoff: time.Millisecond, Timeouts: upstream.Timeouts{Connect: time.Second, FirstByte: 100 * time.Millisecond, Idle: 5 * time.Second}},
	})
	defer c.Close()
	r := run(t.Context(), c, "Hello world.", "ctx-1")
	llmhttptest.WantTimeout(t, r.Err, llmhttp.PhaseFirstByte, "cartesia: no first byte within 100ms")
	llmhttptest.WaitClosed(t, f.hungUp, "connection")
	if n := f.connections(); n != 1 {
		t.Errorf("%d connections: the timeout was retried", n)
	}
	if r := run(t.Context(), c, "Hello world.", "ctx-2"); r.Err != nil || len(r.Audio) != len(pcmFixture(t)) {
		t.Errorf("the next request: %d bytes, err %v", len(r.Audio), r.Err)
	}
}

// A server that stops in the middle of a generation trips the idle bound
// after the audio that came; the connection is closed.
func TestIdleTimeout(t *testing.T) {
	f := newFake(t, "stall_midstream.ws")
	defer f.close()
	c := shortClient(f.url())
	defer c.Close()
	r := run(t.Context(), c, "Hello world.", "ctx-1")
	llmhttptest.WantTimeout(t, r.Err, llmhttp.PhaseIdle, "cartesia: the stream stalled: nothing received for 100ms")
	if len(r.Audio) != 57 {
		t.Errorf("%d bytes of audio before the stall, want the first chunk's 57", len(r.Audio))
	}
	llmhttptest.WaitClosed(t, f.hungUp, "connection")
}

// On a connection that is still busy with another request, a request
// that gets no answer is cancelled alone: the connection stays open for
// the others.
func TestTimeoutOnABusyConnectionCancelsOnlyTheRequest(t *testing.T) {
	f := newFake(t, "silent.ws")
	defer f.close()
	c := shortClient(f.url())
	defer c.Close()
	if err := c.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	cn.silentFor = func() time.Duration { return 0 } // another request's messages keep coming
	r := run(t.Context(), c, "Hello world.", "ctx-1")
	llmhttptest.WantTimeout(t, r.Err, llmhttp.PhaseFirstByte, "cartesia: no first byte within 100ms")
	if cn.Dead() {
		t.Error("the busy connection was closed")
	}
}

// The defaults are the speech ones; a negative bound stays off.
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

// A consumer slower than the idle bound is not a silent server: the bound
// runs from the moment the client asks for the next message.
func TestSlowConsumerIsNotAnIdleServer(t *testing.T) {
	f := newFake(t, "hello.ws")
	defer f.close()
	c := New(Options{URL: f.url(), APIKey: "sk_car_test", VoiceID: "voice-1",
		HTTP: upstream.HTTP{RetryBackoff: time.Millisecond, Timeouts: upstream.Timeouts{Connect: time.Second, FirstByte: 5 * time.Second, Idle: 100 * time.Millisecond}},
	})
	defer c.Close()
	var audio int
	for ch, err := range c.Synthesize(t.Context(), tts.Request{Text: "Hello world.", ContextID: "ctx-1", SampleRate: 24000}) {
		if err != nil {
			t.Fatalf("after %d bytes: %v", audio, err)
		}
		audio += len(ch.Audio)
		time.Sleep(150 * time.Millisecond)
	}
	if audio != len(pcmFixture(t)) {
		t.Errorf("%d bytes, want %d", audio, len(pcmFixture(t)))
	}
}
