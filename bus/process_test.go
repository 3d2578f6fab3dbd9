package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
	"github.com/framewire/framewire/internal/natstest"
)

// The tests of this file run what a deployment runs: a nats-server
// process (Debian's nats-server, which make test installs) that is
// stopped and started again, and a callee in another OS process that is
// killed with SIGKILL.

// until fails the test unless cond holds within bustest.Wait.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(bustest.Wait); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bustest.Wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func echoHandler(_ context.Context, req []byte, _ func([]byte)) ([]byte, error) {
	return append([]byte("echo: "), req...), nil
}

func TestNATSBusRequestsResumeAfterTheServerRestarts(t *testing.T) {
	bustest.LeakCheck(t)
	srv := natstest.StartProcess(t)
	callerNC, calleeNC := natstest.ConnectReconnecting(t, srv.URL(), -1), natstest.ConnectReconnecting(t, srv.URL(), -1)
	caller, callee := bus.NATS(callerNC, testOptions), bus.NATS(calleeNC, testOptions)
	serve(t, callee, "svc.echo", echoHandler)
	if resp, err := caller.Request(t.Context(), "svc.echo", []byte("before"), nil); err != nil || string(resp) != "echo: before" {
		t.Fatalf("before the restart: %q, %v", resp, err)
	}

	srv.Stop()
	until(t, "both connections see the server gone", func() bool { return !callerNC.IsConnected() && !calleeNC.IsConnected() })
	srv.Start()
	until(t, "both connections are back", func() bool { return callerNC.IsConnected() && calleeNC.IsConnected() })
	// The callee's subscriptions are sent again on reconnecting; a round
	// trip makes sure the new server has them.
	if err := calleeNC.FlushTimeout(bustest.Wait); err != nil {
		t.Fatal(err)
	}
	if resp, err := caller.Request(t.Context(), "svc.echo", []byte("after"), nil); err != nil || string(resp) != "echo: after" {
		t.Fatalf("after the restart: %q, %v", resp, err)
	}
}

func TestNATSBusRequestWhileTheServerIsDownSaysSo(t *testing.T) {
	bustest.LeakCheck(t)
	srv := natstest.StartProcess(t)
	callerNC, calleeNC := natstest.ConnectReconnecting(t, srv.URL(), -1), natstest.ConnectReconnecting(t, srv.URL(), -1)
	caller, callee := bus.NATS(callerNC, testOptions), bus.NATS(calleeNC, testOptions)
	serve(t, callee, "svc.echo", echoHandler)
	srv.Stop()
	until(t, "the caller sees the server gone", func() bool { return !callerNC.IsConnected() })

	start := time.Now()
	_, err := caller.Request(t.Context(), "svc.echo", []byte("x"), nil)
	if !errors.Is(err, bus.ErrGone) || !strings.Contains(err.Error(), "NATS connection") {
		t.Errorf("error %v, want ErrGone saying the NATS connection is down", err)
	}
	if took := time.Since(start); took > bustest.Silence(testOptions)+time.Second {
		t.Errorf("took %v, want about the silence bound (%v)", took, bustest.Silence(testOptions))
	}
}

func TestNATSBusRequestAfterTheReconnectsRanOutFailsAtOnce(t *testing.T) {
	bustest.LeakCheck(t)
	srv := natstest.StartProcess(t)
	callerNC := natstest.ConnectReconnecting(t, srv.URL(), 3)
	caller := bus.NATS(callerNC, testOptions)
	srv.Stop()
	until(t, "the caller gives the server up", callerNC.IsClosed)

	start := time.Now()
	_, err := caller.Request(t.Context(), "svc.echo", []byte("x"), nil)
	if !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("error %v, want nats.ErrConnectionClosed", err)
	}
	if took := time.Since(start); took > bustest.Silence(testOptions) {
		t.Errorf("took %v: a closed connection must not wait for silence", took)
	}
}

// A call running while the server restarts ends, whatever the timing:
// with the callee's result when both sides are back within the caller's
// patience, or with ErrGone, never a hang.
func TestNATSBusCallAcrossAServerRestartEnds(t *testing.T) {
	bustest.LeakCheck(t)
	srv := natstest.StartProcess(t)
	o := bus.Options{Heartbeat: 50 * time.Millisecond, MissedBeats: 40, MaxPayload: 4 << 10} // 2 s of patience
	callerNC, calleeNC := natstest.ConnectReconnecting(t, srv.URL(), -1), natstest.ConnectReconnecting(t, srv.URL(), -1)
	caller, callee := bus.NATS(callerNC, o), bus.NATS(calleeNC, o)
	release := make(chan struct{})
	started := make(chan struct{})
	serve(t, callee, "svc.slow", func(ctx context.Context, _ []byte, _ func([]byte)) ([]byte, error) {
		close(started)
		select {
		case <-release:
			return []byte("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	res := requestAsync(t, t.Context(), caller, "svc.slow", nil)
	bustest.Within(t, started, bustest.Wait, "the handler started")
	srv.Stop()
	until(t, "both connections see the server gone", func() bool { return !callerNC.IsConnected() && !calleeNC.IsConnected() })
	srv.Start()
	until(t, "both connections are back", func() bool { return callerNC.IsConnected() && calleeNC.IsConnected() })
	close(release)
	r := bustest.Within(t, res, bustest.Wait, "the call ended")
	if r.err != nil && !errors.Is(r.err, bus.ErrGone) {
		t.Errorf("error %v, want the result or ErrGone", r.err)
	}
	t.Logf("the call across the restart: %q, %v", r.resp, r.err)
}

// TestMainChildProcess is not a test: it is the callee process of the
// cross-process tests (the test binary run again by natstest.StartChild). It
// serves svc.echo and svc.work, a handler that sends one progress
// message, says "working" and works until cancelled, then says "serving"
// and waits to be killed.
func TestMainChildProcess(t *testing.T) {
	url := natstest.ChildURL()
	if url == "" {
		t.Skip("the callee process of the cross-process tests")
	}
	nc := natstest.Connect(t, url)
	b := bus.NATS(nc, testOptions)
	if _, err := b.Serve(context.Background(), "svc.echo", echoHandler); err != nil {
		t.Fatal(err)
	}
	_, err := b.Serve(context.Background(), "svc.work", func(ctx context.Context, _ []byte, progress func([]byte)) ([]byte, error) {
		progress([]byte("remote working"))
		fmt.Println("working")
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("serving")
	select {} // until killed
}

func TestNATSBusCallsACalleeInAnotherProcess(t *testing.T) {
	bustest.LeakCheck(t)
	url := natstest.Embedded(t)
	natstest.StartChild(t, "TestMainChildProcess", url, "serving")
	caller := bus.NATS(natstest.Connect(t, url), testOptions)
	resp, err := caller.Request(t.Context(), "svc.echo", []byte("across"), nil)
	if err != nil || string(resp) != "echo: across" {
		t.Fatalf("%q, %v", resp, err)
	}
}

func TestNATSBusCalleeProcessKilledIsGoneWithinAFewBeats(t *testing.T) {
	bustest.LeakCheck(t)
	url := natstest.Embedded(t)
	c := natstest.StartChild(t, "TestMainChildProcess", url, "serving")
	caller := bus.NATS(natstest.Connect(t, url), testOptions)
	progress := make(chan string, 1)
	res := make(chan result, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := caller.Request(t.Context(), "svc.work", nil, func(p []byte) {
			select {
			case progress <- string(p):
			default:
			}
		})
		res <- result{resp: resp, err: err}
	}()
	t.Cleanup(func() { <-done })
	c.Await(t, "working")
	if p := bustest.Within(t, progress, bustest.Wait, "the callee's progress"); p != "remote working" {
		t.Errorf("progress %q, want %q", p, "remote working")
	}
	killed := time.Now()
	c.Kill9(t)
	r := bustest.Within(t, res, bustest.Wait, "the call ended")
	if !errors.Is(r.err, bus.ErrGone) {
		t.Errorf("error %v, want ErrGone", r.err)
	}
	if took := time.Since(killed); took > bustest.Silence(testOptions)+2*time.Second {
		t.Errorf("the call ended %v after the kill, want about the silence bound (%v)", took, bustest.Silence(testOptions))
	}
}
