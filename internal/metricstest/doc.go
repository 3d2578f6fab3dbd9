// Package metricstest is the test kit of the counters framewire's servers
// report: [Signalling] records the signalling responses and refusals that
// the WebRTC transport and the cluster's front door give their Metrics,
// and [FreeAddr] and [WaitFor] read a program's Prometheus endpoint, as
// the example servers' tests do. It is for tests only.
package metricstest
