// Package pipelinetest runs a processor (or a whole pipeline) inside a real
// task between a source and a sink, and records what comes out of each end,
// so processor tests read as "these frames in, these frames out".
//
// Frames are compared with go-cmp ([Diff], [Options]) ignoring identity
// fields. Tests that depend on time can run inside testing/synctest's
// bubble: the task's timers then follow the fake clock.
package pipelinetest
