package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/hostcheck"
	"github.com/framewire/framewire/internal/httpstatus"
	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/internal/origin"
	"github.com/framewire/framewire/internal/signalmetrics"
	"github.com/framewire/framewire/transports/webrtc"
)

// FrontDoorOptions configure a [FrontDoor]. Every zero field takes the
// default in its comment.
type FrontDoorOptions struct {
	// Prefix is the first tokens of the cluster's subjects. Default:
	// DefaultPrefix.
	Prefix string
	// Logger receives the front door's logs. Default: zap.NewNop().
	Logger *zap.Logger
	// RequestTimeout bounds the wait for the workers' answer to one HTTP
	// request, all attempts included (an offer's answer waits for the
	// worker's ICE gathering). Default: 30s.
	RequestTimeout time.Duration
	// WhoTimeout bounds the question "which worker owns this id?", asked
	// when the routing table does not know an id (another front door
	// created it, or this one restarted). Every live worker answers, so
	// it usually ends as soon as they have. Default: 500ms.
	WhoTimeout time.Duration
	// MaxAttempts bounds the workers asked to take one new session: the
	// queue group's pick, then the live workers with the most room that
	// have not declined. Default: 3.
	MaxAttempts int
	// MaxBodyBytes bounds a request body (the browser's offers are a few
	// kilobytes); a longer one gets a 413. Default: 256 KiB.
	MaxBodyBytes int64
	// BodyTimeout bounds reading a request body, which happens before the
	// request takes one of the MaxInFlight slots: a client that drips its
	// body holds a connection and a goroutine for that long, never a slot.
	// Past it the client gets a 408. It is set on the connection with
	// http.ResponseController, so it applies under an http.Server (not
	// under a ResponseWriter without deadlines, such as a recorder).
	// Default: 10s.
	BodyTimeout time.Duration
	// MaxReplyBytes bounds a worker's reply payload. Default: 1 MiB.
	MaxReplyBytes int
	// MaxInFlight bounds the requests waiting on the workers at once (a
	// request takes a slot once its body is read and it is authorized);
	// past it the front door answers 503 with Retry-After. Default: 1024.
	MaxInFlight int
	// MaxRoutes bounds the routing table (pc_ids and sessionIds to
	// workers; the least recently used is forgotten, and found again by
	// asking the workers); RouteTTL forgets a route unused that long.
	// Defaults: 100000 and 15m.
	MaxRoutes int
	RouteTTL  time.Duration
	// MaxWorkers bounds the live-worker table; heartbeats of more workers
	// are ignored. Default: 1024.
	MaxWorkers int
	// ForwardHeaders are the request headers sent to the worker (the
	// Server's Authorize, CORS and per-address limits read them).
	// Default: Content-Type, Authorization, Cookie, Origin,
	// X-Forwarded-For, Forwarded, X-Real-Ip,
	// Access-Control-Request-Method, Access-Control-Request-Headers.
	ForwardHeaders []string
	// MaxHeaderBytes bounds the forwarded headers together; a request
	// over it gets a 431. Default: 16 KiB.
	MaxHeaderBytes int
	// ReplyHeaders are the response headers relayed from a worker's
	// reply to the client; any other header a NATS responder sets (a
	// Set-Cookie, a Location) is dropped, so that whoever can answer on
	// the cluster's subjects cannot plant headers on the front door's
	// origin. Default: Content-Type, Retry-After, Allow,
	// WWW-Authenticate, Cache-Control, Vary and the CORS response
	// headers (Access-Control-Allow-Origin, -Allow-Methods,
	// -Allow-Headers, -Max-Age, -Allow-Credentials, -Expose-Headers).
	ReplyHeaders []string
	// Authorize, if set, is asked about every signalling request (not
	// CORS preflights, which carry no credentials and go to one worker)
	// before its body is read and before any NATS traffic for it: no
	// worker is asked anything, not even who owns an id, for a request it
	// refuses. It sees the request's headers; the body is not read yet.
	// A nil error admits the request; an error refuses it with a 403 when
	// it wraps webrtc.ErrForbidden and a 401 otherwise, as the Server's
	// Options.Authorize does ([webrtc.BearerTokens] checks a shared
	// token). The error goes to the (sampled) log; the client reads only
	// "unauthorized" or "forbidden". Default: nil, every request is
	// admitted (the workers' own Authorize still runs, after the NATS
	// round trip).
	Authorize func(*http.Request) error
	// AllowHosts are the Host header values the front door answers
	// besides localhost names and IP literals, which it always answers: a
	// page of another site that rebinds its domain's DNS to the front
	// door's address sends its own name, and gets a 403. Patterns: an
	// exact name ("voice.example.com"), "*.example.com" (the names under
	// it) or "*" (any). List the name browsers reach the front door by.
	// Default: none.
	AllowHosts []string
	// AllowOrigins are the origins whose pages may read the answers the
	// front door gives itself: its 404s for an id no worker owns, its
	// 503s, its refusals of oversized requests. Without the CORS header
	// the browser hides such an answer from a page of another origin, and
	// the client sees a network error where the status matters (the
	// transport gives up on a 4xx and retries anything else). The
	// workers' answers, preflights included, carry the workers' own CORS
	// headers, so set it as their webrtc.Options.AllowOrigins: "*" for
	// any origin, "scheme://host:*" for a host on any port. Default: none.
	AllowOrigins []string
	// MeterProvider, if set, is where the front door creates its
	// instruments (scope [ScopeName]): framewire.signalling.responses by
	// status, the workers' answers it relays and its own, and
	// framewire.limits.refused by limit ("frontdoor_in_flight",
	// "cluster_capacity"). Pass the program's provider
	// (tel.MeterProvider() of package telemetry). Default: none, the
	// instruments are no-ops.
	MeterProvider metric.MeterProvider
}

var defaultForwardHeaders = []string{
	"Content-Type", "Authorization", "Cookie", "Origin", "X-Forwarded-For", "Forwarded", "X-Real-Ip",
	"Access-Control-Request-Method", "Access-Control-Request-Headers",
}

// defaultReplyHeaders are the headers of a signalling answer: the
// webrtc.Server sets no other.
var defaultReplyHeaders = []string{
	"Content-Type", "Retry-After", "Allow", "WWW-Authenticate", "Cache-Control", "Vary",
	"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
	"Access-Control-Max-Age", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers",
}

func (o FrontDoorOptions) withDefaults() FrontDoorOptions {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.RequestTimeout = positive(o.RequestTimeout, 30*time.Second)
	o.WhoTimeout = positive(o.WhoTimeout, 500*time.Millisecond)
	o.BodyTimeout = positive(o.BodyTimeout, 10*time.Second)
	o.RouteTTL = positive(o.RouteTTL, 15*time.Minute)
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 256 << 10
	}
	if o.MaxReplyBytes <= 0 {
		o.MaxReplyBytes = 1 << 20
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 1024
	}
	if o.MaxRoutes <= 0 {
		o.MaxRoutes = 100000
	}
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = 1024
	}
	if o.ForwardHeaders == nil {
		o.ForwardHeaders = defaultForwardHeaders
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 16 << 10
	}
	if o.ReplyHeaders == nil {
		o.ReplyHeaders = defaultReplyHeaders
	}
	return o
}

// FrontDoor serves the signalling routes of docs/protocol.md §1 for a
// cluster of workers: it holds no session, so any number of front doors
// can sit behind a load balancer without affinity. A new session (a first
// offer, a /start) goes to a worker of the queue group, and to others
// when it declines; every later request (candidates, renegotiation,
// restart, the /start flow's offers) goes to the worker that owns its
// pc_id or sessionId, learnt from the worker's reply or, when this front
// door did not see it, by asking all workers. It also serves the WebSocket
// transport's POST /connect (and its preflight): a new session for the
// workers that serve WebSocket, whose answer names the worker's own
// socket URL.
//
// It is an http.Handler; [FrontDoor.StatusHandler] serves /healthz and
// /cluster. Close it to stop following the workers.
type FrontDoor struct {
	opts FrontDoorOptions
	// metrics are the instruments made from opts.MeterProvider.
	metrics *signalmetrics.Instruments
	log     *zap.Logger
	// reqLog logs what a client's request causes, sampled: a flood of
	// refused requests writes a few lines a second, not one each.
	reqLog *zap.Logger
	hosts  hostcheck.Allowlist
	// relay is the set of ReplyHeaders, canonical.
	relay  map[string]bool
	nc     *nats.Conn
	subj   subjects
	routes *table
	slots  chan struct{}

	mu      sync.Mutex
	workers map[string]*workerState

	hbSub *nats.Subscription
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// workerState is what a front door knows of a live worker.
type workerState struct {
	hb   heartbeat
	seen time.Time
}

// NewFrontDoor returns a front door on nc. It subscribes to the workers'
// heartbeats and asks the live workers to announce themselves (waiting
// WhoTimeout at most), so it can route as soon as it returns.
func NewFrontDoor(nc *nats.Conn, opts FrontDoorOptions) (*FrontDoor, error) {
	if nc == nil {
		return nil, errors.New("cluster: NewFrontDoor needs a NATS connection")
	}
	opts = opts.withDefaults()
	if err := validPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	metrics, err := newInstruments(opts.MeterProvider)
	if err != nil {
		return nil, err
	}
	relay := map[string]bool{}
	for _, h := range opts.ReplyHeaders {
		relay[http.CanonicalHeaderKey(h)] = true
	}
	f := &FrontDoor{
		opts:    opts,
		metrics: metrics,
		log:     opts.Logger,
		reqLog:  logsample.Logger(opts.Logger),
		hosts:   hostcheck.Allowlist{Hosts: opts.AllowHosts},
		relay:   relay,
		nc:      nc,
		subj:    subjects{opts.Prefix},
		routes:  newTable(opts.MaxRoutes, opts.RouteTTL),
		slots:   make(chan struct{}, opts.MaxInFlight),
		workers: map[string]*workerState{},
		stop:    make(chan struct{}),
	}
	sub, err := nc.Subscribe(f.subj.heartbeat(), func(m *nats.Msg) { f.observe(m.Data) })
	if err != nil {
		return nil, fmt.Errorf("cluster: subscribing to heartbeats: %w", err)
	}
	f.hbSub = sub
	f.discover()
	f.wg.Go(f.expireLoop)
	return f, nil
}

// Close stops following the workers. Requests in flight finish.
func (f *FrontDoor) Close() error {
	f.once.Do(func() {
		_ = f.hbSub.Unsubscribe()
		close(f.stop)
	})
	f.wg.Wait()
	return nil
}

// discover asks every worker for a heartbeat at once.
func (f *FrontDoor) discover() {
	f.scatter(f.subj.announce(), nil, func(data []byte) bool {
		f.observe(data)
		return false
	})
}

// scatter publishes data on subject and hands each reply to take until
// take returns true, every known live worker has answered, or WhoTimeout
// has passed.
func (f *FrontDoor) scatter(subject string, data []byte, take func([]byte) bool) {
	inbox := f.nc.NewRespInbox()
	sub, err := f.nc.SubscribeSync(inbox)
	if err != nil {
		f.log.Warn("scatter: no inbox", zap.String("subject", subject), zap.Error(err))
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := f.nc.PublishRequest(subject, inbox, data); err != nil {
		f.log.Warn("scatter: not sent", zap.String("subject", subject), zap.Error(err))
		return
	}
	want := f.liveCount()
	deadline := time.Now().Add(f.opts.WhoTimeout)
	for got := 0; want == 0 || got < want; got++ {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return
		}
		if take(m.Data) {
			return
		}
	}
}

// observe records a heartbeat.
func (f *FrontDoor) observe(data []byte) {
	hb, err := decodeHeartbeat(data)
	if err != nil {
		f.log.Debug("dropped a heartbeat", zap.Error(err))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if hb.Leaving {
		if _, ok := f.workers[hb.Worker]; ok {
			delete(f.workers, hb.Worker)
			f.log.Info("worker left", zap.String("worker", hb.Worker))
		}
		// Its routes are dropped as they are next used (route checks
		// that the owner is live).
		return
	}
	ws, ok := f.workers[hb.Worker]
	if !ok {
		if len(f.workers) >= f.opts.MaxWorkers {
			return
		}
		ws = &workerState{}
		f.workers[hb.Worker] = ws
		f.log.Info("worker joined", zap.String("worker", hb.Worker), zap.Int("capacity", hb.Capacity))
	}
	ws.hb, ws.seen = hb, time.Now()
}

// expireLoop forgets the workers that missed three heartbeats, and
// expired routes.
func (f *FrontDoor) expireLoop() {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case now := <-tick.C:
			var gone []string
			f.mu.Lock()
			for id, ws := range f.workers {
				if now.Sub(ws.seen) > expireAfter(ws.hb) {
					delete(f.workers, id)
					gone = append(gone, id)
				}
			}
			f.mu.Unlock()
			for _, id := range gone {
				f.log.Warn("worker missed its heartbeats: forgotten", zap.String("worker", id))
				f.routes.dropWorker(id)
			}
			f.routes.expire(now)
		}
	}
}

// expireAfter is how long a worker lives without a heartbeat: three of
// its intervals (clamped to 300ms..30s each).
func expireAfter(hb heartbeat) time.Duration {
	iv := min(max(time.Duration(hb.IntervalMS)*time.Millisecond, 300*time.Millisecond), 30*time.Second)
	return 3 * iv
}

func (f *FrontDoor) liveCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.workers)
}

func (f *FrontDoor) live(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.workers[id]
	return ok
}

// transport is the transport a new session asks for.
type transport int

const (
	webRTC    transport = iota // an offer, a /start
	webSocket                  // a /connect
)

// room returns how many more sessions of t hb's worker takes.
func (hb heartbeat) room(t transport) int {
	l := Load{hb.Sessions, hb.Capacity}
	switch {
	case t == webSocket && hb.WebSocket == nil:
		return 0 // it does not serve WebSocket
	case t == webSocket:
		l = *hb.WebSocket
	case hb.WebRTC != nil:
		l = *hb.WebRTC
	}
	return l.Capacity - l.Sessions
}

// pick returns the live worker with the most room for a session of t that
// is not draining, not full and not in tried.
func (f *FrontDoor) pick(tried map[string]bool, t transport) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var best *workerState
	for id, ws := range f.workers {
		if tried[id] || ws.hb.Draining || ws.hb.room(t) <= 0 {
			continue
		}
		if best == nil || ws.hb.room(t) > best.hb.room(t) {
			best = ws
		}
	}
	if best == nil {
		return "", false
	}
	return best.hb.Worker, true
}

// ServeHTTP implements http.Handler for the signalling routes.
func (f *FrontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	httpstatus.Report(w, r, f.serveHTTP, f.metrics.Response)
}

func (f *FrontDoor) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.hosts.Allows(r.Host) {
		f.reqLog.Info("refused a request for a foreign host", zap.String("path", r.URL.Path), zap.String("remote", r.RemoteAddr))
		writeDetail(w, http.StatusForbidden, "the Host header names a host this server does not serve")
		return
	}
	// For the answers the front door gives itself; a worker's answer
	// replaces these headers with its own (write).
	origin.Allow(w.Header(), f.opts.AllowOrigins, r.Header.Get("Origin"))
	path := r.URL.Path
	kind := routeOf(r.Method, path)
	switch kind {
	case routeNone:
		writeDetail(w, http.StatusNotFound, "not found")
		return
	case routeBadMethod:
		allow := "POST, PATCH"
		if path == "/connect" || path == "/start" {
			allow = "POST"
		}
		w.Header().Set("Allow", allow)
		writeDetail(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here")
		return
	}
	if r.Method != http.MethodOptions && !f.authorize(w, r) {
		return
	}
	if !f.nc.IsConnected() {
		// Requests would wait in the NATS client's reconnect buffer.
		unavailable(w, 2, "the cluster is unreachable; retry later")
		return
	}
	// The body is read before the request takes a slot: a slot is held
	// only while the workers are asked, never while a client drips bytes.
	req, status, err := f.envelope(w, r)
	if err != nil {
		f.reqLog.Info("refused a request", zap.String("path", path), zap.Error(err))
		writeDetail(w, status, err.Error())
		return
	}
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	default:
		f.metrics.Refused(r.Context(), limitInFlight)
		f.reqLog.Info("refused a request: MaxInFlight requests in flight", zap.Int("limit", f.opts.MaxInFlight))
		unavailable(w, 1, "the front door is busy; retry later")
		return
	}
	switch kind {
	case routeAny:
		f.dispatchNew(w, r, req, webRTC)
	case routeConnect:
		f.dispatchNew(w, r, req, webSocket)
	case routeOffer:
		if id := pcIDOf(req.Body); id != "" && f.route(w, r, req, keyPC+":"+id) {
			return
		}
		if r.Method == http.MethodPost {
			// An unknown pc_id is a new connection (docs/protocol.md §1).
			f.dispatchNew(w, r, req, webRTC)
			return
		}
		writeDetail(w, http.StatusNotFound, "Peer connection not found")
	case routeSession:
		id, _, _ := strings.Cut(strings.TrimPrefix(path, "/sessions/"), "/")
		if id == "" || len(id) > maxID || !f.route(w, r, req, keyStart+":"+id) {
			writeDetail(w, http.StatusNotFound, "Invalid or not-yet-ready session_id")
		}
	}
}

// authorize runs Options.Authorize; on a refusal it answers the client
// and returns false.
func (f *FrontDoor) authorize(w http.ResponseWriter, r *http.Request) bool {
	if f.opts.Authorize == nil {
		return true
	}
	err := f.opts.Authorize(r)
	if err == nil {
		return true
	}
	f.reqLog.Info("refused a request: Authorize", zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.String("remote", r.RemoteAddr), zap.Error(err))
	if errors.Is(err, webrtc.ErrForbidden) {
		writeDetail(w, http.StatusForbidden, "forbidden")
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="framewire"`)
	writeDetail(w, http.StatusUnauthorized, "unauthorized")
	return false
}

// Routes of a request.
const (
	routeNone      = iota // not a signalling route: 404
	routeBadMethod        // a signalling path with another method: 405
	routeAny              // any worker may answer: /start, CORS preflights
	routeOffer            // /api/offer: by pc_id
	routeSession          // /sessions/{id}/...: by sessionId
	routeConnect          // /connect and its preflight: any worker serving WebSocket
)

func routeOf(method, path string) int {
	session := strings.HasPrefix(path, "/sessions/")
	switch {
	case path == "/connect" && (method == http.MethodPost || method == http.MethodOptions):
		return routeConnect
	case path == "/connect":
		return routeBadMethod
	case !session && path != "/api/offer" && path != "/start":
		return routeNone
	case method == http.MethodOptions:
		return routeAny
	case session:
		return routeSession
	case path == "/start" && method == http.MethodPost:
		return routeAny
	case path == "/api/offer" && (method == http.MethodPost || method == http.MethodPatch):
		return routeOffer
	}
	return routeBadMethod
}

// envelope reads r into a request (bounded body and headers); on failure
// it returns the status to answer.
func (f *FrontDoor) envelope(w http.ResponseWriter, r *http.Request) (request, int, error) {
	req := request{V: Version, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Remote: r.RemoteAddr}
	if len(req.Path) > maxPath || len(req.Query) > maxPath {
		return request{}, http.StatusRequestURITooLong, errors.New("the URL is too long")
	}
	size := 0
	for _, name := range f.opts.ForwardHeaders {
		vs := r.Header.Values(name)
		for _, v := range vs {
			size += len(name) + len(v)
		}
		if len(vs) > 0 {
			if req.Header == nil {
				req.Header = http.Header{}
			}
			req.Header[http.CanonicalHeaderKey(name)] = vs
		}
	}
	if size > f.opts.MaxHeaderBytes {
		return request{}, http.StatusRequestHeaderFieldsTooLarge, fmt.Errorf("the headers are over %d bytes", f.opts.MaxHeaderBytes)
	}
	if r.ContentLength > f.opts.MaxBodyBytes {
		// Refused before reading: a client that sent "Expect:
		// 100-continue" never sends the body.
		return request{}, http.StatusRequestEntityTooLarge, fmt.Errorf("request body is over %d bytes", f.opts.MaxBodyBytes)
	}
	if r.Body != nil {
		// The body's own deadline, cleared once it is read: a deadline
		// left on the connection would fail the http.Server's background
		// read while the workers are asked, which cancels the request's
		// context (the server sets the next request's deadlines itself).
		rc := http.NewResponseController(w)
		deadline := rc.SetReadDeadline(time.Now().Add(f.opts.BodyTimeout)) == nil
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.opts.MaxBodyBytes))
		if deadline {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			var ne net.Error
			switch {
			case errors.As(err, &tooBig):
				return request{}, http.StatusRequestEntityTooLarge, fmt.Errorf("request body is over %d bytes", tooBig.Limit)
			case errors.As(err, &ne) && ne.Timeout():
				w.Header().Set("Connection", "close")
				return request{}, http.StatusRequestTimeout, fmt.Errorf("the request body took over %v", f.opts.BodyTimeout)
			}
			return request{}, http.StatusBadRequest, errors.New("reading the request body failed")
		}
		req.Body = body
	}
	return req, 0, nil
}

// send sends req to subject and decodes the reply; ctx bounds the wait.
func (f *FrontDoor) send(ctx context.Context, subject string, req request) (reply, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return reply{}, err
	}
	if mp := f.nc.MaxPayload(); mp > 0 && int64(len(data)) > mp {
		return reply{}, fmt.Errorf("%w: request of %d bytes, NATS max_payload %d", errTooLarge, len(data), mp)
	}
	m, err := f.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return reply{}, err
	}
	return decodeReply(m.Data, f.opts.MaxReplyBytes)
}

// dispatchNew hands req, a new session of transport t, to a worker that
// takes it: first the one NATS picks from t's queue group, then, if it
// declines, the live workers with the most room for t, MaxAttempts in
// all, within one RequestTimeout. When none takes it the client gets a 503
// with Retry-After, which it retries.
func (f *FrontDoor) dispatchNew(w http.ResponseWriter, r *http.Request, req request, t transport) {
	req.Kind = kindNew
	ctx, cancel := context.WithTimeout(r.Context(), f.opts.RequestTimeout)
	defer cancel()
	tried := map[string]bool{}
	queue := f.subj.newSession()
	if t == webSocket {
		queue = f.subj.newWebSocket()
	}
	subject := queue
	retryAfter := 2
	for range f.opts.MaxAttempts {
		rep, err := f.send(ctx, subject, req)
		switch {
		case err == nil && rep.Declined == "":
			f.learn(rep)
			f.write(w, rep)
			return
		case err == nil:
			f.reqLog.Debug("worker declined a new session", zap.String("worker", rep.Worker), zap.String("reason", rep.Declined))
			tried[rep.Worker] = true
			if s, err := strconv.Atoi(http.Header(rep.Header).Get("Retry-After")); err == nil && s > 0 && s < 60 {
				retryAfter = s
			}
		case r.Context().Err() != nil:
			return // the client is gone
		case ctx.Err() != nil:
			f.reqLog.Warn("no worker answered a new session in time", zap.Duration("timeout", f.opts.RequestTimeout))
			unavailable(w, retryAfter, "no worker answered in time; retry later")
			return
		case errors.Is(err, nats.ErrNoResponders) && subject == queue:
			// No worker is in the queue group: none takes sessions (of t).
			f.reqLog.Warn("no worker takes sessions", zap.String("subject", queue))
			f.metrics.Refused(r.Context(), limitCapacity)
			unavailable(w, retryAfter, "no worker can take a session now; retry later")
			return
		default:
			f.reqLog.Warn("new-session request failed", zap.String("subject", subject), zap.Error(err))
			if id, ok := strings.CutPrefix(subject, f.subj.worker("")); ok {
				tried[id] = true
			}
		}
		next, ok := f.pick(tried, t)
		if !ok {
			break
		}
		subject = f.subj.worker(next)
	}
	f.metrics.Refused(r.Context(), limitCapacity)
	unavailable(w, retryAfter, "no worker can take a session now; retry later")
}

// route sends req to the worker that owns key, asking the workers when
// the table does not know it. It returns false, having written nothing,
// when no worker owns key.
func (f *FrontDoor) route(w http.ResponseWriter, r *http.Request, req request, key string) bool {
	req.Kind = kindRoute
	ctx, cancel := context.WithTimeout(r.Context(), f.opts.RequestTimeout)
	defer cancel()
	now := time.Now()
	owner, ok := f.routes.get(key, now)
	if ok && !f.live(owner) {
		f.routes.drop(key)
		ok = false
	}
	for range 2 {
		if !ok {
			if owner, ok = f.who(key); !ok {
				return false
			}
			f.routes.put(key, owner, now)
		}
		rep, err := f.send(ctx, f.subj.worker(owner), req)
		switch {
		case err == nil:
			f.learn(rep)
			f.write(w, rep)
			return true
		case r.Context().Err() != nil:
			return true // the client is gone
		case errors.Is(err, nats.ErrNoResponders):
			// The owner is gone: ask again, in case the id moved.
			f.routes.drop(key)
			ok = false
		default:
			f.reqLog.Warn("routed request failed", zap.String("worker", owner), zap.String("path", req.Path), zap.Error(err))
			unavailable(w, 1, "the session's worker did not answer; retry later")
			return true
		}
	}
	return false
}

// who asks every worker whether it owns key ("pc:<id>" or
// "start:<id>").
func (f *FrontDoor) who(key string) (string, bool) {
	kind, id, _ := strings.Cut(key, ":")
	data, _ := json.Marshal(whoRequest{V: Version, Kind: kind, ID: id})
	var owner string
	f.scatter(f.subj.who(), data, func(b []byte) bool {
		a, err := decodeWhoReply(b)
		if err == nil && a.Owns {
			owner = a.Worker
			return true
		}
		return false
	})
	return owner, owner != ""
}

// learn records the ids of a reply.
func (f *FrontDoor) learn(rep reply) {
	now := time.Now()
	if rep.PCID != "" && len(rep.PCID) <= maxID {
		f.routes.put(keyPC+":"+rep.PCID, rep.Worker, now)
	}
	if rep.StartID != "" && len(rep.StartID) <= maxID {
		f.routes.put(keyStart+":"+rep.StartID, rep.Worker, now)
	}
}

// write copies a worker's response to the client: its status, body and
// the headers of Options.ReplyHeaders only (the worker's CORS policy, not
// the front door's, decides who reads it).
func (f *FrontDoor) write(w http.ResponseWriter, rep reply) {
	h := w.Header()
	clear(h)
	for k, vs := range rep.Header {
		if k = http.CanonicalHeaderKey(k); f.relay[k] {
			h[k] = vs
		}
	}
	w.WriteHeader(rep.Status)
	_, _ = w.Write(rep.Body)
}

// unavailable answers a 503 with Retry-After, which the client retries.
func unavailable(w http.ResponseWriter, retryAfter int, detail string) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeDetail(w, http.StatusServiceUnavailable, detail)
}

func writeDetail(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(errorJSON(detail), '\n'))
}

// WorkerStatus is what a front door knows of one live worker.
type WorkerStatus struct {
	ID string `json:"id"`
	// Sessions and Capacity count every transport the worker serves.
	Sessions int `json:"sessions"`
	Capacity int `json:"capacity"`
	// WebRTC and WebSocket are each transport's share, when the worker
	// serves WebSocket as well; nil otherwise.
	WebRTC    *Load `json:"webrtc,omitempty"`
	WebSocket *Load `json:"websocket,omitempty"`
	Draining  bool  `json:"draining"`
	// LastSeenMS is the age of its last heartbeat.
	LastSeenMS int64 `json:"last_seen_ms"`
}

// Load is one transport's live sessions on a worker and the number it
// takes at most.
type Load struct {
	Sessions int `json:"sessions"`
	Capacity int `json:"capacity"`
}

// copyLoad returns a copy of l, nil for nil: a Status shares nothing with
// the front door's table.
func copyLoad(l *Load) *Load {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// Status is the cluster's state as a front door sees it.
type Status struct {
	// Connected reports whether the front door's NATS connection is up.
	Connected bool           `json:"connected"`
	Workers   []WorkerStatus `json:"workers"`
	Sessions  int            `json:"sessions"`
	Capacity  int            `json:"capacity"`
	// Routes is the size of the routing table.
	Routes int `json:"routes"`
}

// Status returns the live workers, sorted by id, and their totals.
func (f *FrontDoor) Status() Status {
	now := time.Now()
	st := Status{Connected: f.nc.IsConnected(), Workers: []WorkerStatus{}, Routes: f.routes.len()}
	f.mu.Lock()
	for _, ws := range f.workers {
		st.Workers = append(st.Workers, WorkerStatus{ID: ws.hb.Worker, Sessions: ws.hb.Sessions, Capacity: ws.hb.Capacity,
			WebRTC: copyLoad(ws.hb.WebRTC), WebSocket: copyLoad(ws.hb.WebSocket),
			Draining: ws.hb.Draining, LastSeenMS: now.Sub(ws.seen).Milliseconds()})
		st.Sessions += ws.hb.Sessions
		if !ws.hb.Draining {
			st.Capacity += ws.hb.Capacity
		}
	}
	f.mu.Unlock()
	slices.SortFunc(st.Workers, func(a, b WorkerStatus) int { return cmp.Compare(a.ID, b.ID) })
	return st
}

// StatusHandler serves GET /healthz (200 while the NATS connection is up
// and a worker takes sessions, 503 otherwise, so a load balancer skips a
// front door that cannot route) and GET /cluster ([Status] as JSON: the
// workers' ids and load). Serve it on a listener operators, not browsers,
// reach (/healthz may also go on the public port, for a load balancer);
// it has no Host check or Authorize of its own.
func (f *FrontDoor) StatusHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		st := f.Status()
		status, text := http.StatusOK, "ok"
		switch {
		case !st.Connected:
			status, text = http.StatusServiceUnavailable, "NATS is not connected"
		case st.Capacity == 0:
			status, text = http.StatusServiceUnavailable, "no worker takes sessions"
		}
		writeJSONStatus(w, status, map[string]any{"status": text, "workers": len(st.Workers)})
	})
	mux.HandleFunc("GET /cluster", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONStatus(w, http.StatusOK, f.Status())
	})
	return mux
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
