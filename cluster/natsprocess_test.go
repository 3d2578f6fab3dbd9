package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	pion "github.com/pion/webrtc/v4"

	"github.com/framewire/framewire/internal/natstest"
	"github.com/framewire/framewire/transports/websocket/websockettest"
)

// The tests of this file back docs/deploying.md's table of what fails:
// the NATS server is a nats-server process (Debian's, which make test
// installs) stopped and started again, and the workers and the front door
// reconnect as a deployment's do (examples/cluster's connectNATS).

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
	srv := natstest.StartProcess(t)
	wnc, fnc := natstest.ConnectReconnecting(t, srv.URL(), -1), natstest.ConnectReconnecting(t, srv.URL(), -1)
	w := runWorker(t, wnc, "a")
	fd := runFrontDoor(t, fnc)
	fd.waitWorkers(t, "a")
	c := dial(t, fd.url("/api/offer"))
	if err := c.echo("before"); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
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

	srv.Start()
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
	srv := natstest.StartProcess(t)
	wnc, fnc := natstest.ConnectReconnecting(t, srv.URL(), 3), natstest.ConnectReconnecting(t, srv.URL(), -1)
	w := runWorker(t, wnc, "a")
	fd := runFrontDoor(t, fnc)
	fd.waitWorkers(t, "a")
	c := dial(t, fd.url("/api/offer"))
	if err := c.echo("before"); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	until(t, "the worker gives NATS up", wnc.IsClosed)
	if err := w.stopped(t); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("Run of a worker whose NATS reconnects ran out: %v, want ErrConnectionClosed", err)
	}
	c.waitEnded()
}

// TestMainWorkerProcess is not a test: it is the worker process of
// TestWorkerProcessKilledLosesOnlyItsSessions (the test binary run again
// and TestWorkerProcessKilledClosesItsSockets (the test binary run again
// by natstest.StartChild): worker "a", capacity 1 of each transport,
// until killed.
func TestMainWorkerProcess(t *testing.T) {
	url := natstest.ChildURL()
	if url == "" {
		t.Skip("the worker process of the kill -9 test")
	}
	nc := natstest.Connect(t, url)
	w, err := NewWorker(nc, testServer(1), WorkerOptions{ID: "a", HeartbeatInterval: heartbeatEvery, WebSocket: testWebSocket(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("serving")
	t.Fatal(w.Run(context.Background())) // until killed
}

func TestWorkerProcessKilledLosesOnlyItsSessions(t *testing.T) {
	url := natstest.Embedded(t)
	child := natstest.StartChild(t, "TestMainWorkerProcess", url, "serving")
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
	child.Kill9(t) // no word to anyone
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

// A worker process killed with SIGKILL takes its sockets with it: its
// clients see them close, the front door forgets it, the other worker's
// sockets go on and new /connects go there.
func TestWorkerProcessKilledClosesItsSockets(t *testing.T) {
	url := natstest.Embedded(t)
	child := natstest.StartChild(t, "TestMainWorkerProcess", url, "serving")
	b := startWebSocketWorker(t, url, "b", 10, 10)
	fd := startFrontDoor(t, url)
	fd.waitWorkers(t, "a", "b")
	var onA, onB *websockettest.Client
	for onA == nil || onB == nil { // a takes one socket
		wsURL := connect(t, fd)
		c := dialSocket(t, wsURL)
		if !strings.HasPrefix(wsURL, b.wsURL+"?") {
			onA = c
		} else if onB == nil {
			onB = c
		}
	}
	if err := echoSocket(onA, "on a"); err != nil {
		t.Fatal(err)
	}

	child.Kill9(t) // no word to anyone
	waitClosed(t, onA)
	fd.waitWorkers(t, "b")
	if err := echoSocket(onB, "still here"); err != nil {
		t.Errorf("a socket on the live worker: %v", err)
	}
	wsURL := connect(t, fd)
	ownerOf(t, wsURL, b)
	if err := echoSocket(dialSocket(t, wsURL), "new"); err != nil {
		t.Errorf("a new socket after the kill: %v", err)
	}
}
