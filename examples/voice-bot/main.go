package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/otelsetup"
	"github.com/framewire/framewire/transports/webrtc"
)

func main() {
	log := newLogger(os.Getenv("VOICE_DEBUG") != "")
	defer func() { _ = log.Sync() }()
	// main owns the signals: the first SIGINT or SIGTERM ends ctx, which
	// shuts the server down gracefully; a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	if err := serve(ctx, configure(os.Getenv), log, nil); err != nil {
		log.Error("voice-bot failed", zap.Error(err))
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

// serve runs the signalling server until ctx ends, then ends the sessions
// gracefully (webrtc.Serve).
// ready, when not nil, receives the address it listens on.
func serve(ctx context.Context, cfg config, log *zap.Logger, ready chan<- string) error {
	// Telemetry is configured by the environment (OTEL_EXPORTER_OTLP_*,
	// FRAMEWIRE_METRICS_ADDR; docs/observability.md) and off without it.
	otel, err := otelsetup.Setup(ctx, otelsetup.Options{ServiceName: "framewire-voice-bot"})
	if err != nil {
		return fmt.Errorf("setting up OpenTelemetry: %w", err)
	}
	defer func() { _ = otel.Shutdown(context.WithoutCancel(ctx)) }()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
	if err != nil {
		return fmt.Errorf("setting up telemetry: %w", err)
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }() // before otel's: the sessions' spans are flushed
	b := &bot{cfg: cfg, log: log, tel: tel}
	rtc, err := webrtc.NewServer(webrtc.Options{
		NewPipeline: b.newPipeline,
		// The transport's counters (late frames, underruns, signalling
		// responses, refusals) go to the same metrics; nil when off.
		MeterProvider:   otel.MeterProvider(),
		Logger:          log.Named("webrtc"),
		IncludeLoopback: true,
	})
	if err != nil {
		return fmt.Errorf("starting the WebRTC server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/offer", rtc)
	mux.Handle("/start", rtc)
	mux.Handle("/sessions/", rtc)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "framewire voice-bot\n\nConnect a Pipecat client (@pipecat-ai/client-js with the SmallWebRTC transport) to %s/api/offer.\n\nSTT: %s\nLLM: %s\nTTS: %s\n",
			"http://"+r.Host, cfg.STT.Name, cfg.LLM.Name, ttsName(cfg.TTS))
	})

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		_ = rtc.Close()
		return fmt.Errorf("listening on %s: %w (set ADDR to another address)", cfg.Addr, err)
	}

	if cfg.STT.build == nil {
		log.Warn("STT: none configured, so the bot cannot hear: it says so to each client and answers typed messages (RTVI send-text) out loud. Set DEEPGRAM_API_KEY, STT_BASE_URL or OPENAI_API_KEY to talk to it.")
	} else {
		log.Info("STT: " + cfg.STT.Name + ", voice activity by " + cfg.VAD.Name)
	}
	log.Info("LLM: " + cfg.LLM.Name)
	if cfg.TTS.missing != "" {
		log.Warn("TTS: " + cfg.TTS.missing)
	} else {
		log.Info("TTS: " + cfg.TTS.Name)
	}
	log.Info("voice-bot listening: SmallWebRTC offers at http://" + ln.Addr().String() + "/api/offer")
	if ready != nil {
		ready <- ln.Addr().String()
	}
	// The metrics endpoint (FRAMEWIRE_METRICS_ADDR) lives as long as the
	// server.
	return otel.ServeMetricsWhile(ctx, func(ctx context.Context) error {
		return webrtc.Serve(ctx, ln, rtc, webrtc.ServeOptions{Handler: mux})
	}, func(err error) { log.Warn("the metrics endpoint failed", zap.Error(err)) })
}

func ttsName(t ttsChoice) string {
	if t.missing != "" {
		return "none (" + t.missing + ")"
	}
	return t.Name
}
