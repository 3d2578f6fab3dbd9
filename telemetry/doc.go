// Package telemetry exports what framewire sessions do as OpenTelemetry
// traces and metrics, and serves the metrics to Prometheus.
//
// It sits beside the runtime, never inside it: a [Session] is an observer
// (package observers) that derives a span tree (session, turn, STT, each
// LLM inference, each tool call, each TTS) and the session metrics from the
// frames it sees, so no processor imports telemetry and nothing in the
// core does. What only a transport knows (late output frames, underruns,
// Opus complexity, signalling responses, limit refusals) the transport
// records on instruments of its own, made from the MeterProvider the
// program gives it ([Telemetry.MeterProvider]), as OpenTelemetry-Go's
// guidelines for instrumented libraries ask.
//
// Telemetry takes providers and never builds them ([New] with
// Options.TracerProvider and Options.MeterProvider): the program sets up
// the SDK, the OTLP exporters, the OTEL_* environment and the Prometheus
// endpoint with the sub-package otelsetup and hands its providers to
// telemetry, to the transport and to the cluster. Without providers,
// [Telemetry.StartSession] returns a nil *Session whose methods do
// nothing, so no observer is added and the frame path does no work at
// all.
//
// The live session inspector is in the sub-package inspector.
package telemetry
