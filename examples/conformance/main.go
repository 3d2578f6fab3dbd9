package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	pion "github.com/pion/webrtc/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/examples/internal/conformancebot"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/otelsetup"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket"
)

// defaultAddr is the address of the conformance bot (docs/protocol.md §10).
const defaultAddr = "127.0.0.1:7861"

// defaultOrigins are the CORS origins allowed by default: test pages
// served on this machine, on any port. A page on another host (any web
// page the operator visits) cannot create sessions.
const defaultOrigins = "http://127.0.0.1:*,http://localhost:*,http://[::1]:*,https://127.0.0.1:*,https://localhost:*,https://[::1]:*"

func main() {
	addr := flag.String("addr", defaultAddr, "listen address (host:port)")
	origins := flag.String("allow-origin", defaultOrigins, `comma-separated origins allowed to call the bot from a page served elsewhere ("*" for any, "http://host:*" for a host on any port, "" to disable CORS)`)
	verbose := flag.Bool("v", false, "debug logs")
	flag.Parse()

	level := zapcore.InfoLevel
	if *verbose {
		level = zapcore.DebugLevel
	}
	cfg := zap.NewDevelopmentConfig()
	cfg.Level = zap.NewAtomicLevelAt(level)
	cfg.DisableStacktrace = true
	log, err := cfg.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
	defer func() { _ = log.Sync() }()

	// main owns the signals: the first SIGINT or SIGTERM ends ctx, which
	// shuts the server down gracefully; a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	err = run(ctx, config{Addr: *addr, AllowOrigins: splitList(*origins), Logger: log}, os.Stdout)
	if err != nil {
		log.Error("conformance bot stopped", zap.Error(err))
		os.Exit(1)
	}
}

// config is what run needs; the zero value of every field but Addr is
// usable.
type config struct {
	// Addr is the listen address.
	Addr string
	// AllowOrigins are the CORS origins; none disables CORS.
	AllowOrigins []string
	// Logger receives the logs. Default: none.
	Logger *zap.Logger
	// Settings adjusts pion's SettingEngine (tests restrict ICE to
	// loopback with it).
	Settings func(*pion.SettingEngine)
	// Telemetry receives each session's spans and metrics and the
	// transport's counters. Default: none.
	Telemetry *telemetry.Telemetry
}

// newServer returns the signalling server whose sessions each run the
// conformance bot. It serves every route itself: the signalling routes of
// docs/protocol.md §10, CORS preflights, and 404 for anything else.
func newServer(cfg config) (*webrtc.Server, error) {
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return webrtc.NewServer(webrtc.Options{
		Logger:       log.Named("webrtc"),
		AllowOrigins: cfg.AllowOrigins,
		// A local test server: the browser runs on the same host, so the
		// answer offers loopback candidates (and accepts the browser's).
		// The browser's mDNS names are not resolved (the default): its
		// address shows up as a peer-reflexive candidate when it connects.
		IncludeLoopback: true,
		Settings:        cfg.Settings,
		MeterProvider:   cfg.Telemetry.MeterProvider(), // nil when off
		NewPipeline: func(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			slog := log.With(zap.String("session", s.ID()))
			// The server logs the session's end and its reason.
			slog.Info("session started", zap.String("pc_id", s.PCID()), zap.String("start_id", s.StartID()))
			task := conformancebot.New(s.Input(), s.Output(), slog, conformancebot.Options{})
			cfg.Telemetry.StartSession(ctx, telemetry.SessionOptions{ID: s.ID(), Transport: "webrtc"}).Attach(task)
			return task, nil
		},
	})
}

// newWebSocketServer returns the server of Pipecat's WebSocket transport
// whose sessions each run the conformance bot with its tone
// (conformance-bot.md §14): POST /connect answers {"wsUrl"}, GET /ws is the
// socket.
func newWebSocketServer(cfg config) (*websocket.Server, error) {
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return websocket.NewServer(websocket.Options{
		Logger:        log.Named("websocket"),
		AllowOrigins:  cfg.AllowOrigins,
		MeterProvider: cfg.Telemetry.MeterProvider(),
		NewPipeline: func(ctx context.Context, s *websocket.Session) (*pipeline.Task, error) {
			slog := log.With(zap.String("session", s.ID()), zap.String("transport", "websocket"))
			slog.Info("session started")
			task := conformancebot.New(s.Input(), s.Output(), slog, conformancebot.Options{Tone: true})
			cfg.Telemetry.StartSession(ctx, telemetry.SessionOptions{ID: s.ID(), Transport: "websocket"}).Attach(task)
			return task, nil
		},
	})
}

// handler serves both transports: the WebSocket transport's two routes,
// and everything else by the WebRTC server.
func handler(rtc *webrtc.Server, ws *websocket.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ws", ws)
	mux.Handle("/connect", ws)
	mux.Handle("/", rtc)
	return mux
}

// run serves the bot on cfg.Addr until ctx ends, then ends every session
// gracefully (the clients get
// peerLeft) and returns (webrtc.Serve). It prints "listening on
// http://ADDR" to stdout once it accepts connections. Telemetry comes
// from the environment, as in every example server (OTEL_* for traces,
// FRAMEWIRE_METRICS_ADDR for a Prometheus endpoint; docs/observability.md),
// and is off without it.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	otel, err := otelsetup.Setup(ctx, otelsetup.Options{ServiceName: "framewire-conformance"})
	if err != nil {
		return fmt.Errorf("setting up OpenTelemetry: %w", err)
	}
	defer func() { _ = otel.Shutdown(context.WithoutCancel(ctx)) }()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
	if err != nil {
		return fmt.Errorf("setting up telemetry: %w", err)
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }() // before otel's: the sessions' spans are flushed
	cfg.Telemetry = tel
	srv, err := newServer(cfg)
	if err != nil {
		return err
	}
	ws, err := newWebSocketServer(cfg)
	if err != nil {
		_ = srv.Close()
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		_ = srv.Close()
		_ = ws.Close()
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "websocket transport: ws://%s/ws (connect endpoint: POST http://%s/connect)\n", ln.Addr(), ln.Addr())
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return otel.ServeMetricsWhile(ctx, func(ctx context.Context) error {
		return webrtc.Serve(ctx, ln, srv, webrtc.ServeOptions{Handler: handler(srv, ws), Also: []webrtc.Stopper{ws}})
	}, func(err error) { log.Warn("the metrics endpoint failed", zap.Error(err)) })
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
