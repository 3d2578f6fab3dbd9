package websocket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/hostcheck"
	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/internal/onetime"
	"github.com/framewire/framewire/internal/origin"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/websocket/wire"
)

// PipelineFactory builds the pipeline of a new session: it should wrap
// the session's processors, pipeline.New(s.Input(), ..., s.Output()), and
// return the task unstarted. The server runs it and ends the session when
// it finishes. ctx ends with the session. An error closes the socket with
// 1011 (internal error).
type PipelineFactory func(ctx context.Context, s *Session) (*pipeline.Task, error)

// ErrForbidden, wrapped by an Options.Authorize error, refuses the
// request with a 403 instead of a 401.
var ErrForbidden = errors.New("websocket: forbidden")

// Options configure a [Server]. Only NewPipeline is required; every zero
// field takes the default in its comment.
type Options struct {
	// NewPipeline builds each session's pipeline. Required.
	NewPipeline PipelineFactory
	// Logger receives the server's logs. Default: zap.NewNop().
	Logger *zap.Logger

	// AllowHosts are the hosts the server answers for, besides localhost
	// names and IP literals, matched against the request's Host header
	// (as webrtc.Options.AllowHosts): a page on an attacker's domain that
	// rebinds its DNS to this server still names that domain. Default:
	// localhost names and IP literals only.
	AllowHosts []string
	// AllowOrigins are the origins of the pages that may open a socket
	// or call /connect, besides the server's own ("*" for any;
	// "http://localhost:*" for a host on any port). A browser always
	// sends Origin with a WebSocket handshake; a handshake from another
	// origin is refused with a 403 before the upgrade, so a page elsewhere
	// cannot ride the user's cookies into a session. Default: none.
	AllowOrigins []string
	// Authorize, if set, is asked about every /connect and every
	// handshake before anything is done for it; the browser client can
	// send no header on its socket, but puts the token /connect returned
	// in the URL's "token" parameter. A nil error admits; an error refuses
	// with a 403 if it wraps [ErrForbidden], else a 401. The error is
	// logged; the client reads only "unauthorized" or "forbidden".
	Authorize func(*http.Request) error
	// Admit, if set, is asked before a new session is taken on (a
	// /connect, a handshake), ahead of MaxSessions; an error refuses with
	// a 503 and Retry-After. Default: nil.
	Admit func(*http.Request) error
	// OnSession, if set, is told as sessions start and end (see
	// [SessionEvent]), synchronously and never with the server's locks
	// held. Default: nil.
	OnSession func(SessionEvent)
	// PublicURL is the socket's URL that /connect hands the client
	// ("wss://bot.example.com/ws"). Default: made from the request: ws://
	// (wss:// over TLS), its Host, and its path with /connect replaced by
	// /ws, so a server mounted under a prefix answers with that prefix.
	PublicURL string

	// MaxSessions bounds the live sessions; a handshake past it gets a
	// 503 with Retry-After. Default: 500; negative: no limit.
	MaxSessions int
	// MaxConnectBodyBytes bounds the body of a /connect (the client's
	// requestData, kept for the session's life). Default: 16 KiB.
	MaxConnectBodyBytes int64
	// MaxStarts bounds the /connect ids kept that no socket has claimed
	// yet; past it the oldest is forgotten. Default: 1000.
	MaxStarts int
	// StartTTL is how long a /connect id waits for its socket. Default: 1m.
	StartTTL time.Duration
	// MaxMessageBytes bounds one WebSocket message from the client; a
	// larger one closes the socket with 1009 (message too big). Default:
	// wire.DefaultMaxMessageBytes (the 1 MiB RTVI message the client
	// allows, in its protobuf frame).
	MaxMessageBytes int
	// Inbound bounds the rate of the client's messages (RTVI); see
	// [transports.InboundLimits]. Audio frames are bounded by
	// Input.MaxAhead instead.
	Inbound transports.InboundLimits
	// PingInterval is how often the server pings the client (the browser
	// answers by itself); PingTimeout is how long it waits for the pong.
	// A client that does not answer has its session ended. Defaults: 10s
	// and 10s; a negative PingInterval turns pinging off.
	PingInterval time.Duration
	PingTimeout  time.Duration
	// WriteTimeout bounds one write to the client: a client that takes
	// nothing for that long (it stopped reading; its TCP window is full)
	// has its session ended with "the client stopped reading". Default:
	// 10s.
	WriteTimeout time.Duration
	// MaxOutboundBytes bounds what waits to be written to a session's
	// client; past it messages wait for room (the pipeline waits for the
	// client, nothing is dropped) and audio frames are dropped and
	// counted. Default: 4 MiB.
	MaxOutboundBytes int
	// ShutdownGrace is how long a session's pipeline may take to finish
	// after [Server.Shutdown] has sent it an End before it is cancelled.
	// Default: 10s.
	ShutdownGrace time.Duration

	// MeterProvider, if set, is where the transport creates its
	// instruments (scope [ScopeName]), as webrtc's with the attribute
	// transport="websocket". Default: none, no-ops.
	MeterProvider metric.MeterProvider

	// Input configures each session's input transport.
	Input transports.InputOptions
	// Output configures each session's output transport.
	Output OutputOptions
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = 500
	}
	if o.MaxConnectBodyBytes <= 0 {
		o.MaxConnectBodyBytes = 16 << 10
	}
	if o.MaxStarts <= 0 {
		o.MaxStarts = 1000
	}
	if o.StartTTL <= 0 {
		o.StartTTL = time.Minute
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = wire.DefaultMaxMessageBytes
	}
	if o.PingInterval == 0 {
		o.PingInterval = 10 * time.Second
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = 10 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.MaxOutboundBytes <= 0 {
		o.MaxOutboundBytes = 4 << 20
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 10 * time.Second
	}
	o.Input = o.Input.WithDefaults()
	o.Output = o.Output.withDefaults()
	return o
}

// SessionEventKind says what a [SessionEvent] reports.
type SessionEventKind int

const (
	// SessionStarted: a socket was accepted and its pipeline built.
	SessionStarted SessionEventKind = iota + 1
	// SessionEnded: the session is torn down because of Reason.
	SessionEnded
)

// String names the kind.
func (k SessionEventKind) String() string {
	switch k {
	case SessionStarted:
		return "started"
	case SessionEnded:
		return "ended"
	}
	return fmt.Sprintf("SessionEventKind(%d)", int(k))
}

// SessionEvent tells Options.OnSession that a session started or ended.
type SessionEvent struct {
	Kind    SessionEventKind
	Session *Session
	// Reason says why the session ended (SessionEnded only).
	Reason string
	// Request is the handshake (SessionStarted only).
	Request *http.Request
}

// Server serves Pipecat's WebSocket transport and owns its sessions. It is
// an http.Handler: mount it at the root or under a prefix with
// http.StripPrefix. [Server.Shutdown] ends every session gracefully,
// [Server.Close] at once; both wait for the sessions' goroutines.
type Server struct {
	opts    Options
	log     *zap.Logger
	reqLog  *zap.Logger // log, sampled: the lines a client can cause
	hosts   hostcheck.Allowlist
	mux     *http.ServeMux
	metrics *instruments
	assist  *transports.Assist

	// ctx is the server's lifetime, the root of its sessions' contexts;
	// Close ends it. drain ends when Shutdown starts.
	ctx        context.Context
	cancel     context.CancelFunc
	drain      context.Context
	startDrain context.CancelFunc

	mu       sync.Mutex
	closed   bool
	sessions map[*Session]struct{}
	starts   onetime.Table[json.RawMessage] // /connect ids → requestData
	wg       sync.WaitGroup
}

// NewServer returns a server with opts; it fails when NewPipeline is
// missing.
func NewServer(opts Options) (*Server, error) {
	if opts.NewPipeline == nil {
		return nil, errors.New("websocket: Options.NewPipeline is required")
	}
	opts = opts.withDefaults()
	m, err := newInstruments(opts.MeterProvider)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		reqLog:   logsample.Logger(opts.Logger),
		hosts:    hostcheck.Allowlist{Hosts: opts.AllowHosts},
		metrics:  m,
		assist:   transports.NewAssist(transports.AssistOptions{}),
		sessions: map[*Session]struct{}{},
		starts:   onetime.Table[json.RawMessage]{TTL: opts.StartTTL, Max: opts.MaxStarts},
	}
	// The server is a process-level root: its sessions outlive the
	// requests that create them, so their contexts derive from the
	// server's own lifetime, which Close ends.
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.drain, s.startDrain = context.WithCancel(s.ctx)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /connect", s.handleConnect)
	s.mux.HandleFunc("OPTIONS /connect", s.handlePreflight)
	s.mux.HandleFunc("GET /ws", s.handleSocket)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hosts.Check(w, r) {
		s.metrics.refused(r.Context(), limitHost)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// MaxSessions returns the bound on live sessions past which handshakes are
// refused: Options.MaxSessions with its default, negative for none.
func (s *Server) MaxSessions() int { return s.opts.MaxSessions }

// SessionCount returns the number of live sessions.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Shutdown stops taking sessions and ends the live ones gracefully: each
// pipeline gets an End (what is queued plays out) and is cancelled after
// Options.ShutdownGrace. It returns when every session is torn down, or
// with ctx's error when ctx ends first (the sessions are then closed at
// once).
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopTaking()
	s.startDrain()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		<-done
		return ctx.Err()
	}
}

// Close ends every session at once and waits for their goroutines.
func (s *Server) Close() error {
	s.stopTaking()
	s.cancel()
	s.wg.Wait()
	return nil
}

func (s *Server) stopTaking() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// checkOrigin reports whether r's Origin may use the server: none (not a
// browser), the server's own (same host), or one of AllowOrigins.
func (s *Server) checkOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	if origin.Allowed(s.opts.AllowOrigins, o) {
		return true
	}
	_, host, ok := strings.Cut(o, "://")
	return ok && strings.EqualFold(host, r.Host)
}

// gate runs the checks every request passes before any work is done for
// it: the origin, Authorize, and, for a new session, Admit. It answers a
// refusal itself and returns false.
func (s *Server) gate(w http.ResponseWriter, r *http.Request) bool {
	if !s.checkOrigin(r) {
		s.metrics.refused(r.Context(), limitOrigin)
		http.Error(w, "forbidden: this origin may not connect", http.StatusForbidden)
		return false
	}
	if s.opts.Authorize != nil {
		if err := s.opts.Authorize(r); err != nil {
			s.reqLog.Info("request refused by Authorize", zap.String("path", r.URL.Path), zap.Error(err))
			if errors.Is(err, ErrForbidden) {
				http.Error(w, "forbidden", http.StatusForbidden)
				return false
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="framewire"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return false
		}
	}
	if s.opts.Admit != nil {
		if err := s.opts.Admit(r); err != nil {
			s.reqLog.Info("request refused by Admit", zap.String("path", r.URL.Path), zap.Error(err))
			s.metrics.refused(r.Context(), limitAdmit)
			unavailable(w, "the server takes no new sessions now")
			return false
		}
	}
	return true
}

func unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "unavailable: "+msg, http.StatusServiceUnavailable)
}

// handlePreflight answers a CORS preflight of /connect from an allowed
// origin (client-js posts JSON, which needs one across origins).
func (s *Server) handlePreflight(w http.ResponseWriter, r *http.Request) {
	if origin.Allow(w.Header(), s.opts.AllowOrigins, r.Header.Get("Origin")) {
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
		w.Header().Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// connectAnswer is what /connect answers: exactly the parameters the
// client's WebSocket transport takes (it refuses any other member).
type connectAnswer struct {
	WSURL string `json:"wsUrl"`
}

// handleConnect is client-js's startBot: it keeps the request's body (the
// app's requestData) for the socket and answers the socket's URL.
func (s *Server) handleConnect(w http.ResponseWriter, r *http.Request) {
	origin.Allow(w.Header(), s.opts.AllowOrigins, r.Header.Get("Origin"))
	if !s.gate(w, r) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxConnectBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body over %d bytes", s.opts.MaxConnectBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request body failed", http.StatusBadRequest)
		return
	}
	var data json.RawMessage
	if len(body) > 0 {
		if !json.Valid(body) {
			http.Error(w, "the request body is not JSON", http.StatusBadRequest)
			return
		}
		data = body
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		unavailable(w, "the server is shutting down")
		return
	}
	id := uuid.NewString()
	s.putStartLocked(id, data, time.Now())
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(connectAnswer{WSURL: s.socketURL(r, id)})
}

// socketURL is the URL of the socket for /connect request r and start id.
func (s *Server) socketURL(r *http.Request, id string) string {
	u := s.opts.PublicURL
	if u == "" {
		scheme := "ws"
		if r.TLS != nil {
			scheme = "wss"
		}
		// RequestURI keeps the prefix a StripPrefix took off r.URL.Path.
		path, _, _ := strings.Cut(r.RequestURI, "?")
		prefix, _ := strings.CutSuffix(path, "/connect")
		u = scheme + "://" + r.Host + prefix + "/ws"
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "session=" + id
}

// putStartLocked keeps a /connect's data until its socket claims it.
func (s *Server) putStartLocked(id string, data json.RawMessage, now time.Time) {
	s.starts.Put(id, data, now)
}

// takeStartLocked claims a /connect's data; ok is false for an unknown,
// used or expired id.
func (s *Server) takeStartLocked(id string, now time.Time) (json.RawMessage, bool) {
	return s.starts.Take(id, now)
}

// handleSocket accepts a client's socket and runs its session.
func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	if !s.gate(w, r) {
		return
	}
	var data json.RawMessage
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		unavailable(w, "the server is shutting down")
		return
	}
	if id := r.URL.Query().Get("session"); id != "" {
		d, ok := s.takeStartLocked(id, time.Now())
		if !ok {
			s.mu.Unlock()
			http.Error(w, "unknown or expired session id: call /connect again", http.StatusNotFound)
			return
		}
		data = d
	}
	if max := s.opts.MaxSessions; max > 0 && len(s.sessions) >= max {
		s.mu.Unlock()
		s.metrics.refused(r.Context(), limitSessions)
		unavailable(w, "the server is at its session limit")
		return
	}
	sess := newSession(s, data)
	s.sessions[sess] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer s.forget(sess)

	// net/http clears the connection's deadlines (an http.Server's
	// ReadTimeout and WriteTimeout) when it is hijacked: the socket lives
	// for the session, bounded by its pings and write deadline.
	// The origin was checked above, against AllowOrigins and the Host.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.reqLog.Info("websocket handshake failed", zap.Error(err))
		return
	}
	sess.serve(r, c)
}

// forget drops a torn-down session.
func (s *Server) forget(sess *Session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
}
