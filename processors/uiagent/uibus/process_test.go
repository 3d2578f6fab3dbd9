package uibus

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/processors/uiagent"
)

// The test of this file runs what a deployment runs: a task-group worker
// in another OS process, killed with SIGKILL. (Package bus tests its calls
// the same way, bus/process_test.go.)

// childEnv names the NATS URL a re-executed test binary serves on.
const childEnv = "FRAMEWIRE_UIBUS_TEST_CHILD_NATS"

// TestMainChildProcess is not a test: it is the callee process of the
// cross-process test (the test binary run again with childEnv set). It
// serves a task-group worker, workers.search, that sends one update and
// works until cancelled, then says "serving" and waits to be killed.
func TestMainChildProcess(t *testing.T) {
	url := os.Getenv(childEnv)
	if url == "" {
		t.Skip("the callee process of the cross-process tests")
	}
	nc, err := nats.Connect(url, nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	b := bus.NATS(nc, testOptions)
	_, err = ServeWorker(context.Background(), b, "workers.search", func(ctx context.Context, update func(any)) (any, error) {
		update(map[string]string{"text": "remote searching"})
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

func TestGroupWithARemoteWorkerProcessKilledEndsWithinAFewBeats(t *testing.T) {
	leakCheck(t)
	url := startNATS(t)
	c := startChild(t, url)
	caller := bus.NATS(connect(t, url), testOptions)
	tg, rec := groups(t)
	g, err := tg.Start(uiagent.GroupOptions{}, RemoteWorker(caller, "remote", "workers.search"))
	if err != nil {
		t.Fatal(err)
	}
	c.await(t, "working")
	time.Sleep(testOptions.Heartbeat) // its update is out
	killed := time.Now()
	if err := c.cmd.Process.Kill(); err != nil { // SIGKILL: no word to anyone
		t.Fatal(err)
	}
	got := rec.lifecycle(t, g)
	for i, l := range got { // the error itself is logged; the card gets an error id
		if strings.HasPrefix(l, `completed remote error {"error":"the worker ran into a problem (error id `) {
			got[i] = "completed remote error <gone>"
		}
	}
	checkLifecycle(t, got, map[string][]string{
		"remote": {`update remote {"text":"remote searching"}`, "completed remote error <gone>"},
	})
	if took := time.Since(killed); took > silence(testOptions)+2*time.Second {
		t.Errorf("the group ended %v after the kill, want about the silence bound (%v)", took, silence(testOptions))
	}
}
