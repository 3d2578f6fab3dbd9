package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	pion "github.com/pion/webrtc/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/cluster"
	"github.com/framewire/framewire/examples/internal/conformancebot"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/otelsetup"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/websocket"
)

const usage = `usage: cluster <command> [flags]

commands:
  frontdoor  serve the signalling routes and route them to the workers over NATS
  worker     run sessions (the conformance bot) for the front doors, over WebRTC and, with -ws-addr, WebSocket
  local      an embedded NATS server, a front door and N workers as child processes

Run "cluster <command> -h" for the flags of a command.
`

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// realMain runs one command and returns the process's exit code.
func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	// main owns the signals: the first SIGINT or SIGTERM ends ctx, which
	// drains the command gracefully; a second one kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	var err error
	switch args[0] {
	case "frontdoor":
		err = frontdoorCommand(ctx, args[1:], stdout, stderr)
	case "worker":
		err = workerCommand(ctx, args[1:], stdout, stderr)
	case "local":
		err = localCommand(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "cluster: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "cluster %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// errUsage is a flag error, already printed.
var errUsage = errors.New("usage")

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	return nil
}

func newLogger(stderr io.Writer, verbose bool, name string) *zap.Logger {
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	enc := zap.NewDevelopmentEncoderConfig()
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(stderr), level)
	return zap.New(core).Named(name)
}

// defaultOrigins are the CORS origins a worker allows by default, as the
// conformance bot: test pages served on this machine, on any port. (The
// front door forwards preflights to the workers, which answer them.)
const defaultOrigins = "http://127.0.0.1:*,http://localhost:*,http://[::1]:*,https://127.0.0.1:*,https://localhost:*,https://[::1]:*"

// Environment variables of the NATS credentials: a password is never a
// flag, which any user of the machine could read in the process list.
const (
	envNATSUser     = "NATS_USER"
	envNATSPassword = "NATS_PASSWORD"
)

// natsConfig is where a command's NATS is and how it authenticates: the
// -nats* flags of every command.
type natsConfig struct {
	url, creds, nkey, user, ca, cert, key *string
}

func natsFlags(fs *flag.FlagSet) natsConfig {
	return natsConfig{
		url:   fs.String("nats", nats.DefaultURL, "NATS server URL(s), comma-separated (tls://host:4222 for TLS)"),
		creds: fs.String("nats-creds", "", "NATS credentials file (a user JWT and its nkey seed, from nsc)"),
		nkey:  fs.String("nats-nkey", "", "file holding the nkey seed (SU...) the NATS server knows this user by"),
		user: fs.String("nats-user", os.Getenv(envNATSUser),
			"NATS user name, with the password in $"+envNATSPassword+" (default $"+envNATSUser+")"),
		ca:   fs.String("nats-ca", "", "PEM file of the CA that signed the NATS server's TLS certificate"),
		cert: fs.String("nats-cert", "", "PEM client certificate for NATS servers that verify clients (with -nats-key)"),
		key:  fs.String("nats-key", "", "PEM private key of -nats-cert"),
	}
}

// options returns the nats.Options of c's credentials and TLS.
func (c natsConfig) options() ([]nats.Option, error) {
	var opts []nats.Option
	n := 0
	if *c.creds != "" {
		opts = append(opts, nats.UserCredentials(*c.creds))
		n++
	}
	if *c.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(*c.nkey)
		if err != nil {
			return nil, fmt.Errorf("-nats-nkey: %w", err)
		}
		opts = append(opts, o)
		n++
	}
	if *c.user != "" {
		opts = append(opts, nats.UserInfo(*c.user, os.Getenv(envNATSPassword)))
		n++
	}
	if n > 1 {
		return nil, errors.New("-nats-creds, -nats-nkey and -nats-user are alternatives: set one")
	}
	if *c.ca != "" {
		opts = append(opts, nats.RootCAs(*c.ca))
	}
	if (*c.cert == "") != (*c.key == "") {
		return nil, errors.New("-nats-cert and -nats-key go together")
	}
	if *c.cert != "" {
		opts = append(opts, nats.ClientCert(*c.cert, *c.key))
	}
	return opts, nil
}

// connect connects to c's NATS, reconnecting for as long as the process
// runs (a NATS restart must not take the cluster down).
func (c natsConfig) connect(name string, log *zap.Logger) (*nats.Conn, error) {
	auth, err := c.options()
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(*c.url, append(auth,
		nats.Name(name),
		nats.Timeout(5*time.Second),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS disconnected", zap.Error(err)) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("NATS reconnected", zap.String("url", c.ConnectedUrlRedacted())) }),
	)...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", redactURLs(*c.url), err)
	}
	return nc, nil
}

// redactURLs returns a comma-separated list of URLs without the
// passwords some of them may hold (nats://user:password@host).
func redactURLs(list string) string {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if u, err := url.Parse(item); err == nil && u.User != nil {
			u.User = url.User(u.User.Username())
			item = u.String()
		} else if err != nil {
			item = "(a URL that does not parse)"
		}
		out = append(out, item)
	}
	return strings.Join(out, ",")
}

// setupOTel configures OpenTelemetry from the environment (OTEL_*:
// traces and metrics over OTLP when an endpoint is set;
// docs/observability.md) with Prometheus metrics on metricsAddr when it is
// not empty. instance is the resource's service.instance.id (the worker
// id), when not empty.
func setupOTel(ctx context.Context, service, instance, metricsAddr string) (*otelsetup.Providers, error) {
	opts := otelsetup.Options{ServiceName: service, MetricsAddr: metricsAddr}
	if instance != "" {
		opts.Attributes = []attribute.KeyValue{attribute.String("service.instance.id", instance)}
	}
	otel, err := otelsetup.Setup(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("setting up OpenTelemetry: %w", err)
	}
	return otel, nil
}

// serveMetrics serves otel's Prometheus endpoint at /metrics on its own
// listener at addr until ctx ends, on a goroutine wg waits for. It listens
// before it returns, so that a taken port fails the command at start, and
// prints "<who> metrics on http://ADDR/metrics" on stdout (with port 0,
// how a caller learns the port). With no address it does nothing.
func serveMetrics(ctx context.Context, wg *sync.WaitGroup, otel *otelsetup.Providers, addr, who string, stdout io.Writer, log *zap.Logger) error {
	h := otel.MetricsHandler()
	if addr == "" || h == nil {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening for metrics on %s: %w", addr, err)
	}
	fmt.Fprintf(stdout, "%s metrics on http://%s/metrics\n", who, ln.Addr())
	wg.Go(func() {
		if err := otelsetup.ServeMetricsOn(ctx, ln, h); err != nil {
			log.Warn("the metrics endpoint failed", zap.Error(err))
		}
	})
	return nil
}

// metricsAddrFlag is the -metrics-addr flag of every command.
func metricsAddrFlag(fs *flag.FlagSet) *string {
	return fs.String("metrics-addr", os.Getenv(otelsetup.EnvMetricsAddr),
		"address of a separate HTTP listener serving Prometheus metrics at /metrics (default $"+otelsetup.EnvMetricsAddr+"; empty: none)")
}

// frontdoorCommand serves the signalling routes on -addr, with /healthz
// and /cluster, until ctx ends.
func frontdoorCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("frontdoor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf := natsFlags(fs)
	addr := fs.String("addr", "127.0.0.1:7861", "HTTP listen address of the signalling routes and /healthz (the browsers')")
	statusAddr := fs.String("status-addr", "127.0.0.1:7862", "HTTP listen address of the operators' /cluster and /healthz (empty: none)")
	metricsAddr := metricsAddrFlag(fs)
	verbose := fs.Bool("v", false, "debug logs")
	origins := fs.String("allow-origin", defaultOrigins, `comma-separated origins whose pages may read the front door's own answers (404s, 503s); set it as the workers' -allow-origin`)
	hosts := fs.String("allow-host", "", `comma-separated Host names the browsers reach the front door by ("*.example.com" for the names under it); localhost names, IP literals and the -addr host are always served`)
	if err := parse(fs, args); err != nil {
		return err
	}
	log := newLogger(stderr, *verbose, "frontdoor")
	defer func() { _ = log.Sync() }()
	otel, err := setupOTel(ctx, "framewire-cluster-frontdoor", "", *metricsAddr)
	if err != nil {
		return err
	}
	defer func() { _ = otel.Shutdown(context.WithoutCancel(ctx)) }()
	// The metrics endpoint lives until the command returns, past the
	// shutdown of the signalling server.
	var wg sync.WaitGroup
	defer wg.Wait()
	mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMetrics()
	if err := serveMetrics(mctx, &wg, otel, *metricsAddr, "frontdoor", stdout, log); err != nil {
		return err
	}
	nc, err := nf.connect("framewire-frontdoor", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	allowHosts := splitList(*hosts)
	if h, _, err := net.SplitHostPort(*addr); err == nil && h != "" {
		allowHosts = append(allowHosts, h)
	}
	fd, err := cluster.NewFrontDoor(nc, cluster.FrontDoorOptions{Logger: log, AllowOrigins: splitList(*origins),
		AllowHosts: allowHosts, MeterProvider: otel.MeterProvider()})
	if err != nil {
		return err
	}
	defer func() { _ = fd.Close() }()

	// The browsers' port has the signalling and /healthz (for a load
	// balancer); the cluster's state is the operators', on a listener of
	// their own.
	status := fd.StatusHandler()
	mux := http.NewServeMux()
	mux.Handle("/", fd)
	mux.Handle("GET /healthz", status)
	if *statusAddr != "" {
		sln, err := net.Listen("tcp", *statusAddr)
		if err != nil {
			return fmt.Errorf("listening for the status on %s: %w", *statusAddr, err)
		}
		ss := &http.Server{Handler: status, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
			WriteTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second, ErrorLog: zap.NewStdLog(log.Named("http"))}
		fmt.Fprintf(stdout, "status on http://%s\n", sln.Addr())
		wg.Go(func() { _ = ss.Serve(sln) })
		defer func() { _ = ss.Close() }()
	}
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      40 * time.Second, // past the front door's 30s RequestTimeout
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *addr, err)
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "websocket connect endpoint: POST http://%s/connect (to the workers run with -ws-addr)\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// The front door holds no session: what is left are requests in
	// flight, which the write timeout bounds.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-served
	return nil
}

// workerCommand runs a worker until ctx ends, then drains it.
func workerCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf := natsFlags(fs)
	id := fs.String("id", "", "worker id (letters, digits, '_', '-'; default: random)")
	capacity := fs.Int("capacity", 100, "WebRTC sessions the worker takes at most")
	addr := fs.String("addr", "", "optional HTTP address serving the worker's signalling directly and /healthz (default: none; the front doors reach it over NATS)")
	wsAddr := fs.String("ws-addr", "", "HTTP listen address of the worker's WebSocket transport: the browsers' sockets (GET /ws) come here straight, after a /connect through a front door (default: none, WebRTC only)")
	wsPublicURL := fs.String("ws-public-url", "", "the socket's URL as browsers reach this worker, which /connect answers (wss://w1.voice.example.com/ws behind TLS or a load balancer; default ws://<the -ws-addr listener's address>/ws)")
	wsCapacity := fs.Int("ws-capacity", 100, "WebSocket sessions the worker takes at most (with -ws-addr)")
	metricsAddr := metricsAddrFlag(fs)
	portMin := fs.Uint("port-min", 0, "lowest UDP port for media (0: any)")
	portMax := fs.Uint("port-max", 0, "highest UDP port for media (0: any)")
	publicIPs := fs.String("public-ip", "", "comma-separated addresses to announce as host candidates (1:1 NAT, containers)")
	grace := fs.Duration("grace", 10*time.Second, "on SIGTERM, how long sessions may take to end before they are cancelled")
	pingTimeout := fs.Duration("ping-timeout", 3*time.Second, "end a session whose client sent no ping for that long (negative: never); raise it where browsers may be starved of CPU")
	restartGrace := fs.Duration("restart-grace", 0, "keep a session whose client stopped pinging that much longer, for the client to replace its peer connection (browsers do 5 s into an ICE outage); 0: end it when the pings stop")
	verbose := fs.Bool("v", false, "debug logs")
	loopbackOnly := fs.Bool("loopback-only", false, "ICE on IPv4 loopback only (tests)")
	bot := fs.String("bot", "conformance", `the sessions' pipeline: "conformance" (the conformance bot) or "echo" (the user's audio sent back, for load tests: audio encoded both ways)`)
	origins := fs.String("allow-origin", defaultOrigins, `comma-separated origins allowed to call the bot from a page served elsewhere ("*" for any, "http://host:*" for a host on any port, "" to disable CORS)`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *portMin > 65535 || *portMax > 65535 {
		return errors.New("-port-min and -port-max must be UDP ports")
	}
	if *pingTimeout == 0 {
		return errors.New("-ping-timeout must not be 0 (negative: never)")
	}
	if *restartGrace < 0 {
		return errors.New("-restart-grace must not be negative")
	}
	newBot, ok := bots[*bot]
	if !ok {
		return fmt.Errorf("-bot %q: want conformance or echo", *bot)
	}
	if *wsAddr == "" && *wsPublicURL != "" {
		return errors.New("-ws-public-url needs -ws-addr, where the sockets are served")
	}
	if *wsCapacity < 1 {
		return errors.New("-ws-capacity must be at least 1")
	}
	log := newLogger(stderr, *verbose, "worker")
	defer func() { _ = log.Sync() }()
	if *id == "" {
		*id = uuid.NewString()
	}
	// The cluster's logs name the worker themselves; the sessions' need it
	// added.
	slog := log.With(zap.String("worker", *id))
	otel, err := setupOTel(ctx, "framewire-cluster-worker", *id, *metricsAddr)
	if err != nil {
		return err
	}
	defer func() { _ = otel.Shutdown(context.WithoutCancel(ctx)) }()
	tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
	if err != nil {
		return fmt.Errorf("setting up telemetry: %w", err)
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }() // before otel's: the sessions' spans are flushed

	var settings func(*pion.SettingEngine)
	if *loopbackOnly {
		settings = func(se *pion.SettingEngine) {
			se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
			se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
		}
	}
	// The Server's MaxSessions is the worker's capacity.
	server := webrtc.Options{
		Logger: slog.Named("webrtc"),
		// The conformance bot's settings (examples/conformance): pages on
		// this machine, loopback candidates for a browser on the same host.
		AllowOrigins:    splitList(*origins),
		IncludeLoopback: true,
		Settings:        settings,
		PortMin:         uint16(*portMin),
		PortMax:         uint16(*portMax),
		PublicIPs:       splitList(*publicIPs),
		MaxSessions:     *capacity,
		ShutdownGrace:   *grace,
		PingTimeout:     *pingTimeout,
		RestartGrace:    *restartGrace,
		// The transport's counters (late frames, underruns, signalling
		// responses, refusals); nil, which ignores them, when metrics are
		// off.
		MeterProvider: otel.MeterProvider(),
		NewPipeline: func(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			sl := slog.With(zap.String("session", s.ID()))
			sl.Info("session started", zap.String("pc_id", s.PCID()), zap.String("start_id", s.StartID()))
			task := newBot(s.Input(), s.Output(), sl, false)
			// The session's spans and metrics; nothing when telemetry is off.
			tel.StartSession(ctx, telemetry.SessionOptions{ID: s.ID()}).Attach(task)
			return task, nil
		},
	}
	var ws *cluster.WebSocketOptions
	if *wsAddr != "" {
		// The sockets' listener is the worker's own: media goes straight
		// to it. The worker serves and closes it (Run).
		ln, err := net.Listen("tcp", *wsAddr)
		if err != nil {
			return fmt.Errorf("listening for WebSocket sessions on %s: %w", *wsAddr, err)
		}
		public := *wsPublicURL
		if public == "" {
			public = "ws://" + ln.Addr().String() + "/ws"
		}
		ws = &cluster.WebSocketOptions{Listener: ln, Server: websocket.Options{
			Logger:        slog.Named("websocket"),
			AllowOrigins:  splitList(*origins),
			PublicURL:     public,
			MaxSessions:   *wsCapacity,
			ShutdownGrace: *grace,
			MeterProvider: otel.MeterProvider(),
			NewPipeline: func(ctx context.Context, s *websocket.Session) (*pipeline.Task, error) {
				sl := slog.With(zap.String("session", s.ID()), zap.String("transport", "websocket"))
				sl.Info("session started")
				task := newBot(s.Input(), s.Output(), sl, true)
				tel.StartSession(ctx, telemetry.SessionOptions{ID: s.ID()}).Attach(task)
				return task, nil
			},
		}}
		fmt.Fprintf(stdout, "worker %s websocket on %s (listening on %s)\n", *id, public, ln.Addr())
	}
	closeWS := func() {
		if ws != nil {
			_ = ws.Listener.Close()
		}
	}
	nc, err := nf.connect("framewire-worker", log)
	if err != nil {
		closeWS()
		return err
	}
	defer nc.Close()
	w, err := cluster.NewWorker(nc, server, cluster.WorkerOptions{ID: *id, Logger: log,
		DrainTimeout: *grace + 10*time.Second, WebSocket: ws})
	if err != nil {
		closeWS()
		return err
	}
	srv := w.Server()
	// Until Run serves it, the sockets' listener is this function's.
	closeEarly := func() {
		_ = srv.Close()
		if wss := w.WebSocketServer(); wss != nil {
			_ = wss.Close()
		}
		closeWS()
	}

	// The HTTP listeners live until the worker has drained: a session's
	// counters are reported when it ends, so they are scraped after.
	var wg sync.WaitGroup
	defer wg.Wait()
	mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMetrics()
	if err := serveMetrics(mctx, &wg, otel, *metricsAddr, "worker "+*id, stdout, log); err != nil {
		closeEarly()
		return err
	}
	if *addr != "" {
		// Direct signalling, for debugging a worker without a front door.
		mux := http.NewServeMux()
		mux.Handle("/", srv)
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
		hs := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
			WriteTimeout: 40 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			closeEarly()
			return fmt.Errorf("listening on %s: %w", *addr, err)
		}
		fmt.Fprintf(stdout, "worker %s signalling on http://%s\n", *id, ln.Addr())
		wg.Go(func() { _ = hs.Serve(ln) })
		defer func() { _ = hs.Close() }()
	}
	return w.Run(ctx)
}

// bots are the worker's pipelines, by -bot, between a session's input and
// output; ws says the session is over WebSocket.
var bots = map[string]func(in, out pipeline.Processor, log *zap.Logger, ws bool) *pipeline.Task{
	"conformance": func(in, out pipeline.Processor, log *zap.Logger, ws bool) *pipeline.Task {
		// Over WebSocket the bot plays its tone, as examples/conformance
		// does (conformance-bot.md §14).
		return conformancebot.New(in, out, log, conformancebot.Options{Tone: ws})
	},
	"echo": func(in, out pipeline.Processor, log *zap.Logger, _ bool) *pipeline.Task {
		// Output at the input's 16 kHz: the echo passes audio through
		// unchanged.
		return pipeline.NewTask(pipeline.New(in, &echo{}, out), pipeline.TaskOptions{
			Logger: log.Named("pipeline"), AudioOutSampleRate: 16000,
		})
	},
}

// echo sends the user's audio back as the bot's: each input frame is
// passed on and pushed again as output audio (sharing the PCM, which is
// immutable), its frame taken from a block as an audio source should.
type echo struct {
	block frames.Block[frames.OutputAudioRaw]
}

// ProcessFrame implements pipeline.Processor.
func (e *echo) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if in, ok := f.(*frames.InputAudioRaw); ok {
		out := e.block.New()
		out.Audio = in.Audio
		h.Push(out, frames.Downstream)
	}
	return nil
}

// localCommand runs an embedded NATS server, one front door and n
// workers, each a child process of this binary, until ctx ends; then it
// sends every child SIGTERM and waits for it.
func localCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:7861", "the front door's HTTP listen address")
	statusAddr := fs.String("status-addr", "127.0.0.1:7862", "the front door's -status-addr (/cluster and /healthz)")
	workers := fs.Int("workers", 3, "number of workers")
	capacity := fs.Int("capacity", 100, "sessions per worker")
	natsPort := fs.Int("nats-port", -1, "the embedded NATS server's port on 127.0.0.1 (-1: any free port)")
	metricsAddr := fs.String("metrics-addr", os.Getenv(otelsetup.EnvMetricsAddr),
		"the front door's metrics address HOST:PORT; worker i serves its metrics on PORT+i (default $"+otelsetup.EnvMetricsAddr+"; empty: no metrics; port 0: any free ports, printed)")
	bot := fs.String("bot", "conformance", `the workers' pipeline: "conformance" or "echo" (see worker -h)`)
	workerAddr := fs.String("worker-addr", "", "the first worker's direct signalling address HOST:PORT; worker i listens on PORT+i-1 (default: none; port 0: any free ports, printed)")
	wsAddr := fs.String("ws-addr", "", "the first worker's WebSocket listen address HOST:PORT (see worker -ws-addr); worker i listens on PORT+i-1 (default: none, WebRTC only; port 0: any free ports, printed)")
	verbose := fs.Bool("v", false, "debug logs")
	loopbackOnly := fs.Bool("loopback-only", false, "the workers' ICE on IPv4 loopback only (tests)")
	pingTimeout := fs.Duration("ping-timeout", 3*time.Second, "the workers' -ping-timeout")
	restartGrace := fs.Duration("restart-grace", 0, "the workers' -restart-grace")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *workers < 1 || *workers > 64 {
		return errors.New("-workers must be 1 to 64")
	}
	// Each child gets its own port: one address a child would take from
	// the environment would be taken by the first of them only.
	metricsAt, err := portSeries(*metricsAddr, *workers+1)
	if err != nil {
		return fmt.Errorf("-metrics-addr: %w", err)
	}
	workerAt, err := portSeries(*workerAddr, *workers)
	if err != nil {
		return fmt.Errorf("-worker-addr: %w", err)
	}
	wsAt, err := portSeries(*wsAddr, *workers)
	if err != nil {
		return fmt.Errorf("-ws-addr: %w", err)
	}
	log := newLogger(stderr, *verbose, "local")
	defer func() { _ = log.Sync() }()

	// The embedded server takes only this run's children: a user and a
	// random password, which they get in their environment.
	password, err := randomPassword()
	if err != nil {
		return err
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: *natsPort, NoSigs: true, NoLog: true,
		Username: localNATSUser, Password: password})
	if err != nil {
		return fmt.Errorf("embedded NATS server: %w", err)
	}
	ns.Start()
	defer func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	}()
	if !ns.ReadyForConnections(10 * time.Second) {
		return errors.New("the embedded NATS server did not start")
	}
	url := ns.ClientURL()
	log.Info("NATS server running", zap.String("url", url), zap.String("user", localNATSUser))
	fmt.Fprintf(stdout, "nats on %s\n", url)

	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	common := []string{"-nats", url}
	if *verbose {
		common = append(common, "-v")
	}
	type child struct {
		name string
		cmd  *exec.Cmd
	}
	var children []child
	// The children get their addresses by flag, never from the
	// environment.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, k := range []string{otelsetup.EnvMetricsAddr, envNATSUser, envNATSPassword} {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	})
	env = append(env, envNATSUser+"="+localNATSUser, envNATSPassword+"="+password)
	startChild := func(name string, args ...string) error {
		cmd := exec.Command(self, args...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		children = append(children, child{name, cmd})
		return nil
	}
	// Every child is waited for once, here; exited reports each exit.
	exited := make(chan child, 1+*workers)
	var wg sync.WaitGroup
	defer func() {
		for _, c := range children {
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			log.Warn("children still running after 40s: killing them")
			for _, c := range children {
				_ = c.cmd.Process.Kill()
			}
			<-done
		}
	}()
	for i := range *workers {
		id := "w" + strconv.Itoa(i+1)
		args := append([]string{"worker", "-id", id, "-capacity", strconv.Itoa(*capacity)}, common...)
		if *loopbackOnly {
			args = append(args, "-loopback-only")
		}
		args = append(args, "-metrics-addr", metricsAt(i+1), "-addr", workerAt(i), "-bot", *bot,
			"-ping-timeout", pingTimeout.String(), "-restart-grace", restartGrace.String())
		if *wsAddr != "" {
			args = append(args, "-ws-addr", wsAt(i), "-ws-capacity", strconv.Itoa(*capacity))
		}
		if err := startChild("worker "+id, args...); err != nil {
			return err
		}
	}
	if err := startChild("frontdoor", append([]string{"frontdoor", "-addr", *addr, "-status-addr", *statusAddr,
		"-metrics-addr", metricsAt(0)}, common...)...); err != nil {
		return err
	}
	for _, c := range children {
		wg.Go(func() {
			_ = c.cmd.Wait()
			exited <- c
		})
	}
	for {
		select {
		case <-ctx.Done():
			log.Info("stopping the front door and the workers")
			return nil
		case c := <-exited:
			if c.name == "frontdoor" {
				return fmt.Errorf("the front door exited: %v", c.cmd.ProcessState)
			}
			// A worker that dies loses its own sessions only; the
			// cluster goes on with the others.
			log.Warn("a worker exited", zap.String("worker", c.name), zap.Stringer("state", c.cmd.ProcessState))
		}
	}
}

// localNATSUser is the user of the local command's embedded NATS server.
const localNATSUser = "framewire-local"

// randomPassword returns 128 random bits, hex-encoded.
func randomPassword() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("a NATS password: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// portSeries returns the addresses of n processes numbered from 0 for a
// base address HOST:PORT: HOST:PORT+i for process i, or HOST:0 for every
// one when PORT is 0 (each process prints the port it got). An empty base
// gives "" for every process.
func portSeries(base string, n int) (func(i int) string, error) {
	if base == "" {
		return func(int) string { return "" }, nil
	}
	host, p, err := net.SplitHostPort(base)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("bad port %q", p)
	}
	if port > 0 && port+n-1 > 65535 {
		return nil, fmt.Errorf("ports %d to %d: past 65535", port, port+n-1)
	}
	return func(i int) string {
		if port == 0 {
			return net.JoinHostPort(host, "0")
		}
		return net.JoinHostPort(host, strconv.Itoa(port+i))
	}, nil
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
