// Package cluster spreads framewire's sessions over processes with
// NATS, without a sticky load balancer or a broker of framewire's own.
//
// A [Worker] wraps a transports/webrtc Server, which runs the sessions and
// their pipelines; a [FrontDoor] serves the signalling routes of
// docs/protocol.md §1 and holds no session, so any number of front doors
// may sit behind a plain HTTP load balancer. A new session (a first offer,
// a /start) goes through a NATS queue group to one worker, and to others
// when it declines (full, draining); every later request of the session
// (candidates, renegotiation, restart, the /start flow's offers) goes to
// the worker that owns its pc_id or sessionId. Workers announce their load
// on a heartbeat subject; front doors forget a worker that missed three
// beats. Media flows between the browser and the worker directly.
//
// A worker may also serve Pipecat's WebSocket transport
// ([WorkerOptions.WebSocket]): the front door relays a POST /connect, as a
// new session, to a worker of the WebSocket queue group with room, and
// returns its answer, {"wsUrl": ...} naming the worker's own socket
// listener, so the browser's socket goes straight to the worker too.
//
// The subjects, payloads and their version are in docs/decisions/cluster.md;
// docs/deploying.md explains how to run a cluster, and examples/cluster is
// one binary with the frontdoor, worker and local commands.
package cluster
