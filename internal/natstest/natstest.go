package natstest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Wait bounds every wait of this package: a server's start, a child's
// line.
const Wait = 15 * time.Second

// Embedded runs an in-process NATS server on a free loopback port until
// the test ends, and returns its client URL.
func Embedded(t testing.TB) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	if !ns.ReadyForConnections(Wait) {
		t.Fatal("the embedded NATS server did not start")
	}
	return ns.ClientURL()
}

// Connect connects to url without reconnecting (a test's connection
// that fails is a test that fails), closed when the test ends.
func Connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	return connect(t, url, nats.MaxReconnects(0))
}

// ConnectReconnecting connects as a deployment does, reconnecting every
// 20 ms up to tries times (-1: for ever), closed when the test ends.
func ConnectReconnecting(t testing.TB, url string, tries int) *nats.Conn {
	t.Helper()
	return connect(t, url, nats.MaxReconnects(tries), nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectJitter(0, 0), nats.Timeout(time.Second))
}

func connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("connecting to NATS at %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Process is a nats-server process (Debian's nats-server) on a fixed
// loopback port, which a test stops and starts again.
type Process struct {
	t    testing.TB
	bin  string
	port int
	cmd  *exec.Cmd
}

// StartProcess starts nats-server on a free loopback port, stopped when
// the test ends. It skips the test when nats-server is not installed, and
// fails it then when FRAMEWIRE_REQUIRE_DEPS is set (make test sets it).
func StartProcess(t testing.TB) *Process {
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
	p := &Process{t: t, bin: bin, port: port}
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

// URL is the server's client URL; it stays the same across restarts.
func (p *Process) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", p.port) }

// Start runs the server (again) and waits until it takes connections.
func (p *Process) Start() {
	p.t.Helper()
	p.cmd = exec.Command(p.bin, "-a", "127.0.0.1", "-p", fmt.Sprint(p.port))
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("starting nats-server: %v", err)
	}
	for deadline := time.Now().Add(Wait); ; {
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

// Stop kills the server and waits for it to exit.
func (p *Process) Stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// childEnv carries the NATS URL to a test binary run again as a child.
const childEnv = "FRAMEWIRE_NATSTEST_CHILD_URL"

// ChildURL is the NATS URL a child process was started with, or "" in
// the test binary's own run: a child's test function skips itself then.
func ChildURL() string { return os.Getenv(childEnv) }

// Child is the test binary run again as another OS process, running one
// test function (a callee or a worker) against a NATS server.
type Child struct {
	cmd   *exec.Cmd
	lines <-chan string
}

// StartChild runs the test function named test in a new process of the
// test binary, with ChildURL returning url there, and waits until it
// prints ready on a line of its own. It is killed when the test ends.
func StartChild(t testing.TB, test, url, ready string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
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
	c := &Child{cmd: cmd, lines: lines}
	c.Await(t, ready)
	return c
}

// Await waits (at most Wait) for the child to print line.
func (c *Child) Await(t testing.TB, line string) {
	t.Helper()
	timeout := time.After(Wait)
	for {
		select {
		case l := <-c.lines:
			if l == line {
				return
			}
		case <-timeout:
			t.Fatalf("the child process did not say %q within %v", line, Wait)
		}
	}
}

// Kill9 kills the child with SIGKILL: no word to anyone.
func (c *Child) Kill9(t testing.TB) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}
