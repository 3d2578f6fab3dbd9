package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/framewire/framewire/transports/webrtc"
)

// WorkerOptions configure a [Worker]. Every zero field takes the default
// in its comment.
type WorkerOptions struct {
	// ID names the worker on its subject and in heartbeats: 1 to 64 of
	// [A-Za-z0-9_-]. Default: a random UUID.
	ID string
	// Prefix is the first tokens of the cluster's subjects; front doors
	// and workers of one cluster share it. Default: DefaultPrefix.
	Prefix string
	// Capacity is the number of live sessions past which the worker
	// declines new ones (set the Server's MaxSessions to the same number,
	// or higher). Default: 100.
	Capacity int
	// Logger receives the worker's logs. Default: zap.NewNop().
	Logger *zap.Logger
	// HeartbeatInterval is the time between two heartbeats. Default: 1s.
	HeartbeatInterval time.Duration
	// RequestTimeout bounds the replay of one request into the Server (an
	// offer waits for ICE gathering). Default: 25s; keep it under the
	// front doors' RequestTimeout.
	RequestTimeout time.Duration
	// MaxConcurrent bounds the requests replayed at once; past it new
	// sessions are declined and other requests get a 503. Default: 64.
	MaxConcurrent int
	// MaxRequestBytes bounds a request payload. Default: 1 MiB (NATS's
	// default max_payload).
	MaxRequestBytes int
	// MaxReplyBytes bounds the Server's response body (an answer is a few
	// kilobytes); a longer one is replaced by a 502. Default: 256 KiB.
	MaxReplyBytes int
	// DrainTimeout bounds the drain once Run's context ends: the Server's
	// Shutdown, after which the sessions left are cancelled (Close).
	// Default: 30s (the Server's ShutdownGrace, 10s by default, plus the
	// time cancelled pipelines take to close).
	DrainTimeout time.Duration
	// MaxStarts bounds the /start sessionIds the worker remembers issuing
	// (to answer who requests); each is forgotten StartTTL after its last
	// use. Defaults: 10000 and 10m (the Server's StartTTL).
	MaxStarts int
	StartTTL  time.Duration
}

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.ID == "" {
		o.ID = uuid.NewString()
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Capacity <= 0 {
		o.Capacity = 100
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.HeartbeatInterval = positive(o.HeartbeatInterval, time.Second)
	o.RequestTimeout = positive(o.RequestTimeout, 25*time.Second)
	o.DrainTimeout = positive(o.DrainTimeout, 30*time.Second)
	o.StartTTL = positive(o.StartTTL, 10*time.Minute)
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 64
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 1 << 20
	}
	if o.MaxReplyBytes <= 0 {
		o.MaxReplyBytes = 256 << 10
	}
	if o.MaxStarts <= 0 {
		o.MaxStarts = 10000
	}
	return o
}

func positive(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Worker puts a webrtc.Server at the cluster's disposal: it takes new
// sessions from the front doors through a NATS queue group, serves the
// later requests of its own sessions on a subject of its own, answers
// who-owns-this-id questions, and announces its load every
// HeartbeatInterval. Media flows between the browser and the Server
// directly; the worker carries signalling only.
//
// Build it with [NewWorker] and serve with [Worker.Run]: the Worker owns
// the Server from NewWorker on (Run shuts it down); the NATS connection
// stays the caller's.
type Worker struct {
	opts WorkerOptions
	log  *zap.Logger
	nc   *nats.Conn
	srv  *webrtc.Server
	subj subjects

	// slots bounds the requests replayed at once.
	slots chan struct{}
	// admitting counts the new sessions accepted and still being answered,
	// which SessionCount does not show yet.
	admitting atomic.Int32
	draining  atomic.Bool
	starts    *table
	ran       atomic.Bool
	// wg owns the goroutines replaying requests; once stopped is set
	// (under mu) no more are started, so Run can wait for them.
	wg      sync.WaitGroup
	mu      sync.Mutex
	stopped bool
}

// NewWorker returns a worker that serves srv on nc. It fails on invalid
// options; it does not touch NATS until Run.
func NewWorker(nc *nats.Conn, srv *webrtc.Server, opts WorkerOptions) (*Worker, error) {
	if nc == nil || srv == nil {
		return nil, errors.New("cluster: NewWorker needs a NATS connection and a webrtc.Server")
	}
	opts = opts.withDefaults()
	if err := validWorkerID(opts.ID); err != nil {
		return nil, err
	}
	if err := validPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	return &Worker{
		opts:   opts,
		log:    opts.Logger.With(zap.String("worker", opts.ID)),
		nc:     nc,
		srv:    srv,
		subj:   subjects{opts.Prefix},
		slots:  make(chan struct{}, opts.MaxConcurrent),
		starts: newTable(opts.MaxStarts, opts.StartTTL),
	}, nil
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.opts.ID }

// ErrConnectionClosed is returned by [Worker.Run] when its NATS
// connection was closed under it: the worker is cut off from the cluster,
// so it closed its sessions.
var ErrConnectionClosed = errors.New("cluster: the NATS connection was closed")

// Run serves until ctx ends, then drains: it stops taking sessions (it
// leaves the queue group and declines what still reaches it), lets the
// Server end its sessions gracefully within DrainTimeout
// (webrtc.Server.Shutdown; their signalling keeps working meanwhile),
// cancels those left (Close), says it is leaving and returns nil. Cancel
// ctx on SIGTERM. If the NATS connection is closed under it, Run closes
// the Server at once and returns ErrConnectionClosed. Run may be called
// once.
func (w *Worker) Run(ctx context.Context) error {
	if !w.ran.CompareAndSwap(false, true) {
		return errors.New("cluster: Worker.Run called twice")
	}
	if err := w.claimID(ctx); err != nil {
		_ = w.srv.Close()
		return err
	}
	base := context.WithoutCancel(ctx)
	var subs []*nats.Subscription
	unsubscribe := func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		subs = nil
	}
	subscribe := func(s *nats.Subscription, err error) error {
		if err == nil {
			subs = append(subs, s)
		}
		return err
	}
	queue, err := w.nc.QueueSubscribe(w.subj.newSession(), queueGroup, func(m *nats.Msg) { w.dispatch(base, m) })
	err = errors.Join(err,
		subscribe(w.nc.Subscribe(w.subj.worker(w.opts.ID), func(m *nats.Msg) { w.dispatch(base, m) })),
		subscribe(w.nc.Subscribe(w.subj.who(), w.answerWho)),
		subscribe(w.nc.Subscribe(w.subj.announce(), func(m *nats.Msg) { _ = m.Respond(w.heartbeat(false)) })))
	if err == nil {
		// The subscriptions must reach the server before the heartbeat
		// that makes front doors route here.
		err = w.nc.Flush()
	}
	if err != nil {
		if queue != nil {
			_ = queue.Unsubscribe()
		}
		unsubscribe()
		_ = w.srv.Close()
		return fmt.Errorf("cluster: worker %s subscribing: %w", w.opts.ID, err)
	}
	w.log.Info("worker serving", zap.Int("capacity", w.opts.Capacity))
	w.beat(false)

	tick := time.NewTicker(w.opts.HeartbeatInterval)
	defer tick.Stop()
	lost := func() error {
		w.log.Warn("NATS connection closed: closing the sessions", zap.Int("sessions", w.srv.SessionCount()))
		_ = w.srv.Close()
		w.stop()
		return ErrConnectionClosed
	}
	for serving := true; serving; {
		select {
		case <-ctx.Done():
			serving = false
		case <-tick.C:
			if w.nc.IsClosed() {
				return lost()
			}
			w.beat(false)
			w.starts.expire(time.Now())
		}
	}

	// Drain: out of the queue group first, so NATS stops picking this
	// worker; what is already on its way is declined.
	w.draining.Store(true)
	// Drain, not Unsubscribe: the requests NATS has already handed this
	// subscription are declined instead of dropped (their front doors
	// would wait out their timeout).
	if err := queue.Drain(); err != nil {
		_ = queue.Unsubscribe()
	}
	w.log.Info("worker draining", zap.Int("sessions", w.srv.SessionCount()), zap.Duration("timeout", w.opts.DrainTimeout))
	w.beat(false)
	sctx, cancel := context.WithTimeout(base, w.opts.DrainTimeout)
	defer cancel()
	drained := make(chan error, 1)
	w.wg.Go(func() { drained <- w.srv.Shutdown(sctx) })
	for waiting := true; waiting; {
		select {
		case err := <-drained:
			if err != nil {
				w.log.Warn("sessions did not end in time: cancelling them", zap.Error(err))
				_ = w.srv.Close()
			}
			waiting = false
		case <-tick.C:
			if w.nc.IsClosed() {
				cancel()
				return lost()
			}
			w.beat(false)
		}
	}
	w.beat(true)
	unsubscribe()
	_ = w.nc.Flush()
	w.stop()
	w.log.Info("worker left")
	return nil
}

// ErrDuplicateID is returned by [Worker.Run] when another worker of the
// cluster answers on the worker's own subject: two workers with one id
// would both get the requests meant for one of them.
var ErrDuplicateID = errors.New("cluster: another worker has this id")

// claimID checks that no live worker answers on this worker's subject.
func (w *Worker) claimID(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := w.nc.RequestWithContext(ctx, w.subj.worker(w.opts.ID), nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil
	case err == nil:
		return fmt.Errorf("%w: %s", ErrDuplicateID, w.opts.ID)
	case errors.Is(err, context.DeadlineExceeded):
		// Something holds the subject without answering; it is not a
		// worker of this version.
		w.log.Warn("the worker's subject has a silent subscriber", zap.String("subject", w.subj.worker(w.opts.ID)))
		return nil
	}
	return fmt.Errorf("cluster: worker %s checking its id: %w", w.opts.ID, err)
}

// heartbeat returns the encoded heartbeat of now.
func (w *Worker) heartbeat(leaving bool) []byte {
	b, _ := json.Marshal(heartbeat{
		V: Version, Worker: w.opts.ID,
		Sessions: w.srv.SessionCount(), Capacity: w.opts.Capacity,
		Draining: w.draining.Load(), Leaving: leaving,
		IntervalMS: int(w.opts.HeartbeatInterval / time.Millisecond),
	})
	return b
}

func (w *Worker) beat(leaving bool) {
	if err := w.nc.Publish(w.subj.heartbeat(), w.heartbeat(leaving)); err != nil {
		w.log.Debug("heartbeat not sent", zap.Error(err))
	}
}

// answerWho answers a who request: every worker answers, so a front door
// knows it has heard from all the workers it knows of.
func (w *Worker) answerWho(m *nats.Msg) {
	q, err := decodeWho(m.Data)
	if err != nil {
		w.log.Debug("dropped a who request", zap.Error(err))
		return
	}
	b, _ := json.Marshal(whoReply{V: Version, Worker: w.opts.ID, Owns: w.owns(q.Kind, q.ID)})
	_ = m.Respond(b)
}

// owns reports whether a live session of the worker has pc_id id (kind
// keyPC) or whether the worker issued the sessionId id (keyStart).
func (w *Worker) owns(kind, id string) bool {
	if kind == keyStart {
		_, ok := w.starts.get(id, time.Now())
		return ok
	}
	s, ok := w.srv.Session(id)
	if !ok {
		return false
	}
	select {
	case <-s.Done():
		return false
	default:
		return true
	}
}

// dispatch hands a request to a goroutine of its own (an offer takes as
// long as ICE gathering), at most MaxConcurrent at once.
func (w *Worker) dispatch(base context.Context, m *nats.Msg) {
	select {
	case w.slots <- struct{}{}:
	default:
		w.respond(m, reply{Declined: "busy", Status: http.StatusServiceUnavailable,
			Header: http.Header{"Retry-After": {"1"}}, Body: errorJSON("the worker is busy; retry later")})
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		<-w.slots
		return
	}
	w.wg.Go(func() {
		defer func() { <-w.slots }()
		w.serve(base, m)
	})
}

// stop starts no more request goroutines and waits for those running.
func (w *Worker) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.wg.Wait()
}

// serve replays one request into the Server and replies with its
// response.
func (w *Worker) serve(base context.Context, m *nats.Msg) {
	req, err := decodeRequest(m.Data, w.opts.MaxRequestBytes)
	if err != nil {
		w.log.Info("declined a request it cannot read", zap.Error(err))
		w.respond(m, reply{Declined: "unreadable request"})
		return
	}
	// A CORS preflight creates nothing: any worker answers it, full or
	// draining.
	switch {
	case req.Kind == kindNew && req.Method != http.MethodOptions:
		if reason := w.admit(); reason != "" {
			w.respond(m, reply{Declined: reason})
			return
		}
		defer w.admitting.Add(-1)
	case req.Kind == kindRoute && w.createsSession(&req):
		// A /start flow's first offer is routed here, where its
		// sessionId was issued, but creates a session all the same: it
		// takes room like any other, and waits for it (only this worker
		// knows the sessionId, so the client retries here).
		if reason := w.admit(); reason != "" {
			w.respond(m, reply{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"1"}},
				Body: errorJSON("the worker is " + reason + "; retry later")})
			return
		}
		defer w.admitting.Add(-1)
	}
	ctx, cancel := context.WithTimeout(base, w.opts.RequestTimeout)
	defer cancel()
	hr, err := req.http(ctx)
	if err != nil {
		w.respond(m, reply{Status: http.StatusBadRequest, Body: errorJSON("bad request path")})
		return
	}
	rec := newRecorder(w.opts.MaxReplyBytes)
	w.srv.ServeHTTP(rec, hr)
	rep := reply{Status: rec.status(), Header: rec.header, Body: rec.body.Bytes()}
	if rec.over {
		w.log.Error("response over MaxReplyBytes", zap.String("path", req.Path), zap.Int("limit", w.opts.MaxReplyBytes))
		rep = reply{Status: http.StatusBadGateway, Body: errorJSON("the worker's response is too large")}
	}
	if req.Kind == kindNew && req.Method != http.MethodOptions && rep.Status == http.StatusServiceUnavailable {
		// Full or shutting down after all: another worker may have room.
		rep.Declined = "unavailable"
	}
	if rep.Status == http.StatusOK {
		w.learn(&req, &rep)
	}
	w.respond(m, rep)
}

// createsSession reports whether a routed request would make the Server
// create a session: an offer (to /api/offer or a /start flow's
// /sessions/{id}/api/offer) whose pc_id is none of its live sessions'.
// (A later version may ask the Server instead of reading the body.)
func (w *Worker) createsSession(req *request) bool {
	if req.Method != http.MethodPost || !strings.HasSuffix(strings.TrimSuffix(req.Path, "/"), "/api/offer") {
		return false
	}
	id := pcIDOf(req.Body)
	return id == "" || !w.owns(keyPC, id)
}

// admit claims room for a new session, or returns why there is none.
func (w *Worker) admit() string {
	if w.draining.Load() {
		return "draining"
	}
	if n := w.admitting.Add(1); int(n)+w.srv.SessionCount() > w.opts.Capacity {
		w.admitting.Add(-1)
		return "full"
	}
	return ""
}

// learn fills in the ids of a successful reply for the front door, and
// remembers the sessionIds issued here.
func (w *Worker) learn(req *request, rep *reply) {
	now := time.Now()
	switch {
	case req.Path == "/start" && req.Method == http.MethodPost:
		var v struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(rep.Body, &v) == nil && v.SessionID != "" && len(v.SessionID) <= maxID {
			rep.StartID = v.SessionID
			w.starts.put(v.SessionID, w.opts.ID, now)
		}
		return
	case strings.HasPrefix(req.Path, "/sessions/"):
		if id, _, _ := strings.Cut(strings.TrimPrefix(req.Path, "/sessions/"), "/"); id != "" {
			w.starts.put(id, w.opts.ID, now)
		}
	}
	if req.Method == http.MethodPost && strings.HasSuffix(strings.TrimSuffix(req.Path, "/"), "api/offer") {
		rep.PCID = pcIDOf(rep.Body)
	}
}

func (w *Worker) respond(m *nats.Msg, rep reply) {
	rep.V, rep.Worker = Version, w.opts.ID
	b, err := json.Marshal(rep)
	if mp := w.nc.MaxPayload(); err == nil && mp > 0 && int64(len(b)) > mp {
		err = fmt.Errorf("%w: %d bytes", errTooLarge, len(b))
	}
	if err != nil {
		w.log.Error("reply not encoded", zap.Error(err))
		b, _ = json.Marshal(reply{V: Version, Worker: w.opts.ID, Status: http.StatusBadGateway, Body: errorJSON("the worker's reply is too large")})
	}
	if err := m.Respond(b); err != nil {
		w.log.Debug("reply not sent", zap.Error(err))
	}
}

// http rebuilds the HTTP request r describes.
func (r *request) http(ctx context.Context) (*http.Request, error) {
	u, err := url.Parse(r.Path)
	if err != nil || u.Path != r.Path && u.RawPath == "" || u.Host != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("cluster: bad path %q", r.Path)
	}
	u.RawQuery = r.Query
	hr, err := http.NewRequestWithContext(ctx, r.Method, "/", bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	hr.URL = u
	hr.RequestURI = u.RequestURI()
	// The front door checked the client's Host against its own
	// allowlist; the Server sees a name its default allowlist admits.
	hr.Host = "localhost"
	if r.Header != nil {
		hr.Header = r.Header
	}
	hr.RemoteAddr = r.Remote
	return hr, nil
}

// errorJSON is the body of an error the cluster answers itself, in the
// shape of webrtc.Server's.
func errorJSON(detail string) []byte {
	b, _ := json.Marshal(struct {
		Detail string `json:"detail"`
	}{detail})
	return b
}

// recorder is a bounded http.ResponseWriter.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
	max    int
	over   bool
}

func newRecorder(limit int) *recorder { return &recorder{header: http.Header{}, max: limit} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.body.Len()+len(p) > r.max {
		r.over = true
		return 0, errTooLarge
	}
	return r.body.Write(p)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}
