package bus

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/internal/natstest"
)

// wait bounds every wait of the tests.
const wait = 10 * time.Second

// testOptions beat fast, so a dead callee is seen within 200 ms, and cap
// payloads at 4 KiB.
var testOptions = Options{Heartbeat: 50 * time.Millisecond, MissedBeats: 4, MaxPayload: 4 << 10}

// pair is a caller's bus and a callee's bus; kill makes the callee die
// without a word (closing its NATS connection; for the local bus, stopping
// its services is the only way to die).
type pair struct {
	caller, callee Bus
	kill           func(svc *Service)
	// dropCaller makes the caller's side go away mid-call, or is nil.
	dropCaller func()
}

// impl makes a pair for one test.
type impl struct {
	name string
	new  func(t *testing.T, o Options) pair
}

var impls = []impl{
	{"local", func(t *testing.T, o Options) pair {
		b := Local(o)
		return pair{caller: b, callee: b, kill: func(svc *Service) { _ = svc.Stop() }}
	}},
	{"nats", func(t *testing.T, o Options) pair {
		url := natstest.Embedded(t)
		caller, callee := natstest.Connect(t, url), natstest.Connect(t, url)
		return pair{caller: NATS(caller, o), callee: NATS(callee, o),
			kill: func(*Service) { callee.Close() }, dropCaller: caller.Close}
	}},
}

// eachImpl runs f for every implementation, with testOptions.
func eachImpl(t *testing.T, f func(t *testing.T, p pair)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			leakCheck(t)
			f(t, im.new(t, testOptions))
		})
	}
}

// leakCheck checks, once the test and its cleanups are over, that the
// goroutines are back to what they were when it was called.
func leakCheck(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // the first cleanup runs last
}

// serve serves h on subject until the test ends.
func serve(t *testing.T, b Bus, subject string, h Handler) *Service {
	t.Helper()
	svc, err := b.Serve(t.Context(), subject, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return svc
}

// within fails the test unless ch is closed (or yields) within d.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
	var zero T
	return zero
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
func requestAsync(t *testing.T, ctx context.Context, b Bus, subject string, req []byte) <-chan result {
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
