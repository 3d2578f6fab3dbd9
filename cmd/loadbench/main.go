// Command loadbench measures the WebRTC transport (or, with -transport
// websocket, the WebSocket transport) under load. For each N it
// connects N simulated browser clients (transports/webrtc/webrtctest), each
// streaming 20 ms Opus frames up and receiving the bot's audio, to a
// server whose pipeline echoes the user's audio back (Input -> echo ->
// Output), so every session decodes, re-encodes and paces audio both ways.
// The echo takes its output frames from a frames.Block, as an audio source
// should (docs/decisions/frames-block.md); -alloc-per-frame measures an echo
// that allocates each one.
// It prints one JSON line per N: CPU per session, heap per session, output
// underruns, the Go scheduler's latency tail, and the frame rates seen on
// both sides; then the largest N that held without underruns, along with
// every smaller N.
//
//	go run -tags "opus nolibopusfile" ./cmd/loadbench -n 25,50,100
//
// make bench measures 30 s per N: at 100 sessions a garbage collection
// comes every 10-15 s and its mark phase is when players fall behind, so
// a shorter window can miss the moments that decide the result.
//
// To see what the process did when players fell behind, -flight FILE keeps
// a flight recorder (runtime/trace) running in each window and writes its
// last 1.5 s to FILE.nN at the window's first burst of late frames; read
// it with go tool trace. Its polling adds a little load.
//
// On a shared VM, host_steal_pct_of_cpu is the CPU the hypervisor gave to
// other guests during the window: with more than a few percent, late
// frames are the neighbours' as much as the server's.
//
// The clients run in the server's process, as the load target is stated,
// so CPU and heap figures include them. With -separate they run in a
// second process and the figures are the server's alone (the client
// process's CPU is reported next to them). With -idle the clients send
// nothing and the pipeline has no echo: the figures are those of idle
// sessions (silence out, keepalives in).
//
// With -voice each session also runs what a voice bot's session holds
// ahead of the echo: the RTVI processor and an LLM service (whose model
// never answers), each with a logger that writes (to io.Discard) at the
// info level, as a deployed server's do. -max-heap-kb-per-session makes a
// run whose heap per session is over the bound exit with status 1: make
// bench runs 100 streaming voice sessions with the clients apart and a
// bound of 1 MiB. (A sampled logger per session once took 0.9 MiB of heap
// there: zap's sampler keeps 448 KiB of counters; see internal/logsample.)
//
// With -transport websocket the sessions are transports/websocket's and
// the clients transports/websocket/websockettest's: each streams a 16 kHz
// tone up as the browser's WebSocket client does (512-byte PCM frames
// every 16 ms), and the output plays the echo back as 20 ms frames of the
// browser player's 24 kHz PCM. Its JSON lines ("transport":"websocket",
// websocket.go) have the server's figures under the WebRTC lines' names,
// and what the clients saw in the window beside them: the audio frames
// received against the 50 a second expected, and the inbound gaps (100 ms
// or more without a frame). -separate, -idle, -voice, -vad, -metrics,
// -alloc-per-frame, -max-heap-kb-per-session, -cpuprofile, -memprofile,
// -trace and -flight apply to it; the Opus flags and -url do not:
//
//	go run ./cmd/loadbench -transport websocket -n 200 -duration 60s -separate
//
// With -url it starts no server: the clients connect to the signalling URL
// of one already running (a framewire server, a cluster's front door or
// one of its workers), and what only the servers know, output underruns
// and late frames, is read from their Prometheus endpoints (-scrape, the
// workers' /metrics; FRAMEWIRE_METRICS_ADDR turns them on) before the
// clients connect and after the servers have counted the sessions ended,
// since they add a session's counters at its end. Each N's JSON line
// ("kind":"external") has, besides those deltas in all and per server,
// what the clients measure: how many connected and how long it took, the
// signalling latency (p50, p99, max of POST /api/offer and of the
// trickling PATCHes, request to response headers), the packets they got
// and the inbound gaps (stretches of 100 ms or more without a packet from
// the server). The servers' deltas cover the sessions' whole lives, their
// connecting included, the clients' figures the window only. Run it once
// against a worker's own signalling and once against the front door to
// see what the front door adds (-dial-parallel 1 and -idle time each offer
// alone, without queueing behind the others or the audio's CPU):
//
//	go run -tags "opus nolibopusfile" ./cmd/loadbench -url http://127.0.0.1:7861 \
//		-scrape http://127.0.0.1:9465/metrics,http://127.0.0.1:9466/metrics,http://127.0.0.1:9467/metrics -n 100 -duration 20s
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
	"github.com/framewire/framewire/processors/audio/silero"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/telemetry"
	"github.com/framewire/framewire/telemetry/otelsetup"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

func main() {
	transport := flag.String("transport", "webrtc", "the sessions' transport: webrtc (pion clients, Opus both ways) or websocket (Pipecat's WebSocket client's protobuf frames, 16 kHz PCM up, 24 kHz down)")
	ns := flag.String("n", "25,50,100", "comma-separated session counts")
	duration := flag.Duration("duration", 10*time.Second, "measurement window per N")
	warmup := flag.Duration("warmup", 3*time.Second, "settling time before measuring")
	idle := flag.Bool("idle", false, "idle sessions: no audio up, no echo")
	clientMode := flag.Bool("client", false, "internal: run as the client process")
	url := flag.String("url", "", "run only the clients, against this server's signalling: its base URL (/api/offer is added) or its offer URL")
	scrape := flag.String("scrape", "", "with -url: comma-separated Prometheus endpoints (the servers' /metrics) to read output underruns and late frames from")
	parallel := flag.Int("dial-parallel", 8, "with -url: how many clients connect at a time (1: each offer alone, the signalling latency without queueing)")
	settle := flag.Duration("settle", 30*time.Second, "with -url and -scrape: how long to wait after the clients close for the servers to count every session ended")
	cpuProfile := flag.String("cpuprofile", "", "write the server's CPU profile here (and with -transport websocket -separate, the clients' to it plus .clients)")
	separate := flag.Bool("separate", false, "run the clients in a second process (the server's CPU is then measured apart)")
	memProfile := flag.String("memprofile", "", "write a heap profile at the end of each window here")
	traceFile := flag.String("trace", "", "write an execution trace of the first second of each window here")
	complexity := flag.Int("opus-complexity", 5, "the output's Opus complexity, 1 to 10 (webrtc.OutputOptions.OpusComplexity, whose default is 5)")
	fixed := flag.Bool("fixed-complexity", false, "keep the Opus complexity under load (webrtc.OutputOptions.FixedOpusComplexity)")
	perFrame := flag.Bool("alloc-per-frame", false, "the echo allocates each output frame instead of taking it from a frames.Block")
	vad := flag.String("vad", "none", "a voice activity detector before the echo on every session: none, energy or silero (the model of make silero-model)")
	metrics := flag.Bool("metrics", false, "telemetry on: every session attached to a Prometheus exporter (what FRAMEWIRE_METRICS_ADDR turns on), services' metrics frames on")
	flight := flag.String("flight", "", "keep a flight recorder running in each window and write its last 1.5 s to this file plus .nN at the window's first burst of late frames")
	voice := flag.Bool("voice", false, "each session also runs the RTVI processor and an LLM service ahead of the echo, with info-level loggers, as a voice bot's does")
	maxHeap := flag.Float64("max-heap-kb-per-session", 0, "exit with status 1 when a run's heap_kb_per_session is over this (0: no bound)")
	flag.Parse()
	if err := checkTransport(*transport, *url != "" && !*clientMode); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
	// The server's profile, or, in a WebSocket client process, the
	// clients' (the server passes its file name plus .clients).
	if *cpuProfile != "" && (!*clientMode || *transport == "websocket") {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *url != "" && !*clientMode {
		if err := external(*url, *scrape, *ns, *parallel, *duration, *warmup, *settle, *idle, *separate || *metrics || *voice || *maxHeap != 0 || *vad != "none" || *flight != "" || *traceFile != "" || *memProfile != ""); err != nil {
			pprof.StopCPUProfile()
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		return
	}
	if *clientMode {
		n, _ := strconv.Atoi(*ns)
		run := runClientProcess
		if *transport == "websocket" {
			run = runWSClientProcess
		}
		if err := run(context.Background(), n, *url, *idle); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench clients:", err)
			os.Exit(1)
		}
		return
	}
	cfg := config{
		ns: *ns, duration: *duration, warmup: *warmup,
		idle: *idle, separate: *separate, allocPerFrame: *perFrame,
		traceFile: *traceFile, memProfile: *memProfile, flightFile: *flight,
		output: webrtc.OutputOptions{OpusComplexity: *complexity, FixedOpusComplexity: *fixed},
		voice:  *voice, maxHeapKB: *maxHeap, cpuProfile: *cpuProfile,
	}
	switch *vad {
	case "none":
	case "energy":
		cfg.newVAD = func() (audio.VADAnalyzer, error) { return audio.NewVAD(audio.VADOptions{}) }
	case "silero":
		m, err := silero.LoadModel("")
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		cfg.newVAD = func() (audio.VADAnalyzer, error) { return silero.NewVAD(silero.Options{Model: m}) }
	default:
		fmt.Fprintln(os.Stderr, "loadbench: -vad must be none, energy or silero")
		os.Exit(2)
	}
	if *metrics {
		otel, err := otelsetup.Setup(context.Background(), otelsetup.Options{ServiceName: "loadbench", Prometheus: true, NoEnv: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		defer func() { _ = otel.Shutdown(context.Background()) }()
		tel, err := telemetry.New(telemetry.Options{TracerProvider: otel.TracerProvider(), MeterProvider: otel.MeterProvider()})
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		defer func() { _ = tel.Shutdown(context.Background()) }()
		cfg.tel = tel
	}
	run := runServer
	if *transport == "websocket" {
		run = func(ctx context.Context, cfg config) error {
			_, err := runWebSocket(ctx, cfg, os.Stdout)
			return err
		}
	}
	if err := run(context.Background(), cfg); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// checkTransport refuses a -transport other than webrtc and websocket,
// and with websocket the flags only WebRTC has: the Opus ones and the
// external mode (-url without -client).
func checkTransport(transport string, external bool) error {
	switch transport {
	case "webrtc":
		return nil
	case "websocket":
	default:
		return fmt.Errorf("-transport %q: want webrtc or websocket", transport)
	}
	var webrtcOnly []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "opus-complexity", "fixed-complexity", "dial-parallel", "scrape", "settle":
			webrtcOnly = append(webrtcOnly, "-"+f.Name)
		}
	})
	if external {
		webrtcOnly = append(webrtcOnly, "-url")
	}
	if len(webrtcOnly) > 0 {
		return fmt.Errorf("%s: for -transport webrtc only", strings.Join(webrtcOnly, ", "))
	}
	return nil
}

// external runs the external mode of -url; serverFlags reports whether a
// flag of the in-process server was given.
func external(rawURL, scrape, ns string, parallel int, duration, warmup, settle time.Duration, idle, serverFlags bool) error {
	if serverFlags {
		return errors.New("-separate, -metrics, -voice, -max-heap-kb-per-session, -vad, -flight, -trace and -memprofile are for the in-process server: with -url the server is not loadbench's")
	}
	offerURL, err := offerURLOf(rawURL)
	if err != nil {
		return err
	}
	counts, err := sessionCounts(ns)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second signal kills the process
	_, err = runExternal(ctx, externalConfig{offerURL: offerURL, scrape: splitURLs(scrape), counts: counts,
		duration: duration, warmup: warmup, settle: settle, idle: idle, parallel: parallel}, os.Stdout)
	return err
}

// echo turns the user's audio into bot audio: a pass-through processor
// that also pushes each input frame back as output (sharing the PCM, which
// is immutable). Like any source of audio frames at 20 ms, it takes them
// from a frames.Block unless -alloc-per-frame is set.
type echo struct {
	perFrame bool
	block    frames.Block[frames.OutputAudioRaw]
}

func (e *echo) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if in, ok := f.(*frames.InputAudioRaw); ok {
		out := e.newFrame()
		out.Audio = in.Audio
		h.Push(out, frames.Downstream)
	}
	return nil
}

func (e *echo) newFrame() *frames.OutputAudioRaw {
	if e.perFrame {
		return &frames.OutputAudioRaw{}
	}
	return e.block.New()
}

type result struct {
	Kind              string  `json:"kind"`
	Clients           string  `json:"clients"` // "in-process" (figures include them) or "separate-process"
	Codec             string  `json:"codec"`
	OpusComplexity    int     `json:"opus_complexity"`
	ComplexityAtEnd   float64 `json:"opus_complexity_mean_at_end"` // after the load governor
	Idle              bool    `json:"idle"`
	EchoAllocPerFrame bool    `json:"echo_alloc_per_frame"`
	N                 int     `json:"n"`
	Sessions          int     `json:"sessions"`
	WindowS           float64 `json:"window_s"`
	CPUPctPerSession  float64 `json:"cpu_pct_of_core_per_session"`
	CPUUsPerFrame     float64 `json:"cpu_us_per_session_per_20ms"`
	CPUPctTotal       float64 `json:"cpu_pct_total"`
	ClientCPUPct      float64 `json:"client_process_cpu_pct"`
	LoadAvg           string  `json:"loadavg_before"`
	StealPct          float64 `json:"host_steal_pct_of_cpu"` // CPU the hypervisor gave to other guests during the window
	HeapKBPerSession  float64 `json:"heap_kb_per_session"`
	GoroutinesPerSess float64 `json:"goroutines_per_session"`
	Underruns         uint64  `json:"output_underruns"`
	Assisted          uint64  `json:"output_assisted_frames"` // frames sent by another goroutine than their output's player, which was 5 ms late
	MaxLateMS         float64 `json:"output_max_late_ms"`     // the latest any output's clock ran, warm-up included
	OutFPS            float64 `json:"output_frames_per_s_per_session"`
	InFPS             float64 `json:"input_frames_per_s_per_session"`
	ClientInPPS       float64 `json:"client_packets_in_per_s_per_session"`
	SchedP99US        float64 `json:"sched_latency_p99_us"`
	SchedP999US       float64 `json:"sched_latency_p999_us"`
	SchedMaxUS        float64 `json:"sched_latency_max_us"`
	GCPauseMaxUS      float64 `json:"gc_pause_max_us"`
	OK                bool    `json:"ok"`
}

// config is what the flags ask of runServer.
type config struct {
	ns                    string // comma-separated session counts
	duration, warmup      time.Duration
	idle, separate        bool
	allocPerFrame         bool // the echo allocates each output frame
	traceFile, memProfile string
	flightFile            string // flight-recorder output at the first burst of late frames
	output                webrtc.OutputOptions
	// newVAD makes each session's VAD analyzer; nil: no VAD processor.
	newVAD func() (audio.VADAnalyzer, error)
	// tel, when set, is attached to every session.
	tel *telemetry.Telemetry
	// voice adds the RTVI processor and an LLM service to each session.
	voice bool
	// maxHeapKB, when not 0, fails a run whose heap per session is over it.
	maxHeapKB float64
	// cpuProfile is -cpuprofile's file: a WebSocket client process
	// writes its own profile to it plus .clients.
	cpuProfile string
}

// newTask returns the task of session id over transport: input, what the flags add
// (-voice, -vad), the echo unless -idle, output. Its output takes audio at
// the input's 16 kHz: the echo passes audio through unchanged, and each
// transport's output converts it to its client's (libopus encodes from
// 16 kHz itself; the WebSocket output resamples to its player's 24 kHz).
func (cfg config) newTask(ctx context.Context, transport, id string, input, output pipeline.Processor) (*pipeline.Task, error) {
	procs := []pipeline.Processor{input}
	taskLog := zap.NewNop()
	if cfg.voice {
		taskLog = discardLogger().With(zap.String("session", id))
		procs = append(procs,
			rtvi.NewProcessor(rtvi.Options{Logger: taskLog.Named("rtvi"), Observer: rtvi.ObserverOptions{Logger: taskLog.Named("rtvi-observer")}}),
			llm.NewService(silentLLM{}, llm.ServiceOptions{Name: "silent-llm"}))
	}
	if cfg.newVAD != nil {
		v, err := cfg.newVAD()
		if err != nil {
			return nil, err
		}
		procs = append(procs, audio.NewVADProcessor(audio.VADProcessorOptions{Analyzer: v}))
	}
	if !cfg.idle {
		procs = append(procs, &echo{perFrame: cfg.allocPerFrame})
	}
	procs = append(procs, output)
	task := pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{
		Logger: taskLog, AudioOutSampleRate: 16000, IdleTimeout: -1,
		EnableMetrics: cfg.tel != nil, EnableUsageMetrics: cfg.tel != nil,
	})
	cfg.tel.StartSession(ctx, telemetry.SessionOptions{ID: id, Transport: transport}).Attach(task)
	return task, nil
}

func runServer(ctx context.Context, cfg config) error {
	var mu sync.Mutex
	live := map[*webrtc.Session]bool{}
	srv, err := webrtc.NewServer(webrtc.Options{
		Logger:   zap.NewNop(),
		Settings: webrtctest.LoopbackOnly,
		// The clients run on this host: their loopback candidates are
		// theirs to offer (the ICE policy refuses loopback otherwise).
		IncludeLoopback: true,
		MeterProvider:   cfg.tel.MeterProvider(), // the transport's metrics with -metrics; nil without
		Output:          cfg.output,
		NewPipeline: func(ctx context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			task, err := cfg.newTask(ctx, "webrtc", s.ID(), s.Input(), s.Output())
			if err != nil {
				return nil, err
			}
			mu.Lock()
			live[s] = true
			mu.Unlock()
			return task, nil
		},
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	offerURL := "http://" + ln.Addr().String() + "/api/offer"

	sessions := func() []*webrtc.Session {
		mu.Lock()
		defer mu.Unlock()
		out := make([]*webrtc.Session, 0, len(live))
		for s := range live {
			select {
			case <-s.Done():
				delete(live, s) // polled rather than watched: a goroutine per session would be measured too
			default:
				out = append(out, s)
			}
		}
		return out
	}
	// totals sums the counters of the sessions live at a window's start:
	// a session that ends in the window keeps its counters, so none
	// goes backwards.
	totals := func(all []*webrtc.Session) (t outputTotals) {
		for _, s := range all {
			st := s.Output().Stats()
			t.sent += st.FramesSent
			t.underruns += st.Underruns
			t.assisted += st.AssistedFrames
			t.in += s.Input().FramesPushed()
			t.complexity += float64(st.OpusComplexity)
			t.maxLate = max(t.maxLate, st.MaxLate)
		}
		if len(all) > 0 {
			t.complexity /= float64(len(all))
		}
		return t
	}

	counts, err := sessionCounts(cfg.ns)
	if err != nil {
		return err
	}
	held := make(map[int]bool)
	var overHeap []string
	for _, n := range counts {
		heap0, g0 := heapNow()
		var cl clientLoad
		if cfg.separate {
			cl, err = startClientProcess(n, offerURL, cfg.idle)
		} else {
			cl, err = startClients(ctx, n, offerURL, cfg.idle)
		}
		if err != nil {
			return err
		}
		time.Sleep(cfg.warmup)
		load := loadAvg()
		sched0, pause0 := histograms()
		window := sessions()
		start := totals(window)
		cpu0, t0, ccpu0, steal0 := cpuTime(), time.Now(), cl.cpu(), stealTime()
		if err := cfg.sleepWindow(n, func() uint64 { return totals(window).underruns }); err != nil {
			return err
		}
		end := totals(window)
		sched1, pause1 := histograms()
		cpu1, t1, ccpu1, steal1 := cpuTime(), time.Now(), cl.cpu(), stealTime()
		heap1, g1 := heapNow()
		if cfg.memProfile != "" {
			if err := writeHeapProfile(cfg.memProfile); err != nil {
				return err
			}
		}
		count := len(sessions())
		packetsIn := cl.stop()
		for deadline := time.Now().Add(30 * time.Second); len(sessions()) > 0 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		wall := t1.Sub(t0).Seconds()
		cpu := (cpu1 - cpu0).Seconds()
		r := result{
			Kind: "run", Clients: clientsMode(cfg.separate), Codec: webrtctest.CodecMimeType(), OpusComplexity: cfg.output.OpusComplexity, ComplexityAtEnd: end.complexity, Idle: cfg.idle, EchoAllocPerFrame: cfg.allocPerFrame, N: n, Sessions: count, WindowS: wall,
			CPUPctTotal:       100 * cpu / wall,
			ClientCPUPct:      100 * (ccpu1 - ccpu0).Seconds() / wall,
			LoadAvg:           load,
			StealPct:          100 * (steal1 - steal0).Seconds() / wall,
			CPUPctPerSession:  100 * cpu / wall / float64(n),
			CPUUsPerFrame:     1e6 * cpu / (wall * 50) / float64(n),
			HeapKBPerSession:  float64(int64(heap1)-int64(heap0)) / 1024 / float64(n),
			GoroutinesPerSess: float64(g1-g0) / float64(n),
			Underruns:         end.underruns - start.underruns,
			Assisted:          end.assisted - start.assisted,
			MaxLateMS:         float64(end.maxLate) / float64(time.Millisecond),
			OutFPS:            float64(end.sent-start.sent) / wall / float64(n),
			InFPS:             float64(end.in-start.in) / wall / float64(n),
			ClientInPPS:       float64(packetsIn) / (cfg.warmup + cfg.duration).Seconds() / float64(n),
		}
		r.SchedP99US = 1e6 * quantile(sched0, sched1, 0.99)
		r.SchedP999US = 1e6 * quantile(sched0, sched1, 0.999)
		r.SchedMaxUS = 1e6 * quantile(sched0, sched1, 1)
		r.GCPauseMaxUS = 1e6 * quantile(pause0, pause1, 1)
		r.OK = r.Underruns == 0 && count == n
		held[n] = r.OK
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
		if cfg.maxHeapKB != 0 && r.HeapKBPerSession > cfg.maxHeapKB {
			overHeap = append(overHeap, fmt.Sprintf("%d sessions held %.0f KiB of heap each, over the bound of %.0f KiB", n, r.HeapKBPerSession, cfg.maxHeapKB))
		}
	}
	fmt.Printf(`{"kind":"summary","largest_n_without_underruns":%d,"gomaxprocs":%d}`+"\n", largestHeld(counts, held), runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return err
	}
	if len(overHeap) > 0 {
		return errors.New(strings.Join(overHeap, "; "))
	}
	return nil
}

// sleepWindow waits out the measured window of n sessions, with -trace's
// trace of its first second and -flight's recorder watching underruns (a
// count of the sessions' late frames) in it.
func (cfg config) sleepWindow(n int, underruns func() uint64) error {
	stopFlight := func() error { return nil }
	if cfg.flightFile != "" {
		stopFlight = recordBurst(fmt.Sprintf("%s.n%d", cfg.flightFile, n), underruns)
	}
	if cfg.traceFile != "" {
		if err := traceFor(cfg.traceFile, time.Second); err != nil {
			_ = stopFlight()
			return err
		}
		time.Sleep(cfg.duration - time.Second)
	} else {
		time.Sleep(cfg.duration)
	}
	return stopFlight()
}

// discardLogger is an info-level logger that writes to io.Discard: its
// cores are a deployed server's, its output goes nowhere.
func discardLogger() *zap.Logger {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(io.Discard), zapcore.InfoLevel))
}

// silentLLM is the -voice sessions' model: it never answers (nothing in
// the benchmark asks it).
type silentLLM struct{}

// Model implements frames.Modeler.
func (silentLLM) Model() string { return "silent" }

// Stream implements llm.Provider: an answer with no events.
func (silentLLM) Stream(context.Context, *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(func(llm.Event, error) bool) {}
}

// writeHeapProfile writes the live heap's profile to file.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// burstFrames is how many late frames within one poll of recordBurst make
// a burst.
const burstFrames = 5

// recordBurst runs a flight recorder and polls lateFrames every 5 ms; at the
// first burst it waits 300 ms for the rest of it and writes the recorder's
// last 1.5 s or more to file, for go tool trace. It returns a function that
// stops it, once the recorder is off, and reports the error of the write,
// if any.
func recordBurst(file string, lateFrames func() uint64) (stop func() error) {
	stopped, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- watchBursts(file, lateFrames, stopped) }()
	return func() error {
		close(stopped)
		return <-done
	}
}

// watchBursts is recordBurst's goroutine. It returns after stopped closes,
// with its recorder stopped, so that the next window can start one.
func watchBursts(file string, lateFrames func() uint64, stopped <-chan struct{}) error {
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: 1500 * time.Millisecond, MaxBytes: 256 << 20})
	if err := fr.Start(); err != nil {
		<-stopped
		return fmt.Errorf("flight recorder: %w", err)
	}
	defer fr.Stop()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	last := lateFrames()
	for {
		select {
		case <-stopped:
			return nil
		case <-poll.C:
		}
		n := lateFrames()
		if n-last < burstFrames {
			last = n
			continue
		}
		time.Sleep(300 * time.Millisecond)
		err := writeFlight(fr, file)
		<-stopped
		return err
	}
}

func writeFlight(fr *trace.FlightRecorder, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := fr.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("flight recorder: %w", err)
	}
	return f.Close()
}

// traceFor writes an execution trace of the next d to file.
func traceFor(file string, d time.Duration) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := trace.Start(f); err != nil {
		return err
	}
	time.Sleep(d)
	trace.Stop()
	return nil
}

// histograms reads the runtime's scheduling-latency and GC-pause
// histograms.
func histograms() (sched, pause *metrics.Float64Histogram) {
	ss := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(ss)
	return ss[0].Value.Float64Histogram(), ss[1].Value.Float64Histogram()
}

// quantile returns the q-quantile of what histogram b counted since a, as
// the upper bound of the bucket it falls in.
func quantile(a, b *metrics.Float64Histogram, q float64) float64 {
	var total uint64
	for i := range b.Counts {
		total += b.Counts[i] - a.Counts[i]
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	last := 0.0
	for i := range b.Counts {
		c := b.Counts[i] - a.Counts[i]
		if c == 0 {
			continue
		}
		seen += c
		last = b.Buckets[i+1]
		if math.IsInf(last, 1) {
			last = b.Buckets[i]
		}
		if seen >= want {
			return last
		}
	}
	return last
}

// procCPU returns the user+system CPU time of process pid (Linux).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return clockTicks(ut + st)
}

// clockTicks converts a count of the clock ticks /proc reports CPU time in
// (USER_HZ, 100 a second on Linux) to a duration.
func clockTicks(n int64) time.Duration { return time.Duration(n) * time.Second / 100 }

// sessionCounts parses -n: positive session counts, run in increasing
// order.
func sessionCounts(list string) ([]int, error) {
	var counts []int
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad -n value %q", field)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return slices.Compact(counts), nil
}

// largestHeld is the largest of counts (in increasing order) that held,
// it and every smaller one: a machine that drops frames at 50 sessions
// does not hold 100 because one window at 100 happened to pass.
func largestHeld(counts []int, held map[int]bool) int {
	best := 0
	for _, n := range counts {
		if !held[n] {
			break
		}
		best = n
	}
	return best
}

// stealTime returns the CPU time the hypervisor has given other guests
// while this machine's CPUs wanted to run (steal in /proc/stat), summed
// over the CPUs; 0 where it is not known. On a shared VM, a window with a
// few percent of steal measured the neighbours as much as the server: its
// threads were runnable but not running.
func stealTime() time.Duration {
	b, _ := os.ReadFile("/proc/stat")
	return stealIn(string(b))
}

// stealIn reads the steal time from the text of /proc/stat.
func stealIn(stat string) time.Duration {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	st, _ := strconv.ParseInt(f[8], 10, 64)
	return clockTicks(st)
}

// loadAvg returns the machine's 1-minute load average, to show how much
// else was running.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}

func heapNow() (uint64, int) {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func clientsMode(separate bool) string {
	if separate {
		return "separate-process"
	}
	return "in-process"
}

// clientLoad is a running set of simulated clients.
type clientLoad struct {
	cpu  func() time.Duration // CPU used by a separate client process; 0 in process
	stop func() uint64        // closes the clients and returns the packets they received
}

// startClients connects n clients in this process.
func startClients(ctx context.Context, n int, url string, idle bool) (clientLoad, error) {
	clients, err := dialClients(ctx, n, url, idle)
	if err != nil {
		closeClients(clients)
		return clientLoad{}, err
	}
	return clientLoad{
		cpu: func() time.Duration { return 0 },
		stop: func() uint64 {
			in := packetsIn(clients)
			closeClients(clients)
			return in
		},
	}, nil
}

// startClientProcess connects n clients in a second process, so that the
// server's CPU and heap are measured apart from theirs.
func startClientProcess(n int, url string, idle bool) (clientLoad, error) {
	self, err := os.Executable()
	if err != nil {
		return clientLoad{}, err
	}
	args := []string{"-client", "-n", strconv.Itoa(n), "-url", url}
	if idle {
		args = append(args, "-idle")
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return clientLoad{}, err
	}
	if err := cmd.Start(); err != nil {
		return clientLoad{}, err
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return clientLoad{}, fmt.Errorf("the client process did not get %d clients ready: %q", n, lines.Text())
	}
	return clientLoad{
		cpu: func() time.Duration { return procCPU(cmd.Process.Pid) },
		stop: func() uint64 {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			var client struct{ PacketsIn uint64 }
			if lines.Scan() {
				_ = json.Unmarshal(lines.Bytes(), &client)
			}
			_ = cmd.Wait()
			return client.PacketsIn
		},
	}, nil
}

// runClientProcess is the second process of -separate: it connects n
// clients, prints "ready", streams until SIGTERM, then prints the packets
// received and closes them.
func runClientProcess(ctx context.Context, n int, url string, idle bool) error {
	clients, err := dialClients(ctx, n, url, idle)
	defer closeClients(clients)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	fmt.Printf(`{"PacketsIn":%d}`+"\n", packetsIn(clients))
	return nil
}

// dialClients connects n clients, eight at a time, each streaming a tone
// up unless idle.
func dialClients(ctx context.Context, n int, url string, idle bool) ([]*webrtctest.Client, error) {
	var payloads [][]byte
	if !idle {
		var err error
		if payloads, err = webrtctest.EncodeTone(440, 8000, time.Second); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	clients := make([]*webrtctest.Client, 0, n)
	sem := make(chan struct{}, 8)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: url, Payloads: payloads, CountOnly: true})
			if err == nil {
				err = c.WaitOpen(ctx)
			}
			mu.Lock()
			defer mu.Unlock()
			if c != nil {
				clients = append(clients, c)
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	return clients, firstErr
}

func packetsIn(clients []*webrtctest.Client) uint64 {
	var in uint64
	for _, c := range clients {
		in += c.PacketsIn.Load()
	}
	return in
}

func closeClients(clients []*webrtctest.Client) {
	for _, c := range clients {
		c.Close()
	}
}

// outputTotals sums the outputs' and inputs' counters over the sessions.
type outputTotals struct {
	sent, underruns, assisted, in uint64
	complexity                    float64 // mean over the sessions
	maxLate                       time.Duration
}
