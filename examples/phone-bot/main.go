package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/otelsetup"
	"github.com/framewire/framewire/transports/telephony"
	"github.com/framewire/framewire/transports/telephony/twilio"
)

func main() {
	log := newLogger(os.Getenv("VOICE_DEBUG") != "")
	defer func() { _ = log.Sync() }()
	// main owns the signals: the first SIGINT or SIGTERM ends ctx, which
	// shuts the server down gracefully; a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	if err := serve(ctx, configure(os.Getenv), &bot{log: log}, nil); err != nil {
		log.Error("phone-bot failed", zap.Error(err))
		os.Exit(1)
	}
}

func newLogger(debug bool) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	level := zap.InfoLevel
	if debug {
		level = zap.DebugLevel
	}
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), level))
}

// shutdownGrace bounds the graceful end of the calls after a signal.
const shutdownGrace = 15 * time.Second

// serve answers calls until ctx ends, then ends them gracefully. b's cfg
// is set from cfg. ready, when not nil, receives the address it listens
// on.
func serve(ctx context.Context, cfg config, b *bot, ready chan<- string) error {
	log := b.log
	b.cfg = cfg
	if cfg.AuthToken == "" && !cfg.Insecure {
		return errors.New("TWILIO_AUTH_TOKEN is not set: it checks that calls come from Twilio (PHONE_BOT_INSECURE=1 turns the check off, for local tests only)")
	}
	// Telemetry is configured by the environment (OTEL_EXPORTER_OTLP_*,
	// FRAMEWIRE_METRICS_ADDR; docs/observability.md) and off without it.
	otel, err := otelsetup.Setup(ctx, otelsetup.Options{ServiceName: "framewire-phone-bot"})
	if err != nil {
		return fmt.Errorf("setting up OpenTelemetry: %w", err)
	}
	defer func() { _ = otel.Shutdown(context.WithoutCancel(ctx)) }()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
	if err != nil {
		return fmt.Errorf("setting up telemetry: %w", err)
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }() // before otel's: the calls' spans are flushed
	b.tel = tel
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (set ADDR to another address)", cfg.Addr, err)
	}
	base, streamURL, err := cfg.urls(ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return err
	}
	provider := twilio.Provider{}
	if cfg.AccountSID != "" && cfg.AuthToken != "" {
		provider.REST = &twilio.REST{BaseURL: cfg.RESTBaseURL, AccountSID: cfg.AccountSID, AuthToken: cfg.AuthToken}
	}
	srv, err := telephony.NewServer(provider, telephony.Options{NewPipeline: b.newPipeline, Logger: log.Named("telephony")})
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("starting the telephony server: %w", err)
	}
	verifier := twilio.Verifier{AuthToken: cfg.AuthToken, Insecure: cfg.Insecure}
	if cfg.PublicURL != "" {
		verifier.PublicURL = base // behind a tunnel the request's host is not what Twilio signed
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+answerPath, &twilio.Webhook{Verifier: verifier, Server: srv, StreamURL: streamURL})
	mux.Handle("GET "+streamPath, srv)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "framewire phone-bot\n\nPoint a Twilio number's \"A call comes in\" webhook (HTTP POST) at %s%s.\n\nSTT: %s\nLLM: %s\nTTS: %s\n",
			base, answerPath, cfg.STT.Name, cfg.LLM.Name, ttsName(cfg.TTS))
	})
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}

	if cfg.Insecure {
		log.Warn("PHONE_BOT_INSECURE=1: webhook signatures are not checked; never expose this server to the internet")
	}
	if provider.REST == nil {
		log.Info("no TWILIO_ACCOUNT_SID: a call the bot ends is not hung up through Twilio's REST API (Twilio ends it when the stream closes)")
	}
	log.Info("STT: " + cfg.STT.Name)
	log.Info("LLM: " + cfg.LLM.Name)
	log.Info("TTS: " + ttsName(cfg.TTS))
	log.Info("phone-bot listening", zap.String("webhook", base+answerPath), zap.String("stream", streamURL))
	if ready != nil {
		ready <- ln.Addr().String()
	}

	// The metrics endpoint (FRAMEWIRE_METRICS_ADDR) lives as long as the
	// server.
	return otel.ServeMetricsWhile(ctx, func(ctx context.Context) error {
		return run(ctx, hs, ln, srv)
	}, func(err error) { log.Warn("the metrics endpoint failed", zap.Error(err)) })
}

// run serves hs on ln until ctx ends, then ends the calls gracefully and
// the HTTP server.
func run(ctx context.Context, hs *http.Server, ln net.Listener, srv *telephony.Server) error {
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	stopped := false // hs.Serve returned
	select {
	case err = <-served:
		stopped = true
	case <-ctx.Done():
	}
	// Calls end gracefully first (their sockets are hijacked, so
	// hs.Shutdown does not wait for them), then the HTTP server.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && err == nil {
		err = fmt.Errorf("the calls did not end within %v: %w", shutdownGrace, serr)
	}
	if herr := hs.Shutdown(sctx); herr != nil {
		_ = hs.Close()
	}
	if !stopped {
		if serveErr := <-served; err == nil && !errors.Is(serveErr, http.ErrServerClosed) {
			err = serveErr
		}
	}
	return err
}

func ttsName(t ttsChoice) string {
	if t.missing != "" {
		return "none (" + t.missing + ")"
	}
	return t.Name
}
