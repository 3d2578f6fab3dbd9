package openairealtime

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
)

// errorsUp describes the error frames upstream.
func (r *rig) errorsUp() []string {
	var out []string
	for _, f := range r.res.Up() {
		if isType[*frames.Error](f) {
			out = append(out, describe(f))
		}
	}
	return out
}

// firstTimeout returns the first *llmhttp.TimeoutError upstream.
func (r *rig) firstTimeout() *llmhttp.TimeoutError {
	for _, f := range r.res.Up() {
		var te *llmhttp.TimeoutError
		if e, ok := f.(*frames.Error); ok && errors.As(e.Err, &te) {
			return te
		}
	}
	return nil
}

func (r *rig) waitTimeout(t *testing.T) *llmhttp.TimeoutError {
	t.Helper()
	waitFor(t, "a timeout error", func() bool { return r.firstTimeout() != nil })
	return r.firstTimeout()
}

// A server that takes the connection and never answers the WebSocket
// handshake trips Timeouts.Connect: the attempt fails with a transient
// timeout and the connection is closed.
func TestConnectTimeout(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	fake := newFake(t, "silent.ws") // unused: the rig needs one
	fake.srv.AllowPartial()
	r := startRig(t, fake, Options{BaseURL: "http://" + srv.Addr + "/v1", MaxReconnects: -1,
		Timeouts: Timeouts{Connect: 100 * time.Millisecond}}, nil)
	te := r.waitTimeout(t)
	if te.Phase != llmhttp.PhaseConnect || te.Error() != "openairealtime: timed out connecting after 100ms" {
		t.Errorf("timeout %v (%v), want the connect bound", te, te.Phase)
	}
	llmhttptest.WaitClosed(t, srv.Closed, "connection")
	r.end(t)
}

// A negative Timeouts.Connect waits for the handshake as long as the
// session lives.
func TestConnectTimeoutOff(t *testing.T) {
	srv := llmhttptest.NewSilent(t)
	fake := newFake(t, "silent.ws")
	fake.srv.AllowPartial()
	r := startRig(t, fake, Options{BaseURL: "http://" + srv.Addr + "/v1", MaxReconnects: -1,
		Timeouts: Timeouts{Connect: -1, FirstByte: 50 * time.Millisecond, Idle: 50 * time.Millisecond}}, nil)
	time.Sleep(300 * time.Millisecond) // six times the other bounds
	if errs := r.errorsUp(); len(errs) != 0 {
		t.Errorf("errors with the connect bound off: %q", errs)
	}
	r.end(t)
}

// A server that accepts the connection and never sends its first event
// (session.created) trips Timeouts.FirstByte: the connection is closed
// and another dialled.
func TestFirstEventTimeout(t *testing.T) {
	fake := newFake(t, "silent.ws")
	r := startRig(t, fake, Options{MaxReconnects: 1, Timeouts: Timeouts{FirstByte: 100 * time.Millisecond}}, nil)
	te := r.waitTimeout(t)
	if te.Phase != llmhttp.PhaseFirstByte || te.Error() != "openairealtime: no first byte within 100ms" {
		t.Errorf("timeout %v (%v), want the first-byte bound", te, te.Phase)
	}
	waitFor(t, "the second connection", func() bool { return fake.srv.Connections() == 2 })
	fake.srv.AllowPartial()
	r.end(t)
}

// A response.create the server never answers trips Timeouts.FirstByte:
// the request is given up, the session goes on, and the next request is
// sent and answered.
func TestResponseFirstByteTimeout(t *testing.T) {
	fake := newFake(t, "unanswered.ws")
	fake.loses = true
	r := startRig(t, fake, Options{Timeouts: Timeouts{FirstByte: 100 * time.Millisecond}}, []frames.Frame{&frames.LLMRun{}})
	te := r.waitTimeout(t)
	if te.Phase != llmhttp.PhaseFirstByte || te.Error() != "openairealtime: no first byte within 100ms" {
		t.Errorf("timeout %v (%v), want the first-byte bound", te, te.Phase)
	}
	r.res.Task.QueueFrame(&frames.LLMRun{})
	r.waitDown(t, "the answer", func(f frames.Frame) bool {
		x, ok := f.(*frames.TTSText)
		return ok && x.Text == "Here I am."
	})
	r.end(t)
	if n := fake.srv.Connections(); n != 1 {
		t.Errorf("%d connections, want the session to go on", n)
	}
}

// A session quiet for longer than the idle bound is not idle: a
// response asked for then has the first-byte bound to start. Fails
// before: the idle bound counted from the server's last event, minutes
// ago, and gave the response up at the next check.
func TestQuietSessionIsNotIdle(t *testing.T) {
	fake := newFake(t, "quiet.ws")
	var askedAt time.Time
	fake.until = map[string]func() bool{"slow": func() bool {
		if askedAt.IsZero() {
			askedAt = time.Now()
		}
		return time.Since(askedAt) > 200*time.Millisecond
	}}
	r := startRig(t, fake, Options{Timeouts: Timeouts{FirstByte: 5 * time.Second, Idle: 300 * time.Millisecond}}, nil)
	waitFor(t, "session.update", func() bool { return len(fake.sent("session.update")) == 1 })
	time.Sleep(600 * time.Millisecond) // quiet for twice the idle bound
	r.res.Task.QueueFrame(&frames.LLMRun{})
	r.waitDown(t, "the answer", func(f frames.Frame) bool {
		x, ok := f.(*frames.TTSText)
		return ok && x.Text == "Still here."
	})
	r.end(t)
	if errs := r.errorsUp(); len(errs) != 0 {
		t.Errorf("errors: %q", errs)
	}
	if n := len(fake.sent("response.cancel")); n != 0 {
		t.Errorf("%d response.cancel, want none", n)
	}
}

// A negative Timeouts.Idle is off: a response that starts and stalls is
// left to run.
func TestIdleOff(t *testing.T) {
	fake := newFake(t, "stall.ws")
	r := startRig(t, fake, Options{Timeouts: Timeouts{Idle: -1}}, nil)
	r.waitDown(t, "the response", func(f frames.Frame) bool { return isType[*frames.LLMText](f) })
	time.Sleep(300 * time.Millisecond)
	r.end(t)
	if errs := r.errorsUp(); len(errs) != 0 {
		t.Errorf("errors with the idle bound off: %q", errs)
	}
	if n := len(fake.sent("response.cancel")); n != 0 {
		t.Errorf("%d response.cancel with the idle bound off, want none", n)
	}
}

// A negative Timeouts.FirstByte is off: a response.create the server
// never answers is waited for as long as the session lives.
func TestFirstByteOff(t *testing.T) {
	fake := newFake(t, "unanswered.ws")
	fake.loses = true
	fake.srv.AllowPartial()
	r := startRig(t, fake, Options{Timeouts: Timeouts{FirstByte: -1, Idle: 50 * time.Millisecond}}, []frames.Frame{&frames.LLMRun{}})
	waitFor(t, "response.create", func() bool { return len(fake.sent("response.create")) == 1 })
	time.Sleep(300 * time.Millisecond)
	r.end(t)
	if errs := r.errorsUp(); len(errs) != 0 {
		t.Errorf("errors with the first-byte bound off: %q", errs)
	}
}

// The zero Timeouts take the speech defaults: 10s to connect, 10s to the
// first event, 20s of silence; a ping every 15s, 3 reconnects.
func TestTimeoutsDefaults(t *testing.T) {
	got := New(Options{APIKey: "k"}).opts.Timeouts
	want := Timeouts{Connect: 10 * time.Second, FirstByte: 10 * time.Second, Idle: 20 * time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	if o := New(Options{APIKey: "k"}).opts; o.PingInterval != 15*time.Second || o.MaxReconnects != 3 {
		t.Errorf("ping every %v, %d reconnects; want 15s and 3", o.PingInterval, o.MaxReconnects)
	}
	got = New(Options{APIKey: "k", Timeouts: Timeouts{Connect: -1, Idle: time.Second}}).opts.Timeouts
	want = Timeouts{Connect: -1, FirstByte: 10 * time.Second, Idle: time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("with two set (-want +got):\n%s", d)
	}
}

// connLost reports whether an error upstream says the connection was
// lost with a text holding what.
func (r *rig) connLost(what string) bool {
	for _, e := range r.errorsUp() {
		if strings.Contains(e, "openairealtime: connection lost: ") && strings.Contains(e, what) {
			return true
		}
	}
	return false
}

// A server that answers no ping within PingInterval loses the
// connection: the session ends it with a transient error.
func TestUnansweredPingEndsTheConnection(t *testing.T) {
	fake := newFake(t, "deaf.ws")
	var r *rig
	started := make(chan struct{})
	fake.until = map[string]func() bool{"the client gave up": func() bool {
		<-started
		return r.connLost("ping")
	}}
	r = startRig(t, fake, Options{PingInterval: 100 * time.Millisecond, MaxReconnects: -1}, nil)
	close(started)
	waitFor(t, "the connection lost", func() bool { return r.connLost("ping") })
	r.end(t)
}

// A server event larger than 8 MiB ends the connection instead of being
// read into memory.
func TestEventOverTheSizeBoundEndsTheConnection(t *testing.T) {
	fake := newFake(t, "big.ws")
	r := startRig(t, fake, Options{MaxReconnects: -1}, nil)
	waitFor(t, "the connection lost", func() bool { return r.connLost("message too big") })
	r.end(t)
}
