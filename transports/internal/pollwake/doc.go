// Package pollwake is a ticker whose ticks reach a goroutine through the
// runtime's network poller instead of its timers.
//
// The transports use it to keep their 20 ms audio clocks running
// while the garbage collector marks. When every processor (P) of the Go
// runtime finds its run queue empty during a mark phase, it runs an idle
// mark worker; an idle worker gives the processor back as soon as a
// goroutine is runnable or the network poller has something ready, but it
// does not look at timers (golang/go#45632). So a process whose work is
// all started by timers (here the outputs' players) can stall for 10 ms or
// more, until the runtime's monitor preempts the workers. A file
// descriptor the kernel makes readable every few milliseconds, a Linux
// timerfd, is seen by the poller, so the idle worker returns and the
// scheduler runs the expired timers.
package pollwake
