package cluster

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket"
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
	// WebSocket, if set, makes the worker serve Pipecat's WebSocket
	// transport beside WebRTC: the front doors relay a /connect to it and
	// the browser opens its socket straight to the worker. Default: nil,
	// WebRTC only.
	WebSocket *WebSocketOptions
}

// WebSocketOptions make a [Worker] serve Pipecat's WebSocket transport
// (package transports/websocket) as well as WebRTC.
//
// A /connect reaches the worker through a front door, as a new session
// does; the worker replays it into its websocket.Server, which answers
// {"wsUrl": Server.PublicURL + "?session=<id>"}. The socket then goes
// from the browser to the worker directly, on Listener: media never
// passes through a front door or NATS.
type WebSocketOptions struct {
	// Server configures the worker's websocket.Server, whose sessions the
	// worker counts in its load: its MaxSessions bounds them (the worker
	// declines a /connect once the Server is full). Server.PublicURL is
	// required: the socket's URL as browsers reach this worker
	// ("wss://w1.voice.example.com/ws"), which only the worker knows. The
	// worker adds its Admit hook to the application's (it calls the
	// application's after its own) and the URL's host to AllowHosts.
	Server websocket.Options
	// Listener is where the worker serves the sockets (GET /ws, and
	// nothing else: signalling goes through the front doors); PublicURL
	// must lead there, through whatever proxy or load balancer forwards
	// to this worker's /ws. Required.
	// Run serves it and closes it once the worker has drained; a worker
	// whose Run is never called leaves it to the caller.
	Listener net.Listener
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

	// ws is the WebSocket transport's Server, nil without
	// WorkerOptions.WebSocket; wsMax its session limit, sockets the HTTP
	// server of its listener.
	ws      *websocket.Server
	wsMax   int
	sockets *http.Server
	wsLn    net.Listener

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
		if err := w.admit(r, w.rtcFull); err != nil || appAdmit == nil {
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
	if ws := opts.WebSocket; ws != nil {
		if err := w.newWebSocket(*ws); err != nil {
			return nil, err
		}
	}
	srv, err := webrtc.NewServer(server)
	if err != nil {
		if w.ws != nil {
			_ = w.ws.Close()
		}
		return nil, err
	}
	w.srv = srv
	return w, nil
}

// newWebSocket builds the worker's websocket.Server and the HTTP server of
// its listener.
func (w *Worker) newWebSocket(o WebSocketOptions) error {
	if o.Listener == nil {
		return errors.New("cluster: WebSocketOptions.Listener is required: the browsers' sockets come to the worker")
	}
	u, err := url.Parse(o.Server.PublicURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("cluster: WebSocketOptions.Server.PublicURL %q must be a ws:// or wss:// URL without a query, "+
			"the worker's socket as browsers reach it", o.Server.PublicURL)
	}
	server := o.Server
	if server.Logger == nil {
		server.Logger = w.log.Named("websocket")
	}
	// The browsers' handshakes name the public host.
	server.AllowHosts = append(slices.Clone(server.AllowHosts), u.Hostname())
	appAdmit := server.Admit
	server.Admit = func(r *http.Request) error {
		if err := w.admit(r, w.wsFull); err != nil || appAdmit == nil {
			return err
		}
		return appAdmit(r)
	}
	ws, err := websocket.NewServer(server)
	if err != nil {
		return err
	}
	w.ws, w.wsLn = ws, o.Listener
	if w.wsMax = ws.MaxSessions(); w.wsMax < 0 {
		w.wsMax = math.MaxInt32 // no limit
	}
	// The listener serves the sockets only. A socket outlives the HTTP
	// server's timeouts (net/http clears a connection's deadlines when
	// the handshake hijacks it), so they bound only what comes before: a
	// client that never finishes its handshake, or idles on a connection
	// it opened.
	mux := http.NewServeMux()
	mux.Handle("GET /ws", ws)
	w.sockets = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: zap.NewStdLog(w.log.Named("http"))}
	return nil
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.opts.ID }

// Server returns the worker's webrtc.Server: to serve its signalling
// directly as well (debugging a worker without a front door), or to look
// at its sessions.
func (w *Worker) Server() *webrtc.Server { return w.srv }

// WebSocketServer returns the worker's websocket.Server, nil when it
// serves WebRTC only: to look at its sessions.
func (w *Worker) WebSocketServer() *websocket.Server { return w.ws }

// rtcCapacity is the number of live WebRTC sessions the worker takes: the
// Server's MaxSessions.
func (w *Worker) rtcCapacity() int {
	if n := w.srv.MaxSessions(); n > 0 {
		return n
	}
	return math.MaxInt32 // no limit
}

// load returns the worker's sessions and capacity over its transports, and
// each transport's when it serves WebSocket.
func (w *Worker) load() (total Load, rtc, ws *Load) {
	total = Load{Sessions: w.srv.SessionCount(), Capacity: w.rtcCapacity()}
	if w.ws == nil {
		return total, nil, nil
	}
	rtc = &Load{Sessions: total.Sessions, Capacity: total.Capacity}
	ws = &Load{Sessions: w.ws.SessionCount(), Capacity: w.wsMax}
	total.Sessions += ws.Sessions
	total.Capacity = int(min(int64(total.Capacity)+int64(ws.Capacity), math.MaxInt32))
	return total, rtc, ws
}

// sessions returns the live sessions of both transports.
func (w *Worker) sessions() int {
	l, _, _ := w.load()
	return l.Sessions
}

// wsFull reports whether the websocket.Server is at its MaxSessions, for
// a /connect: its socket would come here, where there is no room.
func (w *Worker) wsFull(r *http.Request) bool {
	return r.URL.Path == "/connect" && w.ws.SessionCount() >= w.wsMax
}

// rtcFull reports whether the webrtc.Server is at its MaxSessions, for a
// /start: its offer would come here, where there is no room.
func (w *Worker) rtcFull(r *http.Request) bool {
	return r.URL.Path == "/start" && w.srv.MaxSessions() > 0 && w.srv.SessionCount() >= w.srv.MaxSessions()
}

// ErrConnectionClosed is returned by [Worker.Run] when its NATS
// connection was closed under it: the worker is cut off from the cluster,
// so it closed its sessions.
var ErrConnectionClosed = errors.New("cluster: the NATS connection was closed")

// Run serves until ctx ends, then drains: it stops taking sessions (it
// leaves the queue groups and declines what still reaches it), lets the
// Servers end their sessions gracefully within DrainTimeout
// (webrtc.Server.Shutdown, whose sessions' signalling keeps working
// meanwhile, and websocket.Server.Shutdown, whose sockets close with 1001,
// going away), cancels those left (Close), says it is leaving and returns
// nil. Cancel ctx on SIGTERM. If the NATS connection is closed under it,
// Run closes the Servers at once and returns ErrConnectionClosed. With
// WorkerOptions.WebSocket, Run serves its Listener from the start and
// closes it once the sessions are gone. Run may be called once.
func (w *Worker) Run(ctx context.Context) error {
	if !w.ran.CompareAndSwap(false, true) {
		return errors.New("cluster: Worker.Run called twice")
	}
	if err := w.claimID(ctx); err != nil {
		w.closeServers()
		if w.wsLn != nil {
			_ = w.wsLn.Close()
		}
		return err
	}
	// The sockets' listener serves before any front door can hand out
	// its URL.
	served := make(chan struct{})
	if w.sockets != nil {
		go func() {
			defer close(served)
			if err := w.sockets.Serve(w.wsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				w.log.Error("the WebSocket listener failed", zap.Error(err))
			}
		}()
	} else {
		close(served)
	}
	closeSockets := func() {
		if w.sockets != nil {
			_ = w.sockets.Close()
		}
		<-served
	}
	base := context.WithoutCancel(ctx)
	var subs, queues []*nats.Subscription
	unsubscribe := func() {
		for _, s := range append(subs, queues...) {
			_ = s.Unsubscribe()
		}
		subs, queues = nil, nil
	}
	subscribe := func(s *nats.Subscription, err error) error {
		if err == nil {
			subs = append(subs, s)
		}
		return err
	}
	dispatch := func(m *nats.Msg) { w.dispatch(base, m) }
	// The queue groups' subscriptions, which a drain leaves first.
	join := func(subject string) error {
		s, err := w.nc.QueueSubscribe(subject, queueGroup, dispatch)
		if err == nil {
			queues = append(queues, s)
		}
		return err
	}
	err := errors.Join(join(w.subj.newSession()),
		subscribe(w.nc.Subscribe(w.subj.worker(w.opts.ID), dispatch)),
		subscribe(w.nc.Subscribe(w.subj.who(), w.answerWho)),
		subscribe(w.nc.Subscribe(w.subj.announce(), func(m *nats.Msg) { _ = m.Respond(w.heartbeat(false)) })))
	if err == nil && w.ws != nil {
		err = join(w.subj.newWebSocket())
	}
	if err == nil {
		// The subscriptions must reach the server before the heartbeat
		// that makes front doors route here.
		err = w.nc.Flush()
	}
	if err != nil {
		unsubscribe()
		w.closeServers()
		closeSockets()
		return fmt.Errorf("cluster: worker %s subscribing: %w", w.opts.ID, err)
	}
	total, _, _ := w.load()
	w.log.Info("worker serving", zap.Int("capacity", total.Capacity), zap.Bool("websocket", w.ws != nil))
	w.beat(false)

	tick := time.NewTicker(w.opts.HeartbeatInterval)
	defer tick.Stop()
	lost := func() error {
		w.log.Warn("NATS connection closed: closing the sessions", zap.Int("sessions", w.sessions()))
		w.closeServers()
		closeSockets()
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

	// Drain: out of the queue groups first, so NATS stops picking this
	// worker; what is already on its way is declined.
	w.draining.Store(true)
	// Drain, not Unsubscribe: the requests NATS has already handed these
	// subscriptions are declined instead of dropped (their front doors
	// would wait out their timeout).
	for _, q := range queues {
		if err := q.Drain(); err != nil {
			_ = q.Unsubscribe()
		}
	}
	w.log.Info("worker draining", zap.Int("sessions", w.sessions()), zap.Duration("timeout", w.opts.DrainTimeout))
	w.beat(false)
	sctx, cancel := context.WithTimeout(base, w.opts.DrainTimeout)
	defer cancel()
	drained := make(chan error, 1)
	w.wg.Go(func() { drained <- w.shutdown(sctx) })
	for waiting := true; waiting; {
		select {
		case err := <-drained:
			if err != nil {
				w.log.Warn("sessions did not end in time: cancelling them", zap.Error(err))
				w.closeServers()
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
	closeSockets()
	w.beat(true)
	unsubscribe()
	_ = w.nc.Flush()
	w.stop()
	w.log.Info("worker left")
	return nil
}

// shutdown ends the sessions of both Servers gracefully, at once.
func (w *Worker) shutdown(ctx context.Context) error {
	if w.ws == nil {
		return w.srv.Shutdown(ctx)
	}
	var wsErr error
	var wg sync.WaitGroup
	wg.Go(func() { wsErr = w.ws.Shutdown(ctx) })
	err := w.srv.Shutdown(ctx)
	wg.Wait()
	return errors.Join(err, wsErr)
}

// closeServers ends the sessions of both Servers at once.
func (w *Worker) closeServers() {
	_ = w.srv.Close()
	if w.ws != nil {
		_ = w.ws.Close()
	}
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
	total, rtc, ws := w.load()
	b, _ := json.Marshal(heartbeat{
		V: Version, Worker: w.opts.ID,
		Sessions: total.Sessions, Capacity: total.Capacity, WebRTC: rtc, WebSocket: ws,
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

// serve replays one request into the Server it is for (a /connect into
// the websocket.Server, anything else into the webrtc.Server) and replies
// with its response.
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
	var srv http.Handler = w.srv
	if req.Path == "/connect" {
		if w.ws == nil {
			// A front door sends a /connect only to the workers whose
			// heartbeats say they serve WebSocket.
			w.respond(m, reply{Declined: "no websocket transport"})
			return
		}
		srv = w.ws
	}
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
	srv.ServeHTTP(rec, hr)
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

// admit is the worker's part of the Servers' Admit hooks. A draining
// worker takes nothing new (the front doors no longer send it new
// sessions, but a /start flow's offer or a /connect's socket still comes
// where its id was issued). A full one takes no /start nor /connect (full
// says which request, on which Server): its offer or socket would come
// here, where the Server has no room, so the front door had better ask
// another worker.
func (w *Worker) admit(r *http.Request, full func(*http.Request) bool) error {
	reason := ""
	switch {
	case w.draining.Load():
		reason = "draining"
	case full(r):
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
