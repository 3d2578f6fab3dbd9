package bus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The tests of this file run what a deployment runs: a nats-server
// process (Debian's nats-server, which make test installs) that is
// stopped and started again, and a callee in another OS process that is
// killed with SIGKILL.

// natsProcess is a nats-server process on a fixed loopback port, which
// the test can stop and start again.
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

// connectReconnecting connects as a deployment does: reconnecting, here
// every 20 ms up to tries times (-1: for ever).
func connectReconnecting(t *testing.T, url string, tries int) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(tries), nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectJitter(0, 0), nats.Timeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
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

func echoHandler(_ context.Context, req []byte, _ func([]byte)) ([]byte, error) {
	return append([]byte("echo: "), req...), nil
}

func TestNATSBusRequestsResumeAfterTheServerRestarts(t *testing.T) {
	leakCheck(t)
	srv := startNATSProcess(t)
	callerNC, calleeNC := connectReconnecting(t, srv.url(), -1), connectReconnecting(t, srv.url(), -1)
	caller, callee := NATS(callerNC, testOptions), NATS(calleeNC, testOptions)
	serve(t, callee, "svc.echo", echoHandler)
	if resp, err := caller.Request(t.Context(), "svc.echo", []byte("before"), nil); err != nil || string(resp) != "echo: before" {
		t.Fatalf("before the restart: %q, %v", resp, err)
	}

	srv.stop()
	until(t, "both connections see the server gone", func() bool { return !callerNC.IsConnected() && !calleeNC.IsConnected() })
	srv.start()
	until(t, "both connections are back", func() bool { return callerNC.IsConnected() && calleeNC.IsConnected() })
	// The callee's subscriptions are sent again on reconnecting; a round
	// trip makes sure the new server has them.
	if err := calleeNC.FlushTimeout(wait); err != nil {
		t.Fatal(err)
	}
	if resp, err := caller.Request(t.Context(), "svc.echo", []byte("after"), nil); err != nil || string(resp) != "echo: after" {
		t.Fatalf("after the restart: %q, %v", resp, err)
	}
}

func TestNATSBusRequestWhileTheServerIsDownSaysSo(t *testing.T) {
	leakCheck(t)
	srv := startNATSProcess(t)
	callerNC, calleeNC := connectReconnecting(t, srv.url(), -1), connectReconnecting(t, srv.url(), -1)
	caller, callee := NATS(callerNC, testOptions), NATS(calleeNC, testOptions)
	serve(t, callee, "svc.echo", echoHandler)
	srv.stop()
	until(t, "the caller sees the server gone", func() bool { return !callerNC.IsConnected() })

	start := time.Now()
	_, err := caller.Request(t.Context(), "svc.echo", []byte("x"), nil)
	if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "NATS connection") {
		t.Errorf("error %v, want ErrGone saying the NATS connection is down", err)
	}
	if took := time.Since(start); took > testOptions.silence()+time.Second {
		t.Errorf("took %v, want about the silence bound (%v)", took, testOptions.silence())
	}
}

func TestNATSBusRequestAfterTheReconnectsRanOutFailsAtOnce(t *testing.T) {
	leakCheck(t)
	srv := startNATSProcess(t)
	callerNC := connectReconnecting(t, srv.url(), 3)
	caller := NATS(callerNC, testOptions)
	srv.stop()
	until(t, "the caller gives the server up", callerNC.IsClosed)

	start := time.Now()
	_, err := caller.Request(t.Context(), "svc.echo", []byte("x"), nil)
	if !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("error %v, want nats.ErrConnectionClosed", err)
	}
	if took := time.Since(start); took > testOptions.silence() {
		t.Errorf("took %v: a closed connection must not wait for silence", took)
	}
}

// A call running while the server restarts ends, whatever the timing:
// with the callee's result when both sides are back within the caller's
// patience, or with ErrGone, never a hang.
func TestNATSBusCallAcrossAServerRestartEnds(t *testing.T) {
	leakCheck(t)
	srv := startNATSProcess(t)
	o := Options{Heartbeat: 50 * time.Millisecond, MissedBeats: 40, MaxPayload: 4 << 10} // 2 s of patience
	callerNC, calleeNC := connectReconnecting(t, srv.url(), -1), connectReconnecting(t, srv.url(), -1)
	caller, callee := NATS(callerNC, o), NATS(calleeNC, o)
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
	within(t, started, wait, "the handler started")
	srv.stop()
	until(t, "both connections see the server gone", func() bool { return !callerNC.IsConnected() && !calleeNC.IsConnected() })
	srv.start()
	until(t, "both connections are back", func() bool { return callerNC.IsConnected() && calleeNC.IsConnected() })
	close(release)
	r := within(t, res, wait, "the call ended")
	if r.err != nil && !errors.Is(r.err, ErrGone) {
		t.Errorf("error %v, want the result or ErrGone", r.err)
	}
	t.Logf("the call across the restart: %q, %v", r.resp, r.err)
}

// childEnv names the NATS URL a re-executed test binary serves on.
const childEnv = "FRAMEWIRE_BUS_TEST_CHILD_NATS"

// TestMainChildProcess is not a test: it is the callee process of the
// cross-process tests (the test binary run again with childEnv set). It
// serves svc.echo and svc.work, a handler that sends one progress
// message, says "working" and works until cancelled, then says "serving"
// and waits to be killed.
func TestMainChildProcess(t *testing.T) {
	url := os.Getenv(childEnv)
	if url == "" {
		t.Skip("the callee process of the cross-process tests")
	}
	nc, err := nats.Connect(url, nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	b := NATS(nc, testOptions)
	if _, err := b.Serve(context.Background(), "svc.echo", echoHandler); err != nil {
		t.Fatal(err)
	}
	_, err = b.Serve(context.Background(), "svc.work", func(ctx context.Context, _ []byte, progress func([]byte)) ([]byte, error) {
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

// child is a callee process.
type child struct {
	cmd   *exec.Cmd
	lines <-chan string
}

// startChild runs the callee process against url and waits until it
// serves.
func startChild(t *testing.T, url string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainChildProcess$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+url)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	done := make(chan struct{})
	go func() { // ends when the process's stdout closes, at its death
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	c := &child{cmd: cmd, lines: lines}
	c.await(t, "serving")
	return c
}

// await waits for the child to print line.
func (c *child) await(t *testing.T, line string) {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case l := <-c.lines:
			if l == line {
				return
			}
		case <-timeout:
			t.Fatalf("the child process did not say %q within %v", line, wait)
		}
	}
}

// kill9 kills the child with SIGKILL: no word to anyone.
func (c *child) kill9(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}

func TestNATSBusCallsACalleeInAnotherProcess(t *testing.T) {
	leakCheck(t)
	url := startNATS(t)
	startChild(t, url)
	caller := NATS(connect(t, url), testOptions)
	resp, err := caller.Request(t.Context(), "svc.echo", []byte("across"), nil)
	if err != nil || string(resp) != "echo: across" {
		t.Fatalf("%q, %v", resp, err)
	}
}

func TestNATSBusCalleeProcessKilledIsGoneWithinAFewBeats(t *testing.T) {
	leakCheck(t)
	url := startNATS(t)
	c := startChild(t, url)
	caller := NATS(connect(t, url), testOptions)
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
	c.await(t, "working")
	if p := within(t, progress, wait, "the callee's progress"); p != "remote working" {
		t.Errorf("progress %q, want %q", p, "remote working")
	}
	killed := time.Now()
	c.kill9(t)
	r := within(t, res, wait, "the call ended")
	if !errors.Is(r.err, ErrGone) {
		t.Errorf("error %v, want ErrGone", r.err)
	}
	if took := time.Since(killed); took > testOptions.silence()+2*time.Second {
		t.Errorf("the call ended %v after the kill, want about the silence bound (%v)", took, testOptions.silence())
	}
}
