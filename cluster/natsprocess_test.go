package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	pion "github.com/pion/webrtc/v4"
)

// The tests of this file back docs/deploying.md's table of what fails:
// the NATS server is a nats-server process (Debian's, which make test
// installs) stopped and started again, and the workers and the front door
// reconnect as a deployment's do (examples/cluster's connectNATS).

// natsProcess is a nats-server process on a fixed loopback port.
type natsProcess struct {
	t    *testing.T
	bin  string
	port int
	cmd  *exec.Cmd
}

// startNATSProcess starts nats-server on a free loopback port. It skips
// the test when nats-server is not installed, and fails it then under
// make test (FRAMEWIRE_REQUIRE_DEPS).
func startNATSProcess(t *testing.T) *natsProcess {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		bin = "/usr/sbin/nats-server"
		if _, serr := os.Stat(bin); serr != nil {
			if os.Getenv("FRAMEWIRE_REQUIRE_DEPS") != "" {
				t.Fatal("nats-server is not installed (make deps-test)")
			}
			t.Skip("nats-server is not installed (make deps-test)")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	p := &natsProcess{t: t, bin: bin, port: port}
	p.start()
	t.Cleanup(p.stop)
	return p
}

func (p *natsProcess) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", p.port) }

// start runs the server and waits until it takes connections.
func (p *natsProcess) start() {
	p.t.Helper()
	p.cmd = exec.Command(p.bin, "-a", "127.0.0.1", "-p", fmt.Sprint(p.port))
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("starting nats-server: %v", err)
	}
	for deadline := time.Now().Add(wait); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p.port), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("nats-server on port %d takes no connection: %v", p.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the server and waits for it to exit.
func (p *natsProcess) stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// connectReconnecting connects as examples/cluster does, reconnecting
// every 20 ms here, up to tries times (-1: for ever).
func connectReconnecting(t testing.TB, url string, tries int) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(tries), nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectJitter(0, 0), nats.Timeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// runWorker runs a worker named id over nc until the test ends.
func runWorker(t *testing.T, nc *nats.Conn, id string) *testWorker {
	t.Helper()
	w, err := NewWorker(nc, testServer(10), WorkerOptions{ID: id, HeartbeatInterval: heartbeatEvery,
		DrainTimeout: 5 * time.Second, Logger: testLogger(t).Named(id)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tw := &testWorker{Worker: w, srv: w.Server(), nc: nc, cancel: cancel, done: make(chan error, 1)}
	go func() { tw.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-tw.done:
		case <-time.After(wait):
			t.Errorf("worker %s did not stop", id)
		}
	})
	return tw
}

// runFrontDoor serves a front door over nc until the test ends.
func runFrontDoor(t *testing.T, nc *nats.Conn) *testFrontDoor {
	t.Helper()
	f, err := NewFrontDoor(nc, FrontDoorOptions{Logger: testLogger(t).Named("frontdoor"), RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", f)
	mux.Handle("GET /healthz", f.StatusHandler())
	fd := &testFrontDoor{FrontDoor: f, http: httptest.NewServer(mux), nc: nc}
	t.Cleanup(fd.stop)
	return fd
}

// until fails the test unless cond holds within wait.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNATSServerDownKeepsTheSessionsAndAShortOutageHeals(t *testing.T) {
	srv := startNATSProcess(t)
	wnc, fnc := connectReconnecting(t, srv.url(), -1), connectReconnecting(t, srv.url(), -1)
	w := runWorker(t, wnc, "a")
	fd := runFrontDoor(t, fnc)
	fd.waitWorkers(t, "a")
	c := dial(t, fd.url("/api/offer"))
	if err := c.echo("before"); err != nil {
		t.Fatal(err)
	}

	srv.stop()
	until(t, "the front door and the worker see NATS gone", func() bool { return !fnc.IsConnected() && !wnc.IsConnected() })
	start := time.Now()
	status, _, h, err := doHeader(http.MethodPost, fd.url("/start"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("POST /start with NATS down: %d, Retry-After %q; want 503 with Retry-After", status, h.Get("Retry-After"))
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("POST /start with NATS down took %v, want an answer at once", took)
	}
	if status, _ := do(t, http.MethodGet, fd.url("/healthz"), nil); status != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz with NATS down: %d, want 503", status)
	}
	if err := c.echo("during"); err != nil {
		t.Errorf("a running session while NATS is down: %v", err)
	}

	srv.start()
	until(t, "the front door and the worker are back", func() bool { return fnc.IsConnected() && wnc.IsConnected() })
	until(t, "/healthz says 200 again", func() bool {
		status, _ := do(t, http.MethodGet, fd.url("/healthz"), nil)
		return status == http.StatusOK
	})
	select {
	case err := <-w.done:
		w.done <- err
		t.Fatalf("the worker stopped over a short NATS outage: %v", err)
	default:
	}
	if err := c.echo("after"); err != nil {
		t.Errorf("the session after the outage: %v", err)
	}
	if err := dial(t, fd.url("/api/offer")).echo("new"); err != nil {
		t.Errorf("a new session after the outage: %v", err)
	}
	// Its signalling still reaches it: a trickle PATCH is routed to its
	// worker (204), not answered 404.
	if status, _ := do(t, http.MethodPatch, fd.url("/api/offer"), c.candidates()); status != http.StatusNoContent && status != http.StatusOK {
		t.Errorf("PATCH for the session after the outage: %d, want it routed", status)
	}
}

func TestWorkerThatLosesNATSForGoodEndsItsSessionsAndStops(t *testing.T) {
	srv := startNATSProcess(t)
	wnc, fnc := connectReconnecting(t, srv.url(), 3), connectReconnecting(t, srv.url(), -1)
	w := runWorker(t, wnc, "a")
	fd := runFrontDoor(t, fnc)
	fd.waitWorkers(t, "a")
	c := dial(t, fd.url("/api/offer"))
	if err := c.echo("before"); err != nil {
		t.Fatal(err)
	}
	srv.stop()
	until(t, "the worker gives NATS up", wnc.IsClosed)
	if err := w.stopped(t); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("Run of a worker whose NATS reconnects ran out: %v, want ErrConnectionClosed", err)
	}
	c.waitEnded()
}

// childEnv names the NATS URL a re-executed test binary runs its worker
// on.
const childEnv = "FRAMEWIRE_CLUSTER_TEST_CHILD_NATS"

// TestMainWorkerProcess is not a test: it is the worker process of
// TestWorkerProcessKilledLosesOnlyItsSessions (the test binary run again
// with childEnv set): worker "a", capacity 1, until killed.
func TestMainWorkerProcess(t *testing.T) {
	url := os.Getenv(childEnv)
	if url == "" {
		t.Skip("the worker process of the kill -9 test")
	}
	nc, err := nats.Connect(url, nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorker(nc, testServer(1), WorkerOptions{ID: "a", HeartbeatInterval: heartbeatEvery})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("serving")
	t.Fatal(w.Run(context.Background())) // until killed
}

func TestWorkerProcessKilledLosesOnlyItsSessions(t *testing.T) {
	url := startNATS(t)
	child := exec.Command(os.Args[0], "-test.run=^TestMainWorkerProcess$")
	child.Env = append(os.Environ(), childEnv+"="+url)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	b := startWorker(t, url, "b", 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a", "b")
	var onA, onB *client
	for onA == nil || onB == nil { // a takes one session
		c := dial(t, fd.url("/api/offer"))
		if _, ok := b.srv.Session(c.pcID); !ok {
			onA = c
		} else if onB == nil {
			onB = c
		}
	}
	if err := onA.echo("on a"); err != nil {
		t.Fatal(err)
	}

	killed := time.Now()
	if err := child.Process.Kill(); err != nil { // SIGKILL: no word to anyone
		t.Fatal(err)
	}
	fd.waitWorkers(t, "b")
	if d := time.Since(killed); d > 3*heartbeatEvery+2*time.Second {
		t.Errorf("the front door forgot the killed worker after %v, want about three heartbeats (%v)", d, 3*heartbeatEvery)
	}
	// The killed worker's client sees its connection fail (ICE consent
	// checks go unanswered: pion's client says disconnected after 5 s).
	until(t, "the killed worker's client sees its connection fail", func() bool {
		s := onA.pc.ICEConnectionState()
		return s == pion.ICEConnectionStateDisconnected || s == pion.ICEConnectionStateFailed
	})
	if err := onB.echo("still here"); err != nil {
		t.Errorf("a session on the live worker: %v", err)
	}
	if status, _ := do(t, http.MethodPatch, fd.url("/api/offer"), onA.candidates()); status != http.StatusNotFound {
		t.Errorf("PATCH for the killed worker's session: %d, want 404", status)
	}
	if err := dial(t, fd.url("/api/offer")).echo("new"); err != nil {
		t.Errorf("a new session after the kill: %v", err)
	}
}
