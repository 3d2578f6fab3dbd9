// Command cluster runs framewire's sessions over several processes with
// NATS (package cluster): stateless front doors that serve the signalling
// routes, and workers that run the sessions, the conformance bot's by
// default (examples/internal/conformancebot, docs/protocol.md §10), so the
// client test suites that run against examples/conformance run against a
// front door unchanged.
//
//	go run -tags "opus nolibopusfile" ./examples/cluster local -workers 3
//
// starts an embedded NATS server, a front door on 127.0.0.1:7861 and three
// workers, each a child process of the same binary; Ctrl-C stops them all
// (the workers drain). Across machines, run the parts yourself against a
// NATS server (docs/deploying.md):
//
//	cluster worker -nats nats://nats:4222 -capacity 100 -id w1
//	cluster frontdoor -nats nats://nats:4222 -addr :7861
//
// The front door prints "listening on http://ADDR" on stdout once it
// accepts connections and serves, besides the signalling routes, GET
// /healthz; its -status-addr listener (127.0.0.1:7862 by default; it
// prints "status on http://ADDR") serves GET /cluster (the workers and
// their sessions, as JSON) and /healthz to operators. Every command takes
// NATS credentials: -nats-creds, -nats-nkey, or -nats-user with the
// password in $NATS_PASSWORD, and -nats-ca for a tls:// server; local's
// embedded server takes a random password it hands its children. A
// worker needs no HTTP port (-addr serves its signalling directly, for
// debugging): it reaches the front doors over NATS, and media flows
// between the browser and the worker over UDP (-port-min, -port-max,
// -public-ip). On SIGTERM a worker stops taking sessions, lets its
// sessions end within -grace, then cancels them and leaves.
//
// With -ws-addr a worker also serves Pipecat's WebSocket transport: the
// front door relays POST /connect to a worker with room, which answers
// {"wsUrl": its -ws-public-url with the session's id}, and the browser
// opens its socket straight to that worker's -ws-addr listener (it prints
// "worker ID websocket on URL"). local -ws-addr numbers its workers'
// socket listeners as -worker-addr does.
//
// Telemetry is as in the other example servers (docs/observability.md):
// OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, Prometheus metrics at
// /metrics on -metrics-addr (default $FRAMEWIRE_METRICS_ADDR). local gives
// each child its own metrics port, counted up from its -metrics-addr.
package main
