package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/framewire/framewire/internal/logsample"
	"github.com/google/uuid"
	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	pion "github.com/pion/webrtc/v4"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/errorid"
	"github.com/framewire/framewire/internal/hostcheck"
	"github.com/framewire/framewire/internal/httpstatus"
	"github.com/framewire/framewire/internal/origin"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
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
	// connections. /start returns them to the browser as iceConfig
	// without their credentials (so a server with a username or
	// credential is reduced to its STUN URLs) unless ShareICECredentials
	// is set; see TURN for credentials of the browser's own. Default: none
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
	// DisableMDNS keeps mDNS off even when ICE.ResolveMDNS is set. mDNS
	// is off by default (see [ICEPolicy.ResolveMDNS]).
	DisableMDNS bool
	// ICE bounds the client's remote candidates and the addresses the
	// server sends checks to; see [ICEPolicy]. The zero value is safe on
	// the open internet.
	ICE ICEPolicy
	// Settings, if set, adjusts pion's SettingEngine after the options
	// above were applied (interface filters, timeouts, UDP mux, ...).
	Settings func(*pion.SettingEngine)

	// AllowHosts are the hosts the signalling routes answer for, besides
	// localhost names and IP literals, matched against the request's Host
	// header: exact names ("bot.example.com"), "*.example.com" for the
	// names under it, or "*" for any (package internal/hostcheck). A request
	// for any other host gets a 403 before anything else is done for it: a
	// page on an attacker's domain that rebinds its DNS to this server's
	// address (DNS rebinding) still names that domain in Host. Default: nil,
	// localhost names and IP literals only; a server reached by a name must
	// list it.
	AllowHosts []string
	// AllowOrigins enables CORS for these origins ("*" for any;
	// "http://localhost:*" for a host on any port). Default:
	// none, for pages served from the same origin. Whatever it says, the
	// signalling routes take only application/json bodies (415 otherwise),
	// which a page of another origin cannot send without a preflight.
	AllowOrigins []string
	// Authorize, if set, is asked about every signalling request (/start,
	// offers, PATCHes, the session paths; not CORS preflights) before any
	// work is done for it. A nil error admits the request; an error
	// refuses it with a 403 when it wraps [ErrForbidden] and a 401
	// otherwise, which the client does not retry. The error goes to the
	// log (sampled, like every line a client can cause); the client reads
	// only "unauthorized" or "forbidden".
	// [BearerTokens] checks a shared token. Default: nil, every request
	// is admitted (put the server behind the application's own
	// authentication, or set this).
	Authorize func(*http.Request) error
	// Admit, if set, is asked before the Server takes on something new: a
	// /start, or an offer that would create a session (not one for a live
	// session's pc_id), ahead of the Server's own limits (MaxSessions,
	// MaxPendingSessions, PerIP). A nil error admits; an error refuses the
	// request with a 503 and Retry-After, which the client retries. The
	// error goes to the log (sampled); the client reads only that the
	// server takes no new sessions now. It runs on the request's goroutine.
	// Default: nil, the Server's own limits alone.
	Admit func(*http.Request) error
	// OnSession, if set, is told as /start ids are issued and sessions
	// start, replace their peer connection and end (see [SessionEvent]),
	// as http.Server's ConnState is told of connections: a router in front
	// of several servers learns from it which one owns an id. It is called
	// synchronously, on the goroutine of the request or the session and
	// never with the Server's locks held, so it must return quickly; one
	// session's events come in order. Default: nil.
	OnSession func(SessionEvent)
	// MaxBodyBytes bounds the body of an offer or a PATCH (the browser's
	// offers are a few kilobytes); a longer one gets a 413. Default: 1 MiB.
	MaxBodyBytes int64
	// MaxMediaSections bounds the m-sections of one offer: a browser sends
	// 2 or 3 (audio, the data channel, video), and pion builds a
	// transceiver and an answer section for each. An offer with more gets
	// a 400 before anything is built for it. Default: 8; negative for no
	// limit.
	MaxMediaSections int
	// MaxRequestDataBytes bounds an offer's requestData (the app's data,
	// kept for the session's life; the real client sends a few hundred
	// bytes); an offer with more gets a 413. Default: 16 KiB, as
	// MaxStartBodyBytes.
	MaxRequestDataBytes int
	// MaxStartBodyBytes bounds the body of a /start (the real client
	// sends a few hundred bytes: the app's requestData). Default: 16 KiB.
	MaxStartBodyBytes int64
	// MaxSessions bounds the live sessions, connected or not; offers past
	// it get a 503 with Retry-After (the client retries). Default: 500,
	// five times what the load test holds on two cores (100 streaming
	// sessions); negative for no limit.
	MaxSessions int
	// MaxPendingSessions bounds the sessions whose data channel has not
	// opened yet (each holds a few sockets and goroutines until it
	// connects or ConnectTimeout ends it). A browser's session is pending
	// for well under a second. When the table is full, a new session from
	// an address that holds fewer of them than another address takes the
	// place of that address's oldest pending session, which ends; otherwise
	// the offer gets a 503 with Retry-After. So an address holding the
	// table cannot lock the others out. Default: 100; negative for no
	// limit.
	MaxPendingSessions int
	// PerIP bounds what one client address may ask: sessions connecting
	// at once (32 by default), live sessions and the rate of signalling
	// requests (no limit by default); see [IPLimits].
	PerIP IPLimits
	// TrustedProxies are the reverse proxies whose forwarded header
	// (ForwardedHeader) names the client to PerIP. A request from any
	// other address is counted against that address, whatever headers it
	// carries. Default: none, every request is counted against the
	// connection's address.
	TrustedProxies []netip.Prefix
	// ForwardedHeader is the header TrustedProxies write the client's
	// address in: [HeaderXForwardedFor] or [HeaderForwarded] (RFC 7239).
	// Name the one the proxy sets (and overwrites or appends to): the
	// other is the client's to forge. Default: X-Forwarded-For.
	ForwardedHeader string
	// GatherTimeout bounds the wait for ICE gathering before answering.
	// Default: 10s.
	GatherTimeout time.Duration
	// StartTTL is how long a /start session id stays valid after its last
	// use while no live session was created through it. Default: 10m.
	StartTTL time.Duration
	// MaxStarts bounds the /start session ids kept that no live session
	// uses yet (a client posts its offer right after /start); past it the
	// oldest is forgotten. Ids in use by a live session are kept as long
	// as the session. Default: 1000 (16 MiB of bodies at most).
	MaxStarts int
	// TURN, if set, gives every /start client short-lived TURN
	// credentials of its own ([TURNCredentials]), once the request has
	// passed Authorize: they let their holder relay any traffic through
	// the TURN server until they expire, so NewServer refuses TURN without
	// Authorize unless TURN.Anonymous says that anyone may have them.
	// Default: nil.
	TURN *TURNCredentials
	// ShareICECredentials makes /start hand the browser the username and
	// credential of ICEServers. Default: false: /start lists their STUN
	// URLs only, because static TURN credentials handed to anyone who asks
	// let anyone relay through the operator's TURN server; use TURN
	// instead.
	ShareICECredentials bool

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
	// that long after its first offer, whatever restarts came in between
	// (a browser takes well under a second once it has the answer), and a
	// connected session whose restarted peer connection did not open its
	// channel within that long after the restart. Default: 10s more than
	// GatherTimeout, 20s.
	ConnectTimeout time.Duration
	// MaxMessageBytes bounds one data-channel message and is announced in
	// the answer's max-message-size; pion closes the channel of a client
	// that sends a message of that size or more, which ends the session.
	// Default: 256 KiB (RTVI needs 64 KiB).
	MaxMessageBytes int
	// MaxPendingMessages bounds the messages queued while the data channel
	// is not open, in each direction; more are dropped and counted.
	// Default: 256.
	MaxPendingMessages int
	// MaxBufferedBytes bounds what waits in the data channel's send buffer
	// (sent, not yet acknowledged by the client); past it messages wait in
	// the session's outbound queue, in order, and go out as the buffer
	// empties. Default: 1 MiB.
	MaxBufferedBytes int
	// MaxOutboundMessages and MaxOutboundBytes bound a session's outbound
	// queue: what waits behind a full send buffer. When it is full,
	// [Session.Send] waits for room (the pipeline waits for the client);
	// only superseded messages are coalesced, nothing else is dropped.
	// Defaults: 4096 messages, 4 MiB.
	MaxOutboundMessages int
	MaxOutboundBytes    int
	// StalledClientTimeout ends a session whose client has taken no
	// message for that long while messages wait for it (it stopped
	// reading its data channel), with the reason "the client stopped
	// reading". Default: 10s.
	StalledClientTimeout time.Duration
	// Inbound bounds the rate of each client's data-channel messages and
	// what waits before the pipeline starts; see [transports.InboundLimits].
	Inbound transports.InboundLimits
	// ShutdownGrace is how long a session's pipeline may take to finish
	// after [Server.Shutdown] has sent it an End (what is queued plays
	// out, the turn in flight completes) before it is cancelled.
	// Default: 10s.
	ShutdownGrace time.Duration

	// MeterProvider, if set, is where the transport creates its
	// instruments (scope [ScopeName]): framewire.output.late_frames and
	// framewire.output.underruns as they happen, framewire.opus.complexity
	// and framewire.queue.high_water ("webrtc.output.audio",
	// "webrtc.outbound") at each session's end,
	// framewire.signalling.responses by status and framewire.limits.refused
	// by limit ("sessions", "pending_sessions", "evicted_pending",
	// "ip_sessions", "ip_pending_sessions", "ip_rate", "inbound_rate",
	// "host", "admit"). Pass the program's provider (tel.MeterProvider() of
	// package telemetry). Default: none, the instruments are no-ops.
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
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.MaxStartBodyBytes <= 0 {
		o.MaxStartBodyBytes = 16 << 10
	}
	if o.MaxMediaSections == 0 {
		o.MaxMediaSections = 8
	}
	if o.MaxRequestDataBytes <= 0 {
		o.MaxRequestDataBytes = 16 << 10
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = 500
	}
	if o.MaxPendingSessions == 0 {
		o.MaxPendingSessions = 100
	}
	o.PerIP = o.PerIP.withDefaults()
	if o.ForwardedHeader == "" {
		o.ForwardedHeader = HeaderXForwardedFor
	}
	if o.GatherTimeout <= 0 {
		o.GatherTimeout = 10 * time.Second
	}
	if o.StartTTL <= 0 {
		o.StartTTL = 10 * time.Minute
	}
	if o.MaxStarts <= 0 {
		o.MaxStarts = 1000
	}
	if o.PingTimeout == 0 {
		o.PingTimeout = 3 * time.Second
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = o.GatherTimeout + 10*time.Second
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
	if o.MaxOutboundMessages <= 0 {
		o.MaxOutboundMessages = 4096
	}
	if o.MaxOutboundBytes <= 0 {
		o.MaxOutboundBytes = 4 << 20
	}
	if o.StalledClientTimeout <= 0 {
		o.StalledClientTimeout = 10 * time.Second
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 10 * time.Second
	}
	o.Input = o.Input.WithDefaults()
	o.Output = o.Output.withDefaults()
	return o
}

// Server serves SmallWebRTC signalling and owns the sessions it creates.
// It is an http.Handler; mount it at the root or under a prefix with
// http.StripPrefix, or serve it with [ListenAndServe], which adds
// production HTTP timeouts and an orderly shutdown when its context ends.
// [Server.Shutdown] ends every session gracefully,
// [Server.Close] at once; both wait for the sessions' goroutines.
type Server struct {
	opts Options
	// metrics are the instruments made from opts.MeterProvider.
	metrics *instruments
	log     *zap.Logger
	// reqLog is log sampled: the lines a client's requests can cause.
	reqLog *zap.Logger
	hosts  hostcheck.Allowlist
	api    *pion.API
	cfg    pion.Configuration
	codec  codec.Codec
	mux    *http.ServeMux

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
	assist *transports.Assist

	mu       sync.Mutex
	closed   bool
	byPC     map[string]*Session // the current pc_id of every session
	sessions map[*Session]struct{}
	// slots holds what each live session counts against.
	slots map[*Session]*sessionSlot
	// pending holds the live sessions whose data channel has not opened
	// yet, with when each was admitted; at most MaxPendingSessions, so
	// scanning them is cheap.
	pending map[*Session]time.Time
	starts  *startTable
	ips     *ipTable
	// gone is closed once the server is closed and its last session has
	// been torn down.
	gone     chan struct{}
	goneOnce sync.Once
}

// sessionSlot is what a live session holds: its /start entry and its
// client address's counts, released when it is torn down.
type sessionSlot struct {
	start *startEntry
	ip    *ipEntry
}

// NewServer returns a server with opts. It fails when NewPipeline is
// missing or the pion settings are invalid.
func NewServer(opts Options) (*Server, error) {
	if opts.NewPipeline == nil {
		return nil, errors.New("webrtc: Options.NewPipeline is required")
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		reqLog:   logsample.Logger(opts.Logger),
		hosts:    hostcheck.Allowlist{Hosts: opts.AllowHosts},
		codec:    codec.Default(),
		cfg:      pion.Configuration{ICEServers: opts.ICEServers},
		byPC:     map[string]*Session{},
		sessions: map[*Session]struct{}{},
		slots:    map[*Session]*sessionSlot{},
		pending:  map[*Session]time.Time{},
		starts:   newStartTable(opts.StartTTL, opts.MaxStarts),
		ips:      newIPTable(opts.PerIP),
		gone:     make(chan struct{}),
	}
	if opts.Output.OpusComplexity >= 0 && !opts.Output.FixedOpusComplexity {
		s.governor = newComplexityGovernor(time.Now(), opts.Output.OpusComplexity)
	}
	s.assist = transports.NewAssist(transports.AssistOptions{})
	metrics, err := newInstruments(opts.MeterProvider)
	if err != nil {
		return nil, err
	}
	s.metrics = metrics
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

// validate checks the options that have no safe default to fall back on.
func (o Options) validate() error {
	if err := o.TURN.validate(); err != nil {
		return err
	}
	if o.TURN != nil && o.Authorize == nil && !o.TURN.Anonymous {
		return errors.New("webrtc: Options.TURN hands relay credentials to every /start: set Options.Authorize " +
			"so that only authorized clients get them, or TURN.Anonymous to give them to anyone")
	}
	for _, p := range o.TrustedProxies {
		if !p.IsValid() {
			return fmt.Errorf("webrtc: Options.TrustedProxies has an invalid prefix %v", p)
		}
	}
	if o.ForwardedHeader != HeaderXForwardedFor && o.ForwardedHeader != HeaderForwarded {
		return fmt.Errorf("webrtc: Options.ForwardedHeader is %q, want %q or %q", o.ForwardedHeader, HeaderXForwardedFor, HeaderForwarded)
	}
	return nil
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
	if opts.DisableMDNS || !opts.ICE.ResolveMDNS {
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	}
	se.SetSCTPMaxMessageSize(uint32(opts.MaxMessageBytes))
	if opts.Settings != nil {
		opts.Settings(&se)
	}
	return pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se), pion.WithInterceptorRegistry(ir)), nil
}

// ServeHTTP implements http.Handler. In order: the Host check
// (Options.AllowHosts), the CORS headers, the per-address rate
// (Options.PerIP), a CORS preflight's answer, Options.Authorize, then the
// route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	httpstatus.Report(w, r, s.serveHTTP, s.metrics.signal.Response)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hosts.Allows(r.Host) {
		s.metrics.signal.Refused(r.Context(), limitHost)
		s.reqLog.Info("signalling request for a host not in AllowHosts", logRequest(r, nil)...)
		// The body names the rule, not the host: nothing the client sent
		// is reflected.
		writeError(w, http.StatusForbidden, "the Host header names a host this server does not serve")
		return
	}
	preflight := origin.Allow(w.Header(), s.opts.AllowOrigins, r.Header.Get("Origin")) && r.Method == http.MethodOptions
	if s.opts.PerIP.Rate > 0 && !s.allowRequest(w, r) {
		return
	}
	if preflight {
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "POST, PATCH, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !s.authorize(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// clientKey returns the key r's client is counted under by PerIP.
func (s *Server) clientKey(r *http.Request) netip.Addr {
	return limitKey(clientAddr(r, s.opts.TrustedProxies, s.opts.ForwardedHeader))
}

// allowRequest takes one request from the allowance of r's client
// address; when there is none it answers a 503 with Retry-After itself
// (the client retries 5xx) and returns false.
func (s *Server) allowRequest(w http.ResponseWriter, r *http.Request) bool {
	key := s.clientKey(r)
	now := time.Now()
	s.mu.Lock()
	ok, wait := s.ips.allow(s.ips.entry(key, now), now)
	s.mu.Unlock()
	if ok {
		return true
	}
	s.metrics.signal.Refused(r.Context(), limitIPRate)
	s.reqLog.Info("signalling request over the per-address rate", zap.Stringer("client", key),
		zap.String("method", r.Method), zap.String("path", r.URL.Path))
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
	writeError(w, http.StatusServiceUnavailable, "too many requests from this address; retry later")
	return false
}

// logRequest returns the log fields of a refused request; err may be nil.
func logRequest(r *http.Request, err error) []zap.Field {
	f := []zap.Field{zap.String("method", r.Method), zap.String("path", clip(r.URL.Path, 128)),
		zap.String("remote", r.RemoteAddr)}
	if err != nil {
		f = append(f, zap.Error(err))
	}
	return f
}

// Shutdown stops taking sessions and ends the running ones gracefully.
// From the first call, new sessions are refused with a 503 and a
// Retry-After, which the client retries (docs/protocol.md §1), so a load
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

// Session returns the session whose current peer connection is pcID.
func (s *Server) Session(pcID string) (*Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byPC[pcID]
	return ss, ok
}

// readBody reads a JSON body of at most limit bytes. It answers 415 (a
// body that is not application/json: what a page of another origin can
// send without a preflight), 413 or 400 itself and returns false.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if !isJSONContent(r.Header.Get("Content-Type")) {
		s.reqLog.Info("rejected a body that is not JSON", zap.String("path", clip(r.URL.Path, 128)),
			zap.String("content_type", clip(r.Header.Get("Content-Type"), 128)))
		writeError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
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

// isJSONContent reports whether a Content-Type is application/json
// (parameters such as charset allowed).
func isJSONContent(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// handleOffer serves POST .../api/offer. startID is the /start session id
// on the session path, "" otherwise.
func (s *Server) handleOffer(w http.ResponseWriter, r *http.Request, startID string) {
	body, ok := s.readBody(w, r, s.opts.MaxBodyBytes)
	if !ok {
		return
	}
	req, err := parseOffer(body)
	if err == nil {
		err = checkMediaSections(req.SDP, s.opts.MaxMediaSections)
	}
	if err != nil {
		s.reqLog.Info("rejected offer", zap.Error(err))
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if n := len(req.RequestData); n > s.opts.MaxRequestDataBytes {
		s.reqLog.Info("rejected offer", zap.Int("request_data_bytes", n))
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("requestData is over %d bytes", s.opts.MaxRequestDataBytes))
		return
	}
	var startBody json.RawMessage
	if startID != "" {
		s.mu.Lock()
		e := s.starts.get(startID, time.Now())
		if e != nil {
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
				ans, err = sess.restart(r.Context(), req.SDP, pcID)
				if err == nil {
					sess.announce(SessionEvent{Kind: SessionRestarted, PCID: ans.PCID, PrevPCID: pcID, Request: r})
				}
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
	if refused := s.admit(r); refused != nil {
		writeUnavailable(w, refused)
		return
	}
	ans, err := s.newSession(r, req.SDP, startID, data)
	s.reply(w, ans, err)
}

// reply writes an answer, or maps err to a status: 4xx only when retrying
// cannot help (docs/protocol.md §1: since 1.10.8 a 4xx stops the client).
func (s *Server) reply(w http.ResponseWriter, ans answerBody, err error) {
	if err == nil {
		writeJSON(w, http.StatusOK, ans)
		return
	}
	var unavailable *unavailableError
	switch {
	case errors.Is(err, errBadRequest):
		s.reqLog.Info("rejected offer", zap.Error(err))
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.As(err, &unavailable):
		s.reqLog.Warn("offer refused for now", zap.Error(err))
		writeUnavailable(w, unavailable)
	default:
		// The error may carry what the application's pipeline factory or
		// an upstream said: it goes to the log, under an id the client
		// is given instead.
		id := errorid.New()
		s.reqLog.Error("offer failed", zap.String("error_id", id), zap.Error(err))
		writeError(w, http.StatusInternalServerError, "the server could not start the session (error id "+id+")")
	}
}

// unavailableError is a retryable refusal (capacity, shutdown): a 503.
type unavailableError struct {
	msg        string
	retryAfter int
}

func (e *unavailableError) Error() string { return e.msg }

// writeUnavailable answers e: a 503 with its Retry-After.
func writeUnavailable(w http.ResponseWriter, e *unavailableError) {
	w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	writeError(w, http.StatusServiceUnavailable, e.msg)
}

// handlePatch serves PATCH .../api/offer.
func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request, startID string) {
	body, ok := s.readBody(w, r, s.opts.MaxBodyBytes)
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
	body, ok := s.readBody(w, r, s.opts.MaxStartBodyBytes)
	if !ok {
		return
	}
	req, err := parseStart(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if refused := s.admit(r); refused != nil {
		writeUnavailable(w, refused)
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
	s.starts.add(id, req.Body, now)
	s.mu.Unlock()
	if hook := s.opts.OnSession; hook != nil {
		hook(SessionEvent{Kind: StartIssued, StartID: id, Request: r})
	}
	resp := startResponse{SessionID: id}
	servers := browserICEServers(s.opts.ICEServers, s.opts.ShareICECredentials)
	if s.opts.TURN != nil {
		servers = append(servers, s.opts.TURN.issue(r, id, now))
	}
	if len(servers) == 0 && req.EnableDefaultICEServers {
		servers = defaultICEServers
	}
	if len(servers) > 0 {
		resp.ICEConfig = &iceConfig{ICEServers: servers}
	}
	writeJSON(w, http.StatusOK, resp)
}

// browserICEServers returns what /start tells the browser of list: each
// server as it is when it has no credentials or share is set, otherwise
// only its STUN URLs, which need none (a TURN URL without them would make
// the browser's RTCPeerConnection throw).
func browserICEServers(list []pion.ICEServer, share bool) []iceServer {
	out := make([]iceServer, 0, len(list))
	for _, v := range list {
		if share || (v.Username == "" && v.Credential == nil) {
			out = append(out, iceServer{URLs: v.URLs, Username: v.Username, Credential: v.Credential})
			continue
		}
		var stun []string
		for _, u := range v.URLs {
			if l := strings.ToLower(u); strings.HasPrefix(l, "stun:") || strings.HasPrefix(l, "stuns:") {
				stun = append(stun, u)
			}
		}
		if len(stun) > 0 {
			out = append(out, iceServer{URLs: stun})
		}
	}
	return out
}

// handleSessionPath serves /sessions/{id}/...: the offer routes, and an
// empty 200 for anything else under a known session (as Python's runner).
func (s *Server) handleSessionPath(w http.ResponseWriter, r *http.Request) {
	id, rest := r.PathValue("id"), r.PathValue("rest")
	s.mu.Lock()
	known := s.starts.get(id, time.Now()) != nil
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

// newSession creates a session for a first offer r: the pipeline, the
// peer connection and its answer. The pipeline starts once the answer is
// ready.
func (s *Server) newSession(r *http.Request, offer, startID string, data json.RawMessage) (answerBody, error) {
	client := s.clientKey(r)
	s.mu.Lock()
	slot, evicted, err := s.admitLocked(startID, client)
	if err != nil {
		s.mu.Unlock()
		return answerBody{}, err
	}
	sess := newSession(s, startID, data)
	s.sessions[sess] = struct{}{}
	s.slots[sess] = slot
	s.pending[sess] = time.Now()
	slot.ip.pending++
	s.mu.Unlock()
	if evicted != nil {
		// Ended outside s.mu: the lock order is session, then server.
		s.reqLog.Info("evicted a session still connecting: the connecting table is full and its address holds the most",
			zap.String("evicted", evicted.id), zap.Stringer("client", client))
		evicted.end(fmt.Sprintf("evicted: the server is at its limit of %d sessions connecting and this address holds the most of them",
			s.opts.MaxPendingSessions), true)
	}

	task, err := s.opts.NewPipeline(sess.ctx, sess)
	if err == nil && task == nil {
		err = errors.New("the pipeline factory returned no task")
	}
	if err != nil {
		sess.abandon()
		return answerBody{}, fmt.Errorf("webrtc: building the session pipeline: %w", err)
	}
	ans, err := sess.connect(r.Context(), offer)
	if err != nil {
		sess.abandon()
		return answerBody{}, err
	}
	// Announced before run starts, so before the session's end.
	sess.announce(SessionEvent{Kind: SessionStarted, PCID: ans.PCID, Request: r})
	// The server owns the session's goroutine: the session stays in
	// s.sessions until run has torn it down, and Shutdown and Close wait
	// for that.
	go sess.run(task)
	return ans, nil
}

// admitLocked decides whether a new session from client may start, with
// s.mu held, and claims what it will hold: its /start entry and its client
// address's counts. When the connecting table is full it may take the
// place of another address's oldest pending session, which it returns for
// the caller to end; the session is no longer counted as pending. Every
// refusal is a 503 with Retry-After: the client retries, and each limit
// frees up as sessions connect or end.
func (s *Server) admitLocked(startID string, client netip.Addr) (*sessionSlot, *Session, error) {
	o := &s.opts
	switch {
	case s.closed:
		return nil, nil, &unavailableError{"the server is shutting down", shutdownRetryAfter}
	case o.MaxSessions > 0 && len(s.sessions) >= o.MaxSessions:
		s.metrics.signal.Refused(s.ctx, limitSessions)
		return nil, nil, &unavailableError{fmt.Sprintf("the server is at its limit of %d sessions", o.MaxSessions), 2}
	}
	e := s.ips.entry(client, time.Now())
	if lim := o.PerIP.MaxSessions; lim > 0 && e.sessions >= lim {
		s.metrics.signal.Refused(s.ctx, limitIPSessions)
		return nil, nil, &unavailableError{fmt.Sprintf("this address is at its limit of %d sessions", lim), 5}
	}
	if lim := o.PerIP.MaxPendingSessions; lim > 0 && e.pending >= lim {
		s.metrics.signal.Refused(s.ctx, limitIPPending)
		return nil, nil, &unavailableError{fmt.Sprintf("this address is at its limit of %d sessions connecting", lim), 2}
	}
	var evicted *Session
	if o.MaxPendingSessions > 0 && len(s.pending) >= o.MaxPendingSessions {
		evicted = s.evictionLocked(e)
		if evicted == nil {
			s.metrics.signal.Refused(s.ctx, limitPendingSessions)
			return nil, nil, &unavailableError{fmt.Sprintf("the server is at its limit of %d sessions connecting", o.MaxPendingSessions), 2}
		}
		s.metrics.signal.Refused(s.ctx, limitEvictedPending)
		s.connectedLocked(evicted)
	}
	s.ips.claim(e)
	slot := &sessionSlot{ip: e}
	if se := s.starts.byID[startID]; startID != "" && se != nil {
		s.starts.claim(se)
		slot.start = se
	}
	return slot, evicted, nil
}

// evictionLocked returns the session a newcomer from e takes the place of
// in the full connecting table: the oldest pending session of the address
// that holds the most, if that address holds more than e does; nil
// otherwise (e itself holds the most: it waits for its own to connect).
// s.mu is held; the scans are over at most MaxPendingSessions sessions.
func (s *Server) evictionLocked(e *ipEntry) *Session {
	var most *ipEntry
	for sess := range s.pending {
		if ip := s.slots[sess].ip; most == nil || ip.pending > most.pending {
			most = ip
		}
	}
	if most == nil || most == e || most.pending <= e.pending+1 {
		return nil
	}
	var oldest *Session
	var at time.Time
	for sess, since := range s.pending {
		if s.slots[sess].ip == most && (oldest == nil || since.Before(at)) {
			oldest, at = sess, since
		}
	}
	return oldest
}

// connected marks sess as no longer pending: its data channel opened.
func (s *Server) connected(sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connectedLocked(sess)
}

// connectedLocked takes sess out of the pending table and its address's
// pending count, once. s.mu is held.
func (s *Server) connectedLocked(sess *Session) {
	if _, ok := s.pending[sess]; !ok {
		return
	}
	delete(s.pending, sess)
	if slot := s.slots[sess]; slot != nil {
		slot.ip.pending--
	}
}

// shutdownRetryAfter is the Retry-After, in seconds, of the 503 that a
// server shutting down answers new sessions with.
const shutdownRetryAfter = 5

// forget removes a finished session and all its pc_ids.
func (s *Server) forget(sess *Session, pcIDs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connectedLocked(sess)
	delete(s.sessions, sess)
	if slot := s.slots[sess]; slot != nil {
		if slot.start != nil {
			s.starts.release(slot.start, time.Now())
		}
		s.ips.release(slot.ip)
		delete(s.slots, sess)
	}
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
