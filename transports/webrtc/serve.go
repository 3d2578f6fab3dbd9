package webrtc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// ServeOptions configure [Serve] and [ListenAndServe]. The zero value
// serves the [Server] alone with the production defaults in the comments;
// a negative timeout turns that timeout off.
type ServeOptions struct {
	// Handler is what the HTTP server serves: the Server's signalling
	// routes, possibly mounted on a mux next to the application's own
	// (its page, a health check). Default: the Server alone.
	Handler http.Handler
	// Logger receives the start-up and shutdown logs and the HTTP
	// server's errors. Default: the Server's logger.
	Logger *zap.Logger

	// ReadHeaderTimeout bounds reading a request's headers. Default: 5s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (an offer
	// is a few kilobytes), so a client dripping its body is cut off.
	// Default: 15s.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of a request's headers to
	// the end of its response. The signalling routes answer an offer once
	// ICE gathering is done, so the default leaves room for the Server's
	// GatherTimeout: 30s, or GatherTimeout plus 20s when that is longer. A
	// handler that streams its response (server-sent events) lifts the
	// deadline for itself with http.ResponseController.SetWriteDeadline.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request. The client's requests come in a burst as it connects
	// (offer, candidate PATCHes) and again only if it restarts, so an idle
	// connection is mostly a held socket. Default: 30s.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers. Default: 64 KiB (the
	// real clients send well under 2 KiB).
	MaxHeaderBytes int

	// ShutdownTimeout bounds the whole shutdown: sessions still running
	// when it has passed are cancelled at once ([Server.Close]). The
	// sessions' own grace, after which each pipeline is cancelled, is the
	// Server's Options.ShutdownGrace; the default ShutdownTimeout is that
	// grace plus 10s, the time a cancelled pipeline and its peer
	// connections take to close.
	ShutdownTimeout time.Duration
	// Configure, if set, adjusts the http.Server after the options above
	// were applied (TLS, ConnState, BaseContext, ...).
	Configure func(*http.Server)
	// Also are other servers mounted in Handler whose sessions Serve
	// ends with the Server's (another transport's: a websocket.Server):
	// their Shutdown runs beside the Server's, within ShutdownTimeout, and
	// their Close when it is past.
	Also []Stopper
}

// Stopper is a server whose sessions [Serve] ends with its Server's.
type Stopper interface {
	Shutdown(ctx context.Context) error
	Close() error
}

func (o ServeOptions) withDefaults(srv *Server) ServeOptions {
	if o.Handler == nil {
		o.Handler = srv
	}
	if o.Logger == nil {
		o.Logger = srv.log
	}
	o.ReadHeaderTimeout = orDefault(o.ReadHeaderTimeout, 5*time.Second)
	o.ReadTimeout = orDefault(o.ReadTimeout, 15*time.Second)
	o.WriteTimeout = orDefault(o.WriteTimeout, max(30*time.Second, srv.opts.GatherTimeout+20*time.Second))
	o.IdleTimeout = orDefault(o.IdleTimeout, 30*time.Second)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = srv.opts.ShutdownGrace + 10*time.Second
	}
	return o
}

// orDefault maps an unset duration to def and a negative one to 0, which
// net/http reads as no timeout.
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// httpServer returns the HTTP server of opts (defaults applied).
func (o ServeOptions) httpServer(draining *atomic.Bool) *http.Server {
	next := o.Handler
	hs := &http.Server{
		// While draining, every response asks the client to close its
		// connection, so idle keep-alive connections are not cut under a
		// request that is already on its way (a POST on a connection closed
		// by the server fails with EOF instead of getting its 503).
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if draining.Load() {
				w.Header().Set("Connection", "close")
			}
			next.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          zap.NewStdLog(o.Logger.Named("http")),
	}
	if o.Configure != nil {
		o.Configure(hs)
	}
	return hs
}

// ListenAndServe listens on the TCP address addr and serves srv there
// like [Serve].
func ListenAndServe(ctx context.Context, addr string, srv *Server, opts ServeOptions) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("webrtc: listening on %s: %w", addr, err)
	}
	return Serve(ctx, ln, srv, opts)
}

// Serve serves opts.Handler (by default srv) on ln, with production HTTP
// timeouts, until ctx ends. Then it shuts down in order:
//
//  1. srv stops taking sessions: new offers get a 503 with Retry-After,
//     which the client retries; the running sessions keep their
//     signalling, and keep-alives are turned off so that clients
//     reconnect elsewhere.
//  2. Each running session's pipeline gets an End and finishes what it
//     was doing; those still running after the Server's
//     Options.ShutdownGrace are cancelled ([Server.Shutdown]).
//  3. Once all sessions are torn down (or opts.ShutdownTimeout has passed:
//     then [Server.Close] cancels what is left), the HTTP server shuts down
//     and Serve returns nil.
//
// If serving fails, Serve closes srv and returns the error. Serve closes
// ln.
//
// Serve handles no signals: like net/http, it leaves them to main, which
// turns SIGINT and SIGTERM into the end of ctx and, after the first one,
// restores the default handling so that a second Ctrl-C kills the process
// at once instead of waiting for the sessions:
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	context.AfterFunc(ctx, stop) // after the first signal, the next one kills the process
//	err := webrtc.ListenAndServe(ctx, ":7860", srv, webrtc.ServeOptions{})
func Serve(ctx context.Context, ln net.Listener, srv *Server, opts ServeOptions) error {
	opts = opts.withDefaults(srv)
	log := opts.Logger
	var draining atomic.Bool
	hs := opts.httpServer(&draining)

	// Serve owns the goroutines it starts and waits for them.
	var wg sync.WaitGroup
	defer wg.Wait()
	served := make(chan error, 1)
	wg.Go(func() { served <- hs.Serve(ln) })

	select {
	case err := <-served:
		_ = srv.Close()
		for _, o := range opts.Also {
			_ = o.Close()
		}
		return fmt.Errorf("webrtc: serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		log.Info("shutting down", zap.Int("sessions", srv.SessionCount()), zap.Duration("grace", srv.opts.ShutdownGrace))
	}
	draining.Store(true)

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.ShutdownTimeout)
	defer cancel()
	var stopping sync.WaitGroup
	for _, o := range append([]Stopper{srv}, opts.Also...) {
		stopping.Go(func() {
			if err := o.Shutdown(sctx); err != nil {
				log.Warn("sessions did not end in time: cancelling them", zap.Error(err))
				_ = o.Close()
			}
		})
	}
	stopping.Wait()

	// Every session is gone: what is left are signalling requests in
	// flight, which the write timeout bounds.
	hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer hcancel()
	if err := hs.Shutdown(hctx); err != nil {
		log.Warn("HTTP requests still in flight: closing their connections", zap.Error(err))
		_ = hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("webrtc: serving on %s: %w", ln.Addr(), err)
	}
	log.Info("shut down")
	return nil
}
