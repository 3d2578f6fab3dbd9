// Package pipeline is framewire's runtime: processors, the nodes that run
// them, pipelines that compose them, the task that runs a pipeline and the
// runner that runs tasks.
//
// Each processor runs on its own goroutine (its node), which owns the
// processor's state and takes frames from a three-priority inbox: Start
// first, then system frames, then ordered frames. Slow work runs as jobs
// that may hold the ordered lane while system frames keep flowing. An
// interruption cancels the current epoch's work, flushes queued
// interruptible frames and is forwarded. A [Task] injects frames through one
// ordered ingress, and its control loop lets Cancel preempt everything,
// including a stuck End.
package pipeline
