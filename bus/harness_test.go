package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/bus/bustest"
)

// The calls are tested over every bus with package bustest's harness
// (bustest.Each), which processors/uiagent/uibus's tests share.

// testOptions beat fast, so a dead callee is seen within 200 ms, and cap
// payloads at 4 KiB.
var testOptions = bustest.Options()

// serve serves h on subject until the test ends.
func serve(t *testing.T, b bus.Bus, subject string, h bus.Handler) *bus.Service {
	t.Helper()
	svc, err := b.Serve(t.Context(), subject, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return svc
}

// blocker is a handler that reports when it starts and when its ctx
// ends, and waits for its ctx.
type blocker struct {
	started, ended chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}), ended: make(chan struct{})}
}

func (b *blocker) handle(ctx context.Context, _ []byte, progress func([]byte)) ([]byte, error) {
	close(b.started)
	progress([]byte("working"))
	<-ctx.Done()
	close(b.ended)
	return nil, ctx.Err()
}

// result is what a Request returned, for Requests run in a goroutine.
type result struct {
	resp []byte
	err  error
	took time.Duration
}

// requestAsync runs a Request on its own goroutine, which the test waits
// for at cleanup.
func requestAsync(t *testing.T, ctx context.Context, b bus.Bus, subject string, req []byte) <-chan result {
	ch := make(chan result, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		resp, err := b.Request(ctx, subject, req, nil)
		ch <- result{resp, err, time.Since(start)}
	}()
	t.Cleanup(func() { <-done })
	return ch
}
