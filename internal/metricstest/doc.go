// Package metricstest is the test kit of framewire's metrics: a [Reader]
// is an SDK MeterProvider with a ManualReader, given to the package under
// test (webrtc.Options.MeterProvider, cluster.FrontDoorOptions) so the
// test reads back the real instruments that package owns; [FreeAddr] and
// [WaitFor] read a program's Prometheus endpoint, as the example servers'
// tests do. It is for tests only.
package metricstest
