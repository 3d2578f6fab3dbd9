// Package observers defines how frames are watched as they move through a
// pipeline, and ships the built-in observers (logging, turn tracking,
// user-to-bot latency).
//
// The runtime reports every hop (a push from one processor to the next) and
// every processing step as an [Event]. Each observer has its own bounded
// buffer, drained on its own goroutine, so observing costs the pipeline one
// non-blocking append per interested observer. When a buffer is full the
// oldest event is dropped and counted. The task drains the buffers, with a
// deadline, before it finishes.
package observers
