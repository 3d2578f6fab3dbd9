package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/transports/webrtc"
)

// config is what the server runs with.
type config struct {
	// Addr is the listen address.
	Addr string
	// Brain is the model; Voice the speech services.
	Brain brain
	Voice voice
	// ResearchStep paces the simulated research workers.
	ResearchStep time.Duration
	// Trace logs the frames of every session (UI_AGENT_TRACE).
	Trace bool
}

func main() {
	addr := flag.String("addr", envOr("UI_AGENT_ADDR", "127.0.0.1:7860"), "listen address (env UI_AGENT_ADDR)")
	verbose := flag.Bool("v", os.Getenv("UI_AGENT_DEBUG") != "", "debug logs (env UI_AGENT_DEBUG)")
	flag.Parse()

	log := newLogger(*verbose)
	defer func() { _ = log.Sync() }()

	cfg := config{Addr: *addr, Brain: chooseBrain(os.Getenv), Voice: chooseVoice(context.Background(), os.Getenv), ResearchStep: 2 * time.Second,
		Trace: os.Getenv("UI_AGENT_TRACE") != ""}
	// serve handles SIGINT and SIGTERM itself (webrtc.Serve).
	if err := serve(context.Background(), cfg, log, nil); err != nil {
		log.Error("ui-agent demo failed", zap.Error(err))
		os.Exit(1)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func newLogger(verbose bool) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	level := zap.InfoLevel
	if verbose {
		level = zap.DebugLevel
	}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), level)
	return zap.New(core)
}

// serve runs the demo until ctx ends or the process gets SIGINT or
// SIGTERM, then ends the sessions gracefully (webrtc.Serve). ready, when
// not nil, receives the address the server listens on (tests listen on
// port 0).
func serve(ctx context.Context, cfg config, log *zap.Logger, ready chan<- string) error {
	b := &bot{brain: cfg.Brain, voice: cfg.Voice, log: log, researchStep: cfg.ResearchStep, trace: cfg.Trace}
	rtc, err := webrtc.NewServer(webrtc.Options{
		NewPipeline: b.newPipeline,
		Logger:      log.Named("webrtc"),
		// The browser runs on this machine: offer loopback candidates too,
		// so the demo connects even where mDNS or the LAN address does not.
		IncludeLoopback: true,
		MaxSessions:     32,
	})
	if err != nil {
		return fmt.Errorf("starting the WebRTC server: %w", err)
	}
	h := handler(cfg, rtc)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		_ = rtc.Close()
		return fmt.Errorf("listening on %s: %w (another demo running? pass -addr or UI_AGENT_ADDR)", cfg.Addr, err)
	}

	url := "http://" + ln.Addr().String() + "/"
	if _, ok := pageFS(); !ok {
		log.Warn("the page bundle was not built into this binary: run examples/ui-agent/build.sh, then start the server again")
	}
	switch cfg.Brain.Kind {
	case "demo":
		log.Info("brain: OFFLINE DEMO BRAIN (deterministic rules, no LLM)", zap.String("why", cfg.Brain.Detail))
	default:
		log.Info("brain: "+cfg.Brain.Label, zap.String("detail", cfg.Brain.Detail))
	}
	log.Info("voice", zap.Bool("stt", cfg.Voice.STT), zap.Bool("tts", cfg.Voice.TTS), zap.String("note", cfg.Voice.Note))
	log.Info("framewire UI agent demo is running: open " + url)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	return webrtc.Serve(ctx, ln, rtc, webrtc.ServeOptions{Handler: h})
}

// handler routes the page, its config and the signalling.
func handler(cfg config, rtc *webrtc.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/api/offer", rtc)
	mux.Handle("/start", rtc)
	mux.Handle("/sessions/", rtc)
	mux.HandleFunc("GET /api/config", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(struct {
			Brain brain `json:"brain"`
			Voice voice `json:"voice"`
		}{cfg.Brain, cfg.Voice})
	})
	mux.Handle("/", pageHandler())
	return mux
}
