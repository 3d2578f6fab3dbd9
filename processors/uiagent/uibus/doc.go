// Package uibus runs uiagent's task-group workers and agents over a
// [bus.Bus]: in another process, on another machine.
//
// [RemoteWorker] and [ServeWorker] run a task group's worker elsewhere
// (updates, completion and cancellation cross the bus; a dead remote ends
// its worker with an error, so the group still ends with exactly one
// group_completed), and [Agent] and [ServeAgent] let one agent ask
// another, elsewhere, and wait for its answer. Package bus carries the
// calls and knows nothing of uiagent; this package is the adapter between
// the two (wire protocol v1, docs/decisions/agent-bus.md).
package uibus
