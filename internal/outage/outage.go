package outage

import "sync/atomic"

// Flag tracks whether an upstream is in an outage. The zero value is no
// outage. It is safe for concurrent use: requests that fail together
// start one outage, and exactly one of them is told it began it.
type Flag struct{ failing atomic.Bool }

// Fail records a failed request and reports whether it began an outage:
// true for the first failure since the last success (tell the user),
// false while the outage goes on (log it only).
func (f *Flag) Fail() (began bool) { return !f.failing.Swap(true) }

// Succeed records a request that worked, ending the outage if there was
// one.
func (f *Flag) Succeed() { f.failing.Store(false) }
