package telephony

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/internal/onetime"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
)

// PipelineFactory builds the pipeline of a call: it should wrap the
// session's processors, pipeline.New(s.Input(), ..., s.Output()), and
// return the task unstarted. s.Call() says whose call it is. An error
// ends the call's stream.
type PipelineFactory func(ctx context.Context, s *Session) (*pipeline.Task, error)

// TokenParameter is the name of the stream parameter (or URL query
// parameter) that carries the one-time token a webhook answer puts in
// the stream it opens ([Server.NewToken]).
const TokenParameter = "framewire_token"

// Options configure a [Server]. Only NewPipeline is required.
type Options struct {
	// NewPipeline builds each call's pipeline. Required.
	NewPipeline PipelineFactory
	// Logger receives the server's logs. Default: none.
	Logger *zap.Logger
	// MaxSessions bounds the live calls; a stream past it is refused with
	// a 503 before the upgrade. Default: 500; negative: no limit.
	MaxSessions int
	// StartTimeout bounds the time from the socket's opening to the
	// stream's start message. Default: 10s.
	StartTimeout time.Duration
	// TokenTTL is how long a token from NewToken waits for its stream;
	// MaxTokens bounds the tokens kept (the oldest forgotten first).
	// Defaults: 1m and 1000.
	TokenTTL  time.Duration
	MaxTokens int
	// MaxMessageBytes bounds one message from the provider. Default:
	// 64 KiB.
	MaxMessageBytes int
	// PingInterval, PingTimeout, WriteTimeout and MaxOutboundBytes bound
	// the socket, as websocket.SocketOptions says. Defaults: 10s, 10s,
	// 10s, 1 MiB.
	PingInterval     time.Duration
	PingTimeout      time.Duration
	WriteTimeout     time.Duration
	MaxOutboundBytes int
	// Input configures each call's input transport. Its MaxAhead bounds
	// how far ahead of real time the provider may send the caller's
	// audio.
	Input transports.InputOptions
	// Output configures each call's output (StopSpeakingAfter,
	// BotSpeakingInterval, MaxPlaybackDelay: how long the bot's words
	// wait for the provider's mark echoes).
	Output transports.OutputOptions
	// ShutdownGrace is how long a call's pipeline may take to finish after
	// Shutdown before it is cancelled. Default: 10s.
	ShutdownGrace time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = 500
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = time.Minute
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 1000
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 64 << 10
	}
	if o.MaxOutboundBytes <= 0 {
		o.MaxOutboundBytes = 1 << 20
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 10 * time.Second
	}
	o.Input = o.Input.WithDefaults()
	return o
}

// Server accepts one provider's media streams and runs a pipeline per
// call. It is the http.Handler of the stream's URL (the socket); the
// provider package's webhook handler answers the incoming call with the
// markup that opens a stream to it, carrying a token from NewToken, so
// that only streams the webhook announced are taken.
type Server struct {
	opts     Options
	provider Provider
	log      *zap.Logger
	reqLog   *zap.Logger
	assist   *transports.Assist

	ctx        context.Context
	cancel     context.CancelFunc
	drain      context.Context
	startDrain context.CancelFunc

	mu       sync.Mutex
	closed   bool
	sessions map[*Session]struct{}
	tokens   onetime.Table[struct{}]
	wg       sync.WaitGroup
}

// NewServer returns a server of p's streams.
func NewServer(p Provider, opts Options) (*Server, error) {
	if p == nil {
		return nil, errors.New("telephony: NewServer needs a Provider")
	}
	if opts.NewPipeline == nil {
		return nil, errors.New("telephony: Options.NewPipeline is required")
	}
	opts = opts.withDefaults()
	s := &Server{
		opts: opts, provider: p,
		log:      opts.Logger.With(zap.String("provider", p.Name())),
		assist:   transports.NewAssist(transports.AssistOptions{}),
		sessions: map[*Session]struct{}{},
		tokens:   onetime.Table[struct{}]{TTL: opts.TokenTTL, Max: opts.MaxTokens},
	}
	s.reqLog = logsample.Logger(s.log)
	// The server is a process-level root: its calls outlive the requests
	// that open them.
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.drain, s.startDrain = context.WithCancel(s.ctx)
	return s, nil
}

// NewToken returns a one-time token for the stream a webhook answer is
// about to open: put it in the stream's parameters (or its URL's query)
// as TokenParameter.
func (s *Server) NewToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens.Put(token, struct{}{}, time.Now())
	return token
}

// takeToken uses up token; it reports false for one never issued, used or
// expired.
func (s *Server) takeToken(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tokens.Take(token, time.Now())
	return ok
}

// SessionCount returns the number of live calls.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Shutdown stops taking calls and ends the live ones gracefully, within
// ctx; it waits for them.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
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

// Close ends every call at once and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// ServeHTTP accepts a stream's socket. A request with an Origin header
// comes from a browser page, not a provider: it is refused.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" {
		http.Error(w, "forbidden: media streams come from the telephony provider, not from pages", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "unavailable: the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	if max := s.opts.MaxSessions; max > 0 && len(s.sessions) >= max {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "unavailable: the server is at its call limit", http.StatusServiceUnavailable)
		return
	}
	sess := newSession(s, uuid.NewString())
	s.sessions[sess] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, sess)
		s.mu.Unlock()
	}()
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.reqLog.Info("websocket handshake failed", zap.Error(err))
		return
	}
	sess.serve(r, c)
}
