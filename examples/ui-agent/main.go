package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/internal/hostcheck"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/inspector"
	"github.com/framewire/framewire/telemetry/otelsetup"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket"
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
	// Inspector serves the live session inspector at /inspector/ to
	// loopback clients (FRAMEWIRE_INSPECTOR=1).
	Inspector bool
	// Watchdog bounds a turn: past it the agent gives its fallback answer
	// (UI_AGENT_WATCHDOG, default 45s).
	Watchdog time.Duration
	// AllowHosts are the Host names the demo answers besides localhost
	// names, IP literals and the -addr host (-allow-host,
	// UI_AGENT_ALLOWED_HOSTS): a page whose domain rebinds to the demo's
	// address sends its own name and gets a 403.
	AllowHosts []string
}

func main() {
	addr := flag.String("addr", envOr("UI_AGENT_ADDR", "127.0.0.1:7860"), "listen address (env UI_AGENT_ADDR)")
	verbose := flag.Bool("v", os.Getenv("UI_AGENT_DEBUG") != "", "debug logs (env UI_AGENT_DEBUG)")
	hosts := flag.String("allow-host", os.Getenv("UI_AGENT_ALLOWED_HOSTS"),
		`comma-separated Host names served besides localhost names, IP literals and the -addr host ("*.example.com" for the names under it; env UI_AGENT_ALLOWED_HOSTS)`)
	flag.Parse()

	log := newLogger(*verbose)
	defer func() { _ = log.Sync() }()

	watchdog, _ := time.ParseDuration(os.Getenv("UI_AGENT_WATCHDOG"))
	cfg := config{Addr: *addr, Brain: chooseBrain(os.Getenv), ResearchStep: 2 * time.Second, Watchdog: watchdog,
		Trace: os.Getenv("UI_AGENT_TRACE") != "", Inspector: os.Getenv("FRAMEWIRE_INSPECTOR") == "1",
		AllowHosts: splitList(*hosts)}
	if cfg.Brain.realtime != nil {
		// The speech-to-speech model hears and speaks itself.
		cfg.Voice = voice{STT: true, TTS: true, Note: "Voice is on: " + cfg.Brain.Label + " hears and speaks."}
	} else {
		cfg.Voice = chooseVoice(context.Background(), os.Getenv)
	}
	// main owns the signals: the first SIGINT or SIGTERM ends ctx, which
	// shuts the server down gracefully; a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	if err := serve(ctx, cfg, log, nil); err != nil {
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

// splitList splits a comma-separated value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// allowlist is the Host allowlist of the demo's routes.
func (c config) allowlist() hostcheck.Allowlist {
	a := hostcheck.Default(c.Addr)
	a.Hosts = append(a.Hosts, c.AllowHosts...)
	return a
}

// public is the config as a client may see it (the page, the logs): the
// URLs in its notes without credentials or query strings.
func (c config) public() config {
	c.Brain.Detail, c.Brain.Label = redactURLs(c.Brain.Detail), redactURLs(c.Brain.Label)
	c.Voice.Note = redactURLs(c.Voice.Note)
	return c
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

// serve runs the demo until ctx ends, then ends the sessions of both
// transports gracefully (webrtc.Serve). ready, when
// not nil, receives the address the server listens on (tests listen on
// port 0).
func serve(ctx context.Context, cfg config, log *zap.Logger, ready chan<- string) error {
	// Telemetry is configured by the environment (OTEL_EXPORTER_OTLP_*,
	// FRAMEWIRE_METRICS_ADDR; docs/observability.md) and off without it.
	otel, err := otelsetup.Setup(ctx, otelsetup.Options{ServiceName: "framewire-ui-agent"})
	if err != nil {
		return fmt.Errorf("setting up OpenTelemetry: %w", err)
	}
	defer func() { _ = otel.Shutdown(context.WithoutCancel(ctx)) }()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
	if err != nil {
		return fmt.Errorf("setting up telemetry: %w", err)
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }() // before otel's: the sessions' spans are flushed
	var ins *inspector.Inspector
	if cfg.Inspector {
		if ins, err = inspector.New(ctx, inspector.Options{AllowHosts: cfg.allowlist().Hosts}); err != nil {
			return fmt.Errorf("starting the inspector: %w", err)
		}
		defer func() { _ = ins.Close(context.WithoutCancel(ctx)) }()
	}
	b := &bot{brain: cfg.Brain, voice: cfg.Voice, log: log, researchStep: cfg.ResearchStep, trace: cfg.Trace, tel: tel, ins: ins,
		watchdog: cfg.Watchdog}
	rtc, err := webrtc.NewServer(webrtc.Options{
		NewPipeline: b.newPipeline,
		// The transport's counters (late frames, underruns, signalling
		// responses, refusals) go to the same metrics; nil when off.
		MeterProvider: otel.MeterProvider(),
		Logger:        log.Named("webrtc"),
		// The browser runs on this machine: offer loopback candidates too,
		// so the demo connects even where mDNS or the LAN address does not.
		IncludeLoopback: true,
		MaxSessions:     32,
	})
	if err != nil {
		return fmt.Errorf("starting the WebRTC server: %w", err)
	}
	// The same bot over Pipecat's WebSocket transport, for the page opened
	// with ?transport=websocket: POST /ws/connect, then the socket at /ws/ws.
	ws, err := websocket.NewServer(websocket.Options{
		NewPipeline:   b.newWebSocketPipeline,
		MeterProvider: otel.MeterProvider(),
		Logger:        log.Named("websocket"),
		// The Host check is the demo's (handler); the server checks again.
		AllowHosts:  cfg.allowlist().Hosts,
		MaxSessions: 32,
	})
	if err != nil {
		_ = rtc.Close()
		return fmt.Errorf("starting the WebSocket server: %w", err)
	}
	h := handler(cfg, rtc, ws, ins)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		_ = rtc.Close()
		_ = ws.Close()
		return fmt.Errorf("listening on %s: %w (another demo running? pass -addr or UI_AGENT_ADDR)", cfg.Addr, err)
	}

	url := "http://" + ln.Addr().String() + "/"
	if _, ok := pageFS(); !ok {
		log.Warn("the page bundle was not built into this binary: run examples/ui-agent/build.sh, then start the server again")
	}
	pub := cfg.public()
	switch cfg.Brain.Kind {
	case "demo":
		log.Info("brain: OFFLINE DEMO BRAIN (deterministic rules, no LLM)", zap.String("why", pub.Brain.Detail))
	default:
		log.Info("brain: "+pub.Brain.Label, zap.String("detail", pub.Brain.Detail))
	}
	log.Info("voice", zap.Bool("stt", cfg.Voice.STT), zap.Bool("tts", cfg.Voice.TTS), zap.String("note", pub.Voice.Note))
	log.Info("framewire UI agent demo is running: open " + url)
	if ins != nil {
		log.Info("session inspector: " + url + "inspector/ (loopback only)")
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}
	// The metrics endpoint (FRAMEWIRE_METRICS_ADDR) lives as long as the
	// server.
	return otel.ServeMetricsWhile(ctx, func(ctx context.Context) error {
		// Serve ends the WebSocket sessions with the WebRTC ones.
		return webrtc.Serve(ctx, ln, rtc, webrtc.ServeOptions{Handler: h, Also: []webrtc.Stopper{ws}})
	}, func(err error) { log.Warn("the metrics endpoint failed", zap.Error(err)) })
}

// handler routes the page, its config, the WebRTC signalling, the
// WebSocket transport under /ws/ (when ws is not nil) and, when on, the
// inspector, for the hosts of cfg.allowlist only.
func handler(cfg config, rtc *webrtc.Server, ws *websocket.Server, ins *inspector.Inspector) http.Handler {
	pub := cfg.public()
	mux := http.NewServeMux()
	if ins != nil {
		mux.Handle("/inspector/", http.StripPrefix("/inspector", ins))
	}
	mux.Handle("/api/offer", rtc)
	mux.Handle("/start", rtc)
	mux.Handle("/sessions/", rtc)
	if ws != nil {
		// /ws/connect answers {"wsUrl": "ws://<host>/ws/ws?session=..."}.
		mux.Handle("/ws/", http.StripPrefix("/ws", ws))
	}
	mux.HandleFunc("GET /api/config", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		var inspectorPath string // where the page links to the inspector; "" when off
		if ins != nil {
			inspectorPath = "/inspector/"
		}
		_ = json.NewEncoder(w).Encode(struct {
			Brain     brain  `json:"brain"`
			Voice     voice  `json:"voice"`
			Inspector string `json:"inspector,omitempty"`
		}{pub.Brain, pub.Voice, inspectorPath})
	})
	mux.Handle("/", pageHandler())
	return cfg.allowlist().Handler(mux)
}
