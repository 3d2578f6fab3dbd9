package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Version is the version of the cluster's wire protocol: the subjects'
// ".v1." token and the "v" field of every payload
// (docs/decisions/cluster.md). A process drops, or declines, a payload of
// another version, so a rolling upgrade that changes it runs the two
// versions on separate subjects.
const Version = 1

// DefaultPrefix is the first tokens of every subject the cluster uses.
const DefaultPrefix = "framewire.cluster"

// queueGroup is the NATS queue group the workers' new-session
// subscriptions share: NATS hands each new-session request to one member.
const queueGroup = "workers"

// Request kinds.
const (
	// kindNew asks a worker to take a new session (or a /start, a
	// /connect, or a CORS preflight: anything no session owns yet). A
	// worker at capacity or draining declines it.
	kindNew = "new"
	// kindRoute carries a request for a session the worker owns; it is
	// never declined.
	kindRoute = "route"
)

// Ownership key kinds of a who request.
const (
	keyPC    = "pc"    // a pc_id
	keyStart = "start" // a /start sessionId
)

// subjects are the NATS subjects of one cluster, all under one prefix.
type subjects struct {
	prefix string
}

func (s subjects) newSession() string { return s.prefix + ".v1.sessions.new" }

// newWebSocket is the subject of a new WebSocket session (a /connect):
// only the workers that serve the WebSocket transport are in its queue
// group.
func (s subjects) newWebSocket() string { return s.prefix + ".v1.sessions.websocket" }
func (s subjects) worker(id string) string {
	return s.prefix + ".v1.worker." + id
}
func (s subjects) who() string       { return s.prefix + ".v1.who" }
func (s subjects) heartbeat() string { return s.prefix + ".v1.heartbeat" }
func (s subjects) announce() string  { return s.prefix + ".v1.announce" }

// validPrefix reports whether p is a dot-separated run of NATS subject
// tokens without wildcards.
func validPrefix(p string) error {
	if p == "" || len(p) > 128 {
		return fmt.Errorf("cluster: subject prefix %q must have 1 to 128 characters", p)
	}
	for tok := range strings.SplitSeq(p, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
			return fmt.Errorf("cluster: subject prefix %q is not a run of plain NATS tokens", p)
		}
	}
	return nil
}

// validWorkerID reports whether id can be a subject token and a JSON
// string without escaping: 1 to 64 of [A-Za-z0-9_-].
func validWorkerID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("cluster: worker id %q must have 1 to 64 characters", id)
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("cluster: worker id %q may hold only letters, digits, '_' and '-'", id)
		}
	}
	return nil
}

// request is what a front door sends a worker: one HTTP request of the
// signalling routes, to replay into its webrtc.Server, or, for /connect,
// into its websocket.Server.
type request struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	// Method, Path and Query are the request line's.
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// Header holds the forwarded headers only (FrontDoorOptions.ForwardHeaders).
	Header http.Header `json:"header,omitempty"`
	// Remote is the address the front door got the request from
	// (http.Request.RemoteAddr), for the worker's per-address limits.
	Remote string `json:"remote,omitempty"`
	Body   []byte `json:"body,omitempty"`
}

// reply is a worker's answer to a request.
type reply struct {
	V      int    `json:"v"`
	Worker string `json:"worker"`
	// Declined, when set, says why the worker did not take a new session
	// (full, draining, busy, a payload it cannot read); the front door
	// tries another worker. Status, Header and Body may still hold the
	// worker's 503.
	Declined string      `json:"declined,omitempty"`
	Status   int         `json:"status,omitempty"`
	Header   http.Header `json:"header,omitempty"`
	Body     []byte      `json:"body,omitempty"`
	// PCID and StartID are the ids the reply created or used, which the
	// front door routes to this worker from now on.
	PCID    string `json:"pc_id,omitempty"`
	StartID string `json:"start_id,omitempty"`
}

// whoRequest asks every worker whether it owns a pc_id or a sessionId.
type whoRequest struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// whoReply is every worker's answer to a whoRequest.
type whoReply struct {
	V      int    `json:"v"`
	Worker string `json:"worker"`
	Owns   bool   `json:"owns"`
}

// heartbeat is a worker's announcement of itself and its load.
type heartbeat struct {
	V      int    `json:"v"`
	Worker string `json:"worker"`
	// Sessions is the number of live sessions, Capacity the number the
	// worker takes at most, of every transport it serves (at most
	// math.MaxInt32, which also stands for no limit).
	Sessions int `json:"sessions"`
	Capacity int `json:"capacity"`
	// WebRTC and WebSocket are each transport's share, sent by a worker
	// that serves the WebSocket transport (one serving WebRTC only sends
	// neither: its Sessions and Capacity are WebRTC's). A worker without
	// WebSocket is never sent a /connect.
	WebRTC    *Load `json:"webrtc,omitempty"`
	WebSocket *Load `json:"websocket,omitempty"`
	// Draining is set once the worker stops taking sessions; Leaving on
	// its last heartbeat, when it unsubscribes.
	Draining bool `json:"draining,omitempty"`
	Leaving  bool `json:"leaving,omitempty"`
	// IntervalMS is the time to the next heartbeat; front doors forget a
	// worker after three of them without one.
	IntervalMS int `json:"interval_ms"`
}

// Errors of the decoders.
var (
	errTooLarge = errors.New("cluster: payload over its size limit")
	errVersion  = errors.New("cluster: payload of another protocol version")
)

// decode unmarshals a payload of at most limit bytes into v and checks
// its version field.
func decode(data []byte, limit int, v any, version func() int) error {
	if len(data) > limit {
		return fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, len(data), limit)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("cluster: malformed payload: %w", err)
	}
	if got := version(); got != Version {
		return fmt.Errorf("%w: v%d, want v%d", errVersion, got, Version)
	}
	return nil
}

// decodeRequest reads a request of at most limit bytes.
func decodeRequest(data []byte, limit int) (request, error) {
	var r request
	if err := decode(data, limit, &r, func() int { return r.V }); err != nil {
		return request{}, err
	}
	if r.Kind != kindNew && r.Kind != kindRoute {
		return request{}, fmt.Errorf("cluster: request of unknown kind %q", r.Kind)
	}
	switch r.Method {
	case http.MethodPost, http.MethodPatch, http.MethodOptions, http.MethodGet, http.MethodHead:
	default:
		return request{}, fmt.Errorf("cluster: request with method %q", r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") || len(r.Path) > maxPath || len(r.Query) > maxPath {
		return request{}, fmt.Errorf("cluster: request path of %d bytes is not an absolute path of at most %d", len(r.Path), maxPath)
	}
	return r, nil
}

// maxPath bounds a forwarded path and query string.
const maxPath = 2048

// decodeReply reads a reply of at most limit bytes.
func decodeReply(data []byte, limit int) (reply, error) {
	var r reply
	if err := decode(data, limit, &r, func() int { return r.V }); err != nil {
		return reply{}, err
	}
	if err := validWorkerID(r.Worker); err != nil {
		return reply{}, err
	}
	if r.Declined == "" && (r.Status < 100 || r.Status > 599) {
		return reply{}, fmt.Errorf("cluster: reply with status %d", r.Status)
	}
	return r, nil
}

// decodeHeartbeat reads a heartbeat.
func decodeHeartbeat(data []byte) (heartbeat, error) {
	var h heartbeat
	if err := decode(data, maxSmallPayload, &h, func() int { return h.V }); err != nil {
		return heartbeat{}, err
	}
	if err := validWorkerID(h.Worker); err != nil {
		return heartbeat{}, err
	}
	for _, l := range []*Load{{h.Sessions, h.Capacity}, h.WebRTC, h.WebSocket} {
		if l != nil && (l.Sessions < 0 || l.Capacity < 0) {
			return heartbeat{}, fmt.Errorf("cluster: heartbeat of %s with %d sessions and capacity %d", h.Worker, l.Sessions, l.Capacity)
		}
	}
	return h, nil
}

// decodeWho reads a who request.
func decodeWho(data []byte) (whoRequest, error) {
	var w whoRequest
	if err := decode(data, maxSmallPayload, &w, func() int { return w.V }); err != nil {
		return whoRequest{}, err
	}
	if (w.Kind != keyPC && w.Kind != keyStart) || w.ID == "" || len(w.ID) > maxID {
		return whoRequest{}, fmt.Errorf("cluster: who request for a %q id of %d bytes", w.Kind, len(w.ID))
	}
	return w, nil
}

// decodeWhoReply reads a who reply.
func decodeWhoReply(data []byte) (whoReply, error) {
	var w whoReply
	if err := decode(data, maxSmallPayload, &w, func() int { return w.V }); err != nil {
		return whoReply{}, err
	}
	return w, validWorkerID(w.Worker)
}

// maxSmallPayload bounds heartbeats and who messages, which are tens of
// bytes.
const maxSmallPayload = 4 << 10

// maxID bounds a pc_id or sessionId (framewire's are 36-byte UUIDs).
const maxID = 256

// pcIDOf returns the pc_id of an offer or PATCH body, "" when it has none
// (or is not JSON: the worker then answers the 400).
func pcIDOf(body []byte) string {
	var v struct {
		PCID *string `json:"pc_id"`
	}
	if json.Unmarshal(body, &v) != nil || v.PCID == nil || len(*v.PCID) > maxID {
		return ""
	}
	return *v.PCID
}
