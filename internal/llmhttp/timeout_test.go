package llmhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/upstream"
)

func post(srv *llmhttptest.Server, to llmhttp.Timeouts) *llmhttp.Request {
	return &llmhttp.Request{
		Provider: "p", Client: srv.Client(), URL: srv.URL, Timeouts: to,
		Failed: func(resp *http.Response) error { resp.Body.Close(); return errors.New("failed") },
	}
}

// A zero field takes the default, a negative one stays (no bound), a set
// one is kept.
func TestTimeoutsOr(t *testing.T) {
	got := llmhttp.Timeouts{FirstByte: -1, Idle: time.Second}.Or(llmhttp.SpeechTimeouts())
	want := llmhttp.Timeouts{Connect: 10 * time.Second, FirstByte: -1, Idle: time.Second}
	if got != want {
		t.Errorf("Or = %+v, want %+v", got, want)
	}
	if l := llmhttp.LLMTimeouts(); l.Bound(llmhttp.PhaseConnect) != 10*time.Second || l.Bound(llmhttp.PhaseFirstByte) != 30*time.Second || l.Bound(llmhttp.PhaseIdle) != 30*time.Second || l.Bound(0) != 0 {
		t.Errorf("LLM bounds %+v", l)
	}
}

// Send bounds a body that is not an event stream: the first byte, then
// each read's wait.
func TestSendBoundsTheBody(t *testing.T) {
	t.Run("first byte", func(t *testing.T) {
		srv := llmhttptest.New(t, llmhttptest.Answer{ContentType: "audio/pcm", Stall: true})
		b, err := llmhttp.Send(t.Context(), post(srv, llmhttptest.ShortTimeouts))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		_, err = io.ReadAll(b)
		llmhttptest.WantTimeout(t, err, llmhttp.PhaseFirstByte, "p: no first byte within 100ms")
		llmhttptest.WaitClosed(t, srv.Closed, "request")
	})
	t.Run("idle", func(t *testing.T) {
		srv := llmhttptest.New(t, llmhttptest.Answer{ContentType: "audio/pcm", Body: []byte("some audio"), Stall: true})
		b, err := llmhttp.Send(t.Context(), post(srv, llmhttptest.ShortTimeouts))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		got, err := io.ReadAll(b)
		llmhttptest.WantTimeout(t, err, llmhttp.PhaseIdle, "p: the stream stalled: nothing received for 100ms")
		if string(got) != "some audio" {
			t.Errorf("read %q before the stall", got)
		}
		llmhttptest.WaitClosed(t, srv.Closed, "request")
	})
	t.Run("no bound", func(t *testing.T) {
		srv := llmhttptest.New(t, llmhttptest.Answer{ContentType: "audio/pcm", Body: []byte("x"), Stall: true})
		ctx, cancel := context.WithTimeout(t.Context(), 250*time.Millisecond)
		defer cancel()
		b, err := llmhttp.Send(ctx, post(srv, llmhttp.Timeouts{Idle: -1, FirstByte: 50 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		_, err = io.ReadAll(b)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want only the caller's deadline", err)
		}
	})
}

// Time the consumer spends between reads is not the server's silence;
// the first-byte bound, longer than the idle one, does not delay it.
func TestOnlyWaitingOnTheServerCounts(t *testing.T) {
	// The events come 20ms apart, so the client reads them from the
	// network in more than one read, and takes 120ms over each.
	srv := llmhttptest.New(t, llmhttptest.Answer{Body: []byte("data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n"), Gap: 20 * time.Millisecond})
	s, err := llmhttp.Open(t.Context(), post(srv, llmhttp.Timeouts{FirstByte: time.Hour, Idle: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for {
		_, _, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d events: %v", n, err)
		}
		n++
		time.Sleep(120 * time.Millisecond) // a slow consumer
	}
	if n != 4 {
		t.Errorf("%d events, want 4", n)
	}

	stall := llmhttptest.New(t, llmhttptest.Answer{Body: []byte("data: 1\n\n"), Stall: true})
	s2, err := llmhttp.Open(t.Context(), post(stall, llmhttp.Timeouts{FirstByte: time.Hour, Idle: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, _, err := s2.Next(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = s2.Next()
	llmhttptest.WantTimeout(t, err, llmhttp.PhaseIdle, "50ms")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the idle bound ran out after %v, want about 50ms", d)
	}
}

// A failed connection is transient, wrapped with the provider and URL.
func TestConnectionErrorsAreTransient(t *testing.T) {
	srv := llmhttptest.New(t, llmhttptest.Answer{})
	r := post(srv, llmhttp.Timeouts{})
	r.URL = "http://127.0.0.1:1/x"
	_, err := llmhttp.Send(t.Context(), r)
	var ce *llmhttp.ConnError
	if !errors.As(err, &ce) || llmhttptest.Category(err) != frames.ErrorTransient {
		t.Errorf("err = %v (category %v), want a transient ConnError", err, llmhttptest.Category(err))
	}
}

// The default transport, shared by the clients with one connect bound,
// bounds dialling and the TLS handshake by it, so a background dial ends
// too.
func TestTransportBoundsTheHandshake(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	tr := llmhttp.Transport(llmhttp.Timeouts{Connect: 100 * time.Millisecond})
	if again := llmhttp.Transport(llmhttp.Timeouts{Connect: 100 * time.Millisecond, Idle: time.Second}); again != tr {
		t.Error("two clients with the same connect bound got different transports")
	}
	if tr.TLSHandshakeTimeout != 125*time.Millisecond {
		t.Errorf("TLS handshake bound %v", tr.TLSHandshakeTimeout)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+srv.Addr, nil)
	start := time.Now()
	if _, err := (&http.Client{Transport: tr}).Do(req); err == nil {
		t.Fatal("a silent server answered")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %v", d)
	}
	llmhttptest.WaitClosed(t, srv.Closed, "connection")
}

// Resolve gives every client the same semantics: a zero field takes the
// default, a negative bound stays off, negative retries become none and a
// negative backoff no wait; what is set is kept.
func TestResolve(t *testing.T) {
	got := llmhttp.Resolve(upstream.HTTP{}, llmhttp.SpeechTimeouts(), 250*time.Millisecond)
	if got.Timeouts != llmhttp.SpeechTimeouts() || got.MaxRetries != upstream.DefaultMaxRetries || got.RetryBackoff != 250*time.Millisecond || got.HTTPClient == nil {
		t.Errorf("defaults %+v", got)
	}
	off := llmhttp.Resolve(upstream.HTTP{Timeouts: upstream.Timeouts{Connect: -1, FirstByte: -1, Idle: -1}, MaxRetries: -1, RetryBackoff: -1}, llmhttp.LLMTimeouts(), time.Second)
	if off.Timeouts != (upstream.Timeouts{Connect: -1, FirstByte: -1, Idle: -1}) || off.MaxRetries != 0 || off.RetryBackoff != 0 {
		t.Errorf("negative fields %+v, want the bounds off, no retries, no wait", off)
	}
	hc := &http.Client{}
	set := llmhttp.Resolve(upstream.HTTP{HTTPClient: hc, MaxRetries: 5, RetryBackoff: time.Second}, llmhttp.LLMTimeouts(), time.Millisecond)
	if set.HTTPClient != hc || set.MaxRetries != 5 || set.RetryBackoff != time.Second {
		t.Errorf("set fields %+v were not kept", set)
	}
}
