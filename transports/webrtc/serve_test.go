package webrtc

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// serveTimeouts are the HTTP server's limits, for comparison.
type serveTimeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
	MaxHeaderBytes                int
}

func timeoutsOf(hs *http.Server) serveTimeouts {
	return serveTimeouts{hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes}
}

func TestServeOptionsGiveProductionTimeoutsThatTheOperatorCanChange(t *testing.T) {
	srv := offlineSession(t).srv
	got := timeoutsOf(ServeOptions{}.withDefaults(srv).httpServer(new(atomic.Bool)))
	want := serveTimeouts{5 * time.Second, 15 * time.Second, 30 * time.Second, 30 * time.Second, 64 << 10}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("zero ServeOptions (-want +got):\n%s", d)
	}
	set := ServeOptions{ReadHeaderTimeout: time.Second, ReadTimeout: -1, WriteTimeout: 2 * time.Second,
		IdleTimeout: -1, MaxHeaderBytes: 4096}
	got = timeoutsOf(set.withDefaults(srv).httpServer(new(atomic.Bool)))
	want = serveTimeouts{time.Second, 0, 2 * time.Second, 0, 4096}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("operator's values, negative for none (-want +got):\n%s", d)
	}
	// An offer is answered after ICE gathering: the write timeout leaves
	// room for a longer GatherTimeout.
	srv.opts.GatherTimeout = time.Minute
	if w := (ServeOptions{}).withDefaults(srv).WriteTimeout; w != 80*time.Second {
		t.Errorf("WriteTimeout with a 1 min GatherTimeout = %v, want 80s", w)
	}
}

// served is a Serve call running on a loopback listener.
type served struct {
	url    string
	cancel context.CancelFunc
	done   chan error
}

func startServe(t *testing.T, srv *Server, opts ServeOptions) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{url: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- Serve(ctx, ln, srv, opts) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return s
}

// wait returns Serve's result, failing the test after d.
func (s *served) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(d):
		t.Fatalf("Serve did not return within %v", d)
		return nil
	}
}

func TestServeCutsOffARequestBodyDrippedSlowly(t *testing.T) {
	h := newHarness(t, Options{})
	s := startServe(t, h.srv, ServeOptions{ReadTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", s.url[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /api/offer HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	closed := make(chan struct{})
	go func() { // a byte every 100 ms: 10 s for the whole body
		defer close(closed)
		for range 99 {
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, conn) // until the server closes the connection
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection was still open after 5 s of a body dripped 1 byte / 100 ms")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the connection closed after %v, want about the 300 ms ReadTimeout", d)
	}
	conn.Close()
	<-closed
}

// endHolder is a test processor that reports the End it gets and holds it
// until release is closed (forever when release is nil).
type endHolder struct {
	got     chan struct{}
	once    sync.Once
	release chan struct{}
}

func (e *endHolder) ProcessFrame(ctx context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if _, ok := f.(*frames.End); !ok {
		return nil
	}
	e.once.Do(func() { close(e.got) })
	if e.release == nil {
		h.Consume()
		return nil
	}
	select {
	case <-e.release:
	case <-ctx.Done():
	}
	return nil
}

// holdingHarness is a harness whose sessions run Input -> endHolder ->
// Output; finished receives each task's finish reason.
func holdingHarness(t *testing.T, opts Options, hold *endHolder) (*harness, chan string) {
	finished := make(chan string, 4)
	opts.NewPipeline = func(_ context.Context, s *Session) (*pipeline.Task, error) {
		task := pipeline.NewTask(pipeline.New(s.Input(), hold, s.Output()), pipeline.TaskOptions{})
		task.OnFinished(func(reason string) { finished <- reason })
		return task, nil
	}
	return newHarness(t, opts), finished
}

// Serve's context ends as main's signal.NotifyContext does on SIGTERM.
func TestServeWhenCtxEndsRefusesNewOffersWhileRunningSessionsEndThenReturns(t *testing.T) {
	hold := &endHolder{got: make(chan struct{}), release: make(chan struct{})}
	h, finished := holdingHarness(t, Options{}, hold)
	s := startServe(t, h.srv, ServeOptions{})
	ctx := testContext(t, 30*time.Second)
	c, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: s.url + "/api/offer"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	sess, ok := h.srv.Session(c.PCID())
	if !ok {
		t.Fatal("no session for the client")
	}

	s.cancel()
	select {
	case <-hold.got:
	case <-ctx.Done():
		t.Fatal("the running session's pipeline got no End")
	}
	// While the session finishes, a new client is told to retry.
	status, hdr, body := do(t, "POST", s.url+"/api/offer", `{"sdp":"v=0","type":"offer"}`)
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "5" {
		t.Errorf("offer while shutting down: %d Retry-After %q %s, want a 503 with Retry-After 5", status, hdr.Get("Retry-After"), body)
	}
	if status, hdr, _ := do(t, "POST", s.url+"/start", `{}`); status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Errorf("/start while shutting down: %d Retry-After %q, want a 503 with Retry-After", status, hdr.Get("Retry-After"))
	}
	select {
	case err := <-s.done:
		t.Fatalf("Serve returned (%v) while a session was still ending", err)
	default:
	}
	close(hold.release)
	if err := s.wait(t, 20*time.Second); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if got := <-finished; got != "ended" {
		t.Errorf("the session's pipeline finished with %q, want ended (by its End)", got)
	}
	if r := sess.Reason(); r != "pipeline ended" {
		t.Errorf("session ended because %q, want pipeline ended", r)
	}
	if _, err := c.Next(ctx, isType("peerLeft")); err != nil {
		t.Errorf("the client got no peerLeft: %v", err)
	}
}

func TestServeCancelsSessionsStillRunningAfterTheGrace(t *testing.T) {
	hold := &endHolder{got: make(chan struct{})} // swallows End
	h, finished := holdingHarness(t, Options{ShutdownGrace: 300 * time.Millisecond}, hold)
	s := startServe(t, h.srv, ServeOptions{})
	ctx := testContext(t, 30*time.Second)
	c, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: s.url + "/api/offer"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.cancel()
	if err := s.wait(t, 10*time.Second); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("Serve returned after %v, before the 300 ms grace", d)
	}
	select {
	case <-hold.got:
	default:
		t.Error("the session's pipeline got no End before it was cancelled")
	}
	if got := <-finished; got != "cancelled: grace period over" {
		t.Errorf("the session's pipeline finished with %q, want it cancelled after the grace", got)
	}
	if n := h.srv.SessionCount(); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

func TestServeClosesTheServerWhenTheListenerFails(t *testing.T) {
	h := newHarness(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	err = Serve(context.Background(), ln, h.srv, ServeOptions{})
	if err == nil {
		t.Fatal("Serve on a closed listener returned nil")
	}
	if status, _, _ := do(t, "POST", h.url("/start"), `{}`); status != http.StatusServiceUnavailable {
		t.Errorf("/start after Serve failed: %d, want 503 (the server is closed)", status)
	}
}

// stopper records how Serve stopped it.
type stopper struct {
	shutdowns, closes atomic.Int32
	fail              bool
}

func (s *stopper) Shutdown(context.Context) error {
	s.shutdowns.Add(1)
	if s.fail {
		return context.DeadlineExceeded
	}
	return nil
}

func (s *stopper) Close() error { s.closes.Add(1); return nil }

func TestServeShutsDownTheServersMountedBesideItsOwn(t *testing.T) {
	srv, err := NewServer(Options{NewPipeline: nopFactoryForOptions})
	if err != nil {
		t.Fatal(err)
	}
	calm, stuck := &stopper{}, &stopper{fail: true}
	s := startServe(t, srv, ServeOptions{Also: []Stopper{calm, stuck}})
	s.cancel()
	if err := s.wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if calm.shutdowns.Load() != 1 || calm.closes.Load() != 0 {
		t.Errorf("a server that shut down in time: %d shutdowns, %d closes; want 1 and 0", calm.shutdowns.Load(), calm.closes.Load())
	}
	if stuck.shutdowns.Load() != 1 || stuck.closes.Load() != 1 {
		t.Errorf("a server that did not: %d shutdowns, %d closes; want 1 and 1", stuck.shutdowns.Load(), stuck.closes.Load())
	}
}
