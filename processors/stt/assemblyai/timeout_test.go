package assemblyai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/stt"
	"github.com/framewire/framewire/processors/upstream"
)

// A server that accepts the TCP connection and never answers the
// websocket handshake trips the connect bound; the connection is closed.
func TestConnectTimeout(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	c := New(Options{BaseURL: "ws://" + srv.Addr, Timeouts: upstream.Timeouts{Connect: 100 * time.Millisecond}})
	_, err := c.Connect(context.Background(), stt.Format{SampleRate: 16000, Channels: 1})
	llmhttptest.WantTimeout(t, err, llmhttp.PhaseConnect, "assemblyai: timed out connecting after 100ms")
	llmhttptest.WaitClosed(t, srv.Closed, "connection")
}

// A zero bound takes the speech default, a negative one stays off (it
// used to take the default too, so no bound could be turned off).
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

// With the first-byte bound off, a Begin message that comes late still
// opens the session; with a bound shorter than its delay, it does not.
func TestNegativeFirstByteBoundIsOff(t *testing.T) {
	srv := delayedBegin(t, 150*time.Millisecond)
	f := stt.Format{SampleRate: 16000, Channels: 1}
	if _, err := New(Options{BaseURL: srv, Timeouts: upstream.Timeouts{FirstByte: 50 * time.Millisecond}}).Connect(t.Context(), f); err == nil {
		t.Fatal("a Begin later than the first-byte bound opened the session")
	}
	s, err := New(Options{BaseURL: srv, Timeouts: upstream.Timeouts{FirstByte: -1}}).Connect(t.Context(), f)
	if err != nil {
		t.Fatalf("with the bound off: %v", err)
	}
	_ = s.Abort()
}

// delayedBegin serves sessions whose Begin message comes after delay, and
// returns the server's base URL.
func delayedBegin(t *testing.T, delay time.Duration) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		_ = ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"Begin","id":"s-1","expires_at":1759796682}`))
		_, _, _ = ws.Read(r.Context())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
