package bustest

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/bus"
	"github.com/framewire/framewire/internal/natstest"
)

// Wait bounds the waits of a test: long enough for a loaded machine, short
// enough that a hang fails the test instead of the run.
const Wait = 10 * time.Second

// Options returns bus options that beat fast, so a dead callee is seen
// within 200 ms ([Silence]), and cap payloads at 4 KiB.
func Options() bus.Options {
	return bus.Options{Heartbeat: 50 * time.Millisecond, MissedBeats: 4, MaxPayload: 4 << 10}
}

// Silence is how long a caller under o waits for a silent callee before it
// gives the call up: Heartbeat times MissedBeats.
func Silence(o bus.Options) time.Duration { return o.Heartbeat * time.Duration(o.MissedBeats) }

// Pair is a caller's bus and a callee's bus for one test.
type Pair struct {
	// Caller makes the requests; Callee serves them. They are the same
	// bus in-process, two connections to one server over NATS.
	Caller, Callee bus.Bus
	// Kill makes the callee die without a word: over NATS it closes the
	// callee's connection; in-process, where stopping its service is the
	// only way to die, it stops svc.
	Kill func(svc *bus.Service)
	// DropCaller makes the caller's side go away mid-call (closes its
	// connection), or is nil where the caller cannot go away alone
	// (in-process).
	DropCaller func()
}

// Impl is one bus implementation: New makes a Pair with o whose
// resources are released when the test ends.
type Impl struct {
	Name string
	New  func(t testing.TB, o bus.Options) Pair
}

// Impls returns every implementation: "local" ([bus.Local]) and "nats"
// ([bus.NATS] over an embedded server).
func Impls() []Impl {
	return []Impl{
		{"local", func(_ testing.TB, o bus.Options) Pair {
			b := bus.Local(o)
			return Pair{Caller: b, Callee: b, Kill: func(svc *bus.Service) { _ = svc.Stop() }}
		}},
		{"nats", func(t testing.TB, o bus.Options) Pair {
			url := natstest.Embedded(t)
			caller, callee := natstest.Connect(t, url), natstest.Connect(t, url)
			return Pair{Caller: bus.NATS(caller, o), Callee: bus.NATS(callee, o),
				Kill: func(*bus.Service) { callee.Close() }, DropCaller: caller.Close}
		}},
	}
}

// Each runs f as a subtest for every implementation, named after it, with
// a Pair made with o, and checks with [LeakCheck] that the subtest leaves
// no goroutine behind.
func Each(t *testing.T, o bus.Options, f func(t *testing.T, p Pair)) {
	t.Helper()
	for _, im := range Impls() {
		t.Run(im.Name, func(t *testing.T) {
			LeakCheck(t)
			f(t, im.New(t, o))
		})
	}
}

// LeakCheck checks, once the test and all its cleanups are over, that
// the goroutines are back to what they were when it was called. Call it
// first, so that its cleanup runs last.
func LeakCheck(t testing.TB) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// Within returns what ch yields (the zero value once it is closed), and
// fails the test, saying what it waited for, unless that is within d.
func Within[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
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
