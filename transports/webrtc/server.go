package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	pion "github.com/pion/webrtc/v4"
	"go.uber.org/zap"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
	"github.com/framewire/framewire/transports/webrtc/internal/rtcpreport"
)

// PipelineFactory builds the pipeline task of a new session. Build it
// around the session's processors, pipeline.New(s.Input(), ..., s.Output()),
// and return the task unstarted: the server runs it, cancels it when the
// client leaves, and ends the session when it finishes. ctx ends with the
// session. An error fails the offer with a 500, so the client retries.
type PipelineFactory func(ctx context.Context, s *Session) (*pipeline.Task, error)

// Options configure a [Server]. Only NewPipeline is required; every zero
// field takes the default in its comment.
type Options struct {
	// NewPipeline builds each session's pipeline. Required.
	NewPipeline PipelineFactory
	// Logger receives the server's logs. Default: zap.NewNop().
	Logger *zap.Logger

	// ICEServers are the STUN/TURN servers of the server's peer
	// connections, also returned by /start as iceConfig. Default: none
	// (host candidates only; do not list unreachable servers, gathering
	// waits for them).
	ICEServers []pion.ICEServer
	// PortMin and PortMax bound the UDP ports ICE listens on. Default:
	// any ephemeral port.
	PortMin, PortMax uint16
	// PublicIPs are announced as host candidates instead of the
	// interface addresses (1:1 NAT, containers).
	PublicIPs []string
	// IncludeLoopback gathers 127.0.0.1 candidates too (single-host tests).
	IncludeLoopback bool
	// DisableMDNS stops resolving the browser's *.local candidates. Chrome
	// hides host IPs behind mDNS names unless media permission was given.
	DisableMDNS bool
	// Settings, if set, adjusts pion's SettingEngine after the options
	// above were applied (interface filters, timeouts, UDP mux, ...).
	Settings func(*pion.SettingEngine)

	// AllowOrigins enables CORS for these origins ("*" for any). Default:
	// none, for pages served from the same origin.
	AllowOrigins []string
	// MaxBodyBytes bounds request bodies. Default: 1 MiB.
	MaxBodyBytes int64
	// MaxSessions bounds concurrent sessions; offers past it get a 503
	// (the client retries). Default: unlimited.
	MaxSessions int
	// GatherTimeout bounds the wait for ICE gathering before answering.
	// Default: 10s.
	GatherTimeout time.Duration
	// StartTTL is how long an unused /start session id stays valid.
	// Default: 10m.
	StartTTL time.Duration

	// PingTimeout ends a session whose client sent no "ping" for that long
	// (after its first ping). Default: 3s; negative disables it.
	PingTimeout time.Duration
	// RestartGrace keeps a session whose client stopped pinging for that
	// much longer, waiting for the client to replace its peer connection
	// (restart_pc:true), which the browser does 5 s into an ICE outage. The
	// client counts as vanished at once either way ([Session.Vanished]).
	// Default: 0, the session ends when the pings stop.
	RestartGrace time.Duration
	// ConnectTimeout ends a session whose data channel did not open within
	// that long after the offer. Default: 60s.
	ConnectTimeout time.Duration
	// MaxMessageBytes bounds one data-channel message and is announced in
	// the answer's max-message-size. Default: 256 KiB (RTVI needs 64 KiB).
	MaxMessageBytes int
	// MaxPendingMessages bounds the messages queued while the data channel
	// is not open, in each direction; more are dropped and counted.
	// Default: 256.
	MaxPendingMessages int
	// MaxBufferedBytes drops outbound messages while this much is waiting
	// in the data channel's send buffer (a client that stopped reading).
	// Default: 1 MiB.
	MaxBufferedBytes int
	// ShutdownGrace is how long a session's pipeline may take to finish
	// after [Server.Shutdown] has sent it an End (what is queued plays
	// out, the turn in flight completes) before it is cancelled.
	// Default: 10s.
	ShutdownGrace time.Duration

	// Input configures each session's input transport.
	Input InputOptions
	// Output configures each session's output transport.
	Output OutputOptions
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.GatherTimeout <= 0 {
		o.GatherTimeout = 10 * time.Second
	}
	if o.StartTTL <= 0 {
		o.StartTTL = 10 * time.Minute
	}
	if o.PingTimeout == 0 {
		o.PingTimeout = 3 * time.Second
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 60 * time.Second
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 256 << 10
	}
	if o.MaxPendingMessages <= 0 {
		o.MaxPendingMessages = 256
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = 1 << 20
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 10 * time.Second
	}
	o.Input = o.Input.withDefaults()
	o.Output = o.Output.withDefaults()
	return o
}

// Server serves SmallWebRTC signalling and owns the sessions it creates.
// It is an http.Handler; mount it at the root or under a prefix with
// http.StripPrefix, or serve it with [ListenAndServe], which also handles
// the process's signals. [Server.Shutdown] ends every session gracefully,
// [Server.Close] at once; both wait for the sessions' goroutines.
type Server struct {
	opts  Options
	log   *zap.Logger
	api   *pion.API
	cfg   pion.Configuration
	codec codec.Codec
	mux   *http.ServeMux

	// ctx is the server's lifetime, the root of its sessions' contexts;
	// Close ends it. drain ends when Shutdown starts: each session's
	// pipeline.Runner then ends its pipeline gracefully.
	ctx        context.Context
	cancel     context.CancelFunc
	drain      context.Context
	startDrain context.CancelFunc

	// governor adapts the outputs' Opus complexity to the load; nil when
	// the complexity is fixed.
	governor *complexityGovernor
	// assist sends the frames of players the scheduler left waiting.
	assist *tickAssist

	mu       sync.Mutex
	closed   bool
	byPC     map[string]*Session // every pc_id a session ever had
	sessions map[*Session]struct{}
	starts   map[string]*startEntry
	// gone is closed once the server is closed and its last session has
	// been torn down.
	gone     chan struct{}
	goneOnce sync.Once
}

// startEntry is a /start session id waiting for (or serving) offers.
type startEntry struct {
	body     json.RawMessage
	lastUsed time.Time
}

// NewServer returns a server with opts. It fails when NewPipeline is
// missing or the pion settings are invalid.
func NewServer(opts Options) (*Server, error) {
	if opts.NewPipeline == nil {
		return nil, errors.New("webrtc: Options.NewPipeline is required")
	}
	opts = opts.withDefaults()
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		codec:    codec.Default(),
		cfg:      pion.Configuration{ICEServers: opts.ICEServers},
		byPC:     map[string]*Session{},
		sessions: map[*Session]struct{}{},
		starts:   map[string]*startEntry{},
		gone:     make(chan struct{}),
	}
	if opts.Output.OpusComplexity >= 0 && !opts.Output.FixedOpusComplexity {
		s.governor = newComplexityGovernor(time.Now(), opts.Output.OpusComplexity)
	}
	s.assist = newTickAssist(time.Now())
	api, err := newAPI(opts, s.codec)
	if err != nil {
		return nil, err
	}
	s.api = api
	// The server is a process-level root: its sessions outlive the
	// requests that create them, so their contexts derive from the
	// server's own lifetime, which Close ends.
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.drain, s.startDrain = context.WithCancel(s.ctx)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /api/offer", func(w http.ResponseWriter, r *http.Request) { s.handleOffer(w, r, "") })
	s.mux.HandleFunc("PATCH /api/offer", func(w http.ResponseWriter, r *http.Request) { s.handlePatch(w, r, "") })
	s.mux.HandleFunc("POST /start", s.handleStart)
	s.mux.HandleFunc("/sessions/{id}/{rest...}", s.handleSessionPath)
	return s, nil
}

// newAPI builds the pion API shared by every peer connection: the audio
// codec, VP8 so that video lines are accepted (recvonly), RTCP reports, and
// the setting engine from opts.
func newAPI(opts Options, c codec.Codec) (*pion.API, error) {
	me := &pion.MediaEngine{}
	if err := me.RegisterCodec(c.Params, pion.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("webrtc: register %s: %w", c.Params.MimeType, err)
	}
	vp8 := pion.RTPCodecParameters{
		RTPCodecCapability: pion.RTPCodecCapability{MimeType: pion.MimeTypeVP8, ClockRate: 90000},
		PayloadType:        96,
	}
	if err := me.RegisterCodec(vp8, pion.RTPCodecTypeVideo); err != nil {
		return nil, fmt.Errorf("webrtc: register VP8: %w", err)
	}
	ir := &interceptor.Registry{}
	rtcpreport.Register(ir)
	var se pion.SettingEngine
	if opts.PortMin != 0 || opts.PortMax != 0 {
		if err := se.SetEphemeralUDPPortRange(opts.PortMin, opts.PortMax); err != nil {
			return nil, fmt.Errorf("webrtc: UDP port range %d-%d: %w", opts.PortMin, opts.PortMax, err)
		}
	}
	if len(opts.PublicIPs) > 0 {
		rule := pion.ICEAddressRewriteRule{External: opts.PublicIPs, AsCandidateType: pion.ICECandidateTypeHost}
		if err := se.SetICEAddressRewriteRules(rule); err != nil {
			return nil, fmt.Errorf("webrtc: public IPs %v: %w", opts.PublicIPs, err)
		}
	}
	se.SetIncludeLoopbackCandidate(opts.IncludeLoopback)
	if opts.DisableMDNS {
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	}
	se.SetSCTPMaxMessageSize(uint32(opts.MaxMessageBytes))
	if opts.Settings != nil {
		opts.Settings(&se)
	}
	return pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se), pion.WithInterceptorRegistry(ir)), nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(s.opts.AllowOrigins) > 0 {
		if origin := r.Header.Get("Origin"); origin != "" && s.originAllowed(origin) {
			h := w.Header()
			if slices.Contains(s.opts.AllowOrigins, "*") {
				h.Set("Access-Control-Allow-Origin", "*")
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Add("Vary", "Origin")
			}
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "POST, PATCH, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) originAllowed(origin string) bool {
	for _, o := range s.opts.AllowOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// Shutdown stops taking sessions and ends the running ones gracefully.
// From the first call, new sessions are refused with a 503 and a
// Retry-After, which the client retries (smallwebrtc.md §1.2), so a load
// balancer can send it elsewhere; the running sessions keep their
// signalling (candidates, restarts). Each session's pipeline gets an End,
// as [pipeline.Runner] ends its tasks, and is cancelled if it has not
// finished within Options.ShutdownGrace; each client gets peerLeft as its
// session ends.
//
// Shutdown returns nil once every session is torn down, or ctx's error
// with the number of sessions left if ctx ends first; call [Server.Close]
// then to cancel them at once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopTaking()
	s.startDrain()
	select {
	case <-s.gone:
		s.cancel()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("webrtc: shutdown: %d sessions still running: %w", s.SessionCount(), ctx.Err())
	}
}

// Close ends the server at once: new sessions are refused with a 503, the
// running ones are cancelled (the clients get peerLeft), and Close returns
// once all of them are torn down. It ends the server's lifetime, the root
// of its sessions' contexts. Close is safe to call during or after
// Shutdown and more than once.
func (s *Server) Close() error {
	s.stopTaking()
	s.mu.Lock()
	list := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.Unlock()
	for _, ss := range list {
		ss.Close("server closing")
	}
	<-s.gone
	s.cancel()
	return nil
}

// stopTaking refuses new sessions from now on.
func (s *Server) stopTaking() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if len(s.sessions) == 0 {
		s.goneOnce.Do(func() { close(s.gone) })
	}
}

// SessionCount returns the number of live sessions.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Session returns the session that has, or had, the peer connection pcID.
func (s *Server) Session(pcID string) (*Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byPC[pcID]
	return ss, ok
}

// readBody reads a bounded body; it answers 413 itself and returns false.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over %d bytes", tooBig.Limit))
		} else {
			writeError(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

// handleOffer serves POST .../api/offer. startID is the /start session id
// on the session path, "" otherwise.
func (s *Server) handleOffer(w http.ResponseWriter, r *http.Request, startID string) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req, err := parseOffer(body)
	if err != nil {
		s.log.Info("rejected offer", zap.Error(err))
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var startBody json.RawMessage
	if startID != "" {
		s.mu.Lock()
		e := s.starts[startID]
		if e != nil {
			e.lastUsed = time.Now()
			startBody = e.body
		}
		s.mu.Unlock()
		if e == nil {
			writeError(w, http.StatusNotFound, "Invalid or not-yet-ready session_id")
			return
		}
	}
	if pcID := req.pcID(); pcID != "" {
		s.mu.Lock()
		sess := s.byPC[pcID]
		s.mu.Unlock()
		if sess != nil && (startID == "" || sess.startID == startID) {
			var ans answerBody
			if req.RestartPC {
				ans, err = sess.restart(r.Context(), req.SDP)
			} else {
				ans, err = sess.renegotiate(r.Context(), req.SDP, pcID)
			}
			s.reply(w, ans, err)
			return
		}
		// Python treats an unknown pc_id as a new connection.
	}
	data := req.RequestData
	if data == nil {
		data = startBody
	}
	ans, err := s.newSession(r.Context(), req.SDP, startID, data)
	s.reply(w, ans, err)
}

// reply writes an answer, or maps err to a status: 4xx only when retrying
// cannot help (smallwebrtc.md §1.2: since 1.10.8 a 4xx stops the client).
func (s *Server) reply(w http.ResponseWriter, ans answerBody, err error) {
	if err == nil {
		writeJSON(w, http.StatusOK, ans)
		return
	}
	var unavailable *unavailableError
	switch {
	case errors.Is(err, errBadRequest):
		s.log.Info("rejected offer", zap.Error(err))
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.As(err, &unavailable):
		s.log.Warn("offer refused for now", zap.Error(err))
		w.Header().Set("Retry-After", strconv.Itoa(unavailable.retryAfter))
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		s.log.Error("offer failed", zap.Error(err))
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// unavailableError is a retryable refusal (capacity, shutdown): a 503.
type unavailableError struct {
	msg        string
	retryAfter int
}

func (e *unavailableError) Error() string { return e.msg }

// handlePatch serves PATCH .../api/offer.
func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request, startID string) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	pcID, cands, err := parsePatch(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	sess := s.byPC[pcID]
	s.mu.Unlock()
	if sess == nil || (startID != "" && sess.startID != startID) {
		writeError(w, http.StatusNotFound, "Peer connection not found")
		return
	}
	if err := sess.addCandidates(cands); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(successBody)
}

// handleStart serves POST /start: it records the app body under a new
// session id; the bot starts when the first offer for it arrives.
func (s *Server) handleStart(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req, err := parseStart(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := uuid.NewString()
	now := time.Now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(shutdownRetryAfter))
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	for k, e := range s.starts {
		if now.Sub(e.lastUsed) > s.opts.StartTTL {
			delete(s.starts, k)
		}
	}
	s.starts[id] = &startEntry{body: req.Body, lastUsed: now}
	s.mu.Unlock()
	resp := startResponse{SessionID: id}
	switch {
	case len(s.opts.ICEServers) > 0:
		resp.ICEConfig = &iceConfig{ICEServers: browserICEServers(s.opts.ICEServers)}
	case req.EnableDefaultICEServers:
		resp.ICEConfig = &iceConfig{ICEServers: defaultICEServers}
	}
	writeJSON(w, http.StatusOK, resp)
}

func browserICEServers(list []pion.ICEServer) []iceServer {
	out := make([]iceServer, len(list))
	for i, v := range list {
		out[i] = iceServer{URLs: v.URLs, Username: v.Username, Credential: v.Credential}
	}
	return out
}

// handleSessionPath serves /sessions/{id}/...: the offer routes, and an
// empty 200 for anything else under a known session (as Python's runner).
func (s *Server) handleSessionPath(w http.ResponseWriter, r *http.Request) {
	id, rest := r.PathValue("id"), r.PathValue("rest")
	s.mu.Lock()
	_, known := s.starts[id]
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusNotFound, "Invalid or not-yet-ready session_id")
		return
	}
	if strings.TrimSuffix(rest, "/") == "api/offer" {
		switch r.Method {
		case http.MethodPost:
			s.handleOffer(w, r, id)
			return
		case http.MethodPatch:
			s.handlePatch(w, r, id)
			return
		}
		w.Header().Set("Allow", "POST, PATCH")
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on api/offer")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// newSession creates a session for a first offer: the pipeline, the peer
// connection and its answer. The pipeline starts once the answer is ready.
func (s *Server) newSession(ctx context.Context, offer, startID string, data json.RawMessage) (answerBody, error) {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return answerBody{}, &unavailableError{"the server is shutting down", shutdownRetryAfter}
	case s.opts.MaxSessions > 0 && len(s.sessions) >= s.opts.MaxSessions:
		s.mu.Unlock()
		return answerBody{}, &unavailableError{fmt.Sprintf("the server is at its limit of %d sessions", s.opts.MaxSessions), 2}
	}
	sess := newSession(s, startID, data)
	s.sessions[sess] = struct{}{}
	s.mu.Unlock()

	task, err := s.opts.NewPipeline(sess.ctx, sess)
	if err == nil && task == nil {
		err = errors.New("the pipeline factory returned no task")
	}
	if err != nil {
		sess.abandon()
		return answerBody{}, fmt.Errorf("webrtc: building the session pipeline: %w", err)
	}
	ans, err := sess.connect(ctx, offer)
	if err != nil {
		sess.abandon()
		return answerBody{}, err
	}
	// The server owns the session's goroutine: the session stays in
	// s.sessions until run has torn it down, and Shutdown and Close wait
	// for that.
	go sess.run(task)
	return ans, nil
}

// shutdownRetryAfter is the Retry-After, in seconds, of the 503 that a
// server shutting down answers new sessions with.
const shutdownRetryAfter = 5

// forget removes a finished session and all its pc_ids.
func (s *Server) forget(sess *Session, pcIDs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sess)
	for _, id := range pcIDs {
		if s.byPC[id] == sess {
			delete(s.byPC, id)
		}
	}
	if s.closed && len(s.sessions) == 0 {
		s.goneOnce.Do(func() { close(s.gone) })
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"detail":"encoding the reply failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, errorBody{Detail: detail})
}
