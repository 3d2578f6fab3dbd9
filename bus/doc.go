// Package bus lets agents and task-group workers live in other processes.
//
// A [Bus] carries calls: [Bus.Request] sends a request to whoever serves a
// subject ([Bus.Serve]), receives the callee's progress as it comes and
// ends with one result or one error. Cancelling the caller's context
// cancels the callee's work; a callee that dies (its process, its
// connection) is noticed by missed heartbeats and surfaces as [ErrGone],
// never as a hang; a caller that goes away cancels the callee's work too.
// Every payload is size-capped and every wait is timed.
//
// Two implementations pass the same tests: [Local], in-process and the
// default (a single binary needs no NATS), and [NATS], over a
// github.com/nats-io/nats.go connection (wire protocol v1,
// docs/decisions/agent-bus.md). Package bus/bustest runs a test over
// both, for this package's tests and those of the packages built on it.
//
// The bus knows nothing of what its calls carry. Package
// processors/uiagent/uibus builds on it: a uiagent task group's worker in
// another process, and one agent asking another, elsewhere.
package bus
