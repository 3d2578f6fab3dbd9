package uibus

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/internal/natstest"
)

// The adapters are tested over both buses, as package bus tests its calls
// (bus/harness_test.go): in-process, and NATS with an embedded server.

// wait bounds every wait of the tests.
const wait = 10 * time.Second

// testOptions beat fast, so a dead callee is seen within 200 ms, and cap
// payloads at 4 KiB.
var testOptions = bus.Options{Heartbeat: 50 * time.Millisecond, MissedBeats: 4, MaxPayload: 4 << 10}

// silence is how long a caller waits for a silent callee: Heartbeat times
// MissedBeats.
func silence(o bus.Options) time.Duration { return o.Heartbeat * time.Duration(o.MissedBeats) }

// pair is a caller's bus and a callee's bus; kill makes the callee die
// without a word (closing its NATS connection; for the local bus, stopping
// its services is the only way to die).
type pair struct {
	caller, callee bus.Bus
	kill           func(svc *bus.Service)
}

var impls = []struct {
	name string
	new  func(t *testing.T, o bus.Options) pair
}{
	{"local", func(t *testing.T, o bus.Options) pair {
		b := bus.Local(o)
		return pair{caller: b, callee: b, kill: func(svc *bus.Service) { _ = svc.Stop() }}
	}},
	{"nats", func(t *testing.T, o bus.Options) pair {
		url := natstest.Embedded(t)
		caller, callee := natstest.Connect(t, url), natstest.Connect(t, url)
		return pair{caller: bus.NATS(caller, o), callee: bus.NATS(callee, o), kill: func(*bus.Service) { callee.Close() }}
	}},
}

// eachImpl runs f for every bus, with testOptions.
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
