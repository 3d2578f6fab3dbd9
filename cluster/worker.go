package cluster

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
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
}

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.ID == "" {
		o.ID = uuid.NewString()
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.HeartbeatInterval = positive(o.HeartbeatInterval, time.Second)
	o.RequestTimeout = positive(o.RequestTimeout, 25*time.Second)
	o.DrainTimeout = positive(o.DrainTimeout, 30*time.Second)
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 64
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 1 << 20
	}
	if o.MaxReplyBytes <= 0 {
		o.MaxReplyBytes = 256 << 10
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
// The Server is the one source of truth: its MaxSessions is the worker's
// capacity, its Options.Admit and Options.OnSession hooks tell the worker
// what a request refused or created (the ids the front doors route by),
// and [webrtc.Server.Owns] answers who-owns-this-id.
//
// Build it with [NewWorker], which builds the Server, and serve with
// [Worker.Run]: the Worker owns the Server (Run shuts it down); the NATS
// connection stays the caller's.
type Worker struct {
	opts WorkerOptions
	log  *zap.Logger
	nc   *nats.Conn
	srv  *webrtc.Server
	subj subjects

	// slots bounds the requests replayed at once.
	slots    chan struct{}
	draining atomic.Bool
	ran      atomic.Bool
	// wg owns the goroutines replaying requests; once stopped is set
	// (under mu) no more are started, so Run can wait for them.
	wg      sync.WaitGroup
	mu      sync.Mutex
	stopped bool
}

// NewWorker returns a worker that serves, on nc, the webrtc.Server it
// builds from server. The worker adds its own Admit and OnSession hooks
// to server's (it calls the application's after its own). NewWorker fails
// on invalid options; it does not touch NATS until Run.
func NewWorker(nc *nats.Conn, server webrtc.Options, opts WorkerOptions) (*Worker, error) {
	if nc == nil {
		return nil, errors.New("cluster: NewWorker needs a NATS connection")
	}
	opts = opts.withDefaults()
	if err := validWorkerID(opts.ID); err != nil {
		return nil, err
	}
	if err := validPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	w := &Worker{
		opts:  opts,
		log:   opts.Logger.With(zap.String("worker", opts.ID)),
		nc:    nc,
		subj:  subjects{opts.Prefix},
		slots: make(chan struct{}, opts.MaxConcurrent),
	}
	appAdmit, appOnSession := server.Admit, server.OnSession
	server.Admit = func(r *http.Request) error {
		if err := w.admit(r); err != nil || appAdmit == nil {
			return err
		}
		return appAdmit(r)
	}
	server.OnSession = func(ev webrtc.SessionEvent) {
		recordIDs(ev)
		if appOnSession != nil {
			appOnSession(ev)
		}
	}
	srv, err := webrtc.NewServer(server)
	if err != nil {
		return nil, err
	}
	w.srv = srv
	return w, nil
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.opts.ID }

// Server returns the worker's webrtc.Server: to serve its signalling
// directly as well (debugging a worker without a front door), or to look
// at its sessions.
func (w *Worker) Server() *webrtc.Server { return w.srv }

// capacity is the number of live sessions the worker takes, as its
// heartbeats announce it: the Server's MaxSessions.
func (w *Worker) capacity() int {
	if n := w.srv.MaxSessions(); n > 0 {
		return n
	}
	return math.MaxInt32 // no limit
}

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
	w.log.Info("worker serving", zap.Int("capacity", w.capacity()))
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
		Sessions: w.srv.SessionCount(), Capacity: w.capacity(),
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
	// pc_ids and sessionIds are the Server's UUIDs: one lookup answers
	// for both kinds.
	b, _ := json.Marshal(whoReply{V: Version, Worker: w.opts.ID, Owns: w.srv.Owns(q.ID)})
	_ = m.Respond(b)
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
	// draining. A draining worker declines the rest of what is new at
	// once; the Server's own limits and the worker's Admit hook decide
	// the others.
	taking := req.Kind == kindNew && req.Method != http.MethodOptions
	if taking && w.draining.Load() {
		w.respond(m, reply{Declined: "draining"})
		return
	}
	ctx, cancel := context.WithTimeout(base, w.opts.RequestTimeout)
	defer cancel()
	ex := new(exchange)
	hr, err := req.http(context.WithValue(ctx, exchangeKey{}, ex))
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
	switch {
	case taking && rep.Status == http.StatusServiceUnavailable:
		// Full, draining or shutting down: another worker may have room.
		rep.Declined = cmp.Or(ex.declined, "unavailable")
	case rep.Status == http.StatusOK:
		// The ids the request created, which the front door routes here.
		rep.PCID, rep.StartID = ex.pcID, ex.startID
	}
	w.respond(m, rep)
}

// exchange is what the Server's hooks tell of one request the worker
// replays into it. The Server calls them on the request's goroutine, so
// the worker reads it once ServeHTTP has returned.
type exchange struct {
	// pcID is the pc_id a new session or a restart got; startID the
	// sessionId a /start issued.
	pcID, startID string
	// declined says why the worker's Admit hook refused the request.
	declined string
}

// exchangeKey is the request context key of a replayed request's
// *exchange.
type exchangeKey struct{}

// exchangeOf returns the exchange of a request the worker replays, nil
// for any other (nil included).
func exchangeOf(r *http.Request) *exchange {
	if r == nil {
		return nil
	}
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return ex
}

// errNotTaking is the worker's Admit refusal; the client reads the
// Server's 503, the front door the reason in the exchange.
var errNotTaking = errors.New("cluster: the worker takes no new sessions now")

// admit is the worker's part of the Server's Admit hook. A draining worker
// takes nothing new (the front doors no longer send it new sessions, but
// a /start flow's offer still comes where its sessionId was issued). A
// full one takes no /start: its offer would come here, where the Server
// has no room, so the front door had better ask another worker.
func (w *Worker) admit(r *http.Request) error {
	reason := ""
	switch {
	case w.draining.Load():
		reason = "draining"
	case r.URL.Path == "/start" && w.srv.MaxSessions() > 0 && w.srv.SessionCount() >= w.srv.MaxSessions():
		reason = "full"
	default:
		return nil
	}
	if ex := exchangeOf(r); ex != nil {
		ex.declined = reason
	}
	return fmt.Errorf("%w: %s", errNotTaking, reason)
}

// recordIDs is the worker's part of the Server's OnSession hook: it records
// the ids a replayed request created for the worker's reply.
func recordIDs(ev webrtc.SessionEvent) {
	ex := exchangeOf(ev.Request)
	if ex == nil {
		return
	}
	switch ev.Kind {
	case webrtc.StartIssued:
		ex.startID = ev.StartID
	case webrtc.SessionStarted, webrtc.SessionRestarted:
		ex.pcID = ev.PCID
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
