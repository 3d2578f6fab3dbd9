package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/websocket"
	"github.com/framewire/framewire/transports/websocket/websockettest"
)

// The WebSocket mode (-transport websocket): the same measurement over
// transports/websocket. Each client (transports/websocket/websockettest)
// calls /connect, opens the socket and streams a 16 kHz tone up in
// 512-byte frames every 16 ms, as the browser's recorder does; the
// session's input frames it into 20 ms, the echo sends it back, and the
// output resamples it to the browser player's 24 kHz and plays it on its
// 20 ms clock, one binary message a frame. So each session carries PCM
// both ways through the protobuf wire, the resampler and the paced
// output, with no codec.
//
// Besides what the server counts, the clients count what reached them in
// the window: the audio frames against the 50 a second the output plays,
// and the inbound gaps (gapThreshold or more without an audio frame).

// wsFramesPerSecond is what each session's output sends while the echo
// feeds it: one 20 ms frame at a time.
const wsFramesPerSecond = float64(time.Second / transports.FrameDuration)

// wsResult is the JSON line of one N with -transport websocket. Its
// server-side names are the WebRTC line's.
type wsResult struct {
	Kind              string  `json:"kind"`      // "run"
	Transport         string  `json:"transport"` // "websocket"
	Clients           string  `json:"clients"`   // "in-process" (figures include them) or "separate-process"
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
	StealPct          float64 `json:"host_steal_pct_of_cpu"`
	OthersCPUPct      float64 `json:"others_cpu_pct"` // what the machine's other processes ran in the window, in % of one core (of runtime.NumCPU()*100)
	HeapKBPerSession  float64 `json:"heap_kb_per_session"`
	GoroutinesPerSess float64 `json:"goroutines_per_session"`
	Underruns         uint64  `json:"output_underruns"`
	Assisted          uint64  `json:"output_assisted_frames"` // the late frames: sent by another goroutine than their output's player, which was 5 ms late
	MaxLateMS         float64 `json:"output_max_late_ms"`     // the latest any output's clock ran, warm-up included
	OutFPS            float64 `json:"output_frames_per_s_per_session"`
	InFPS             float64 `json:"input_frames_per_s_per_session"`
	InDropped         uint64  `json:"input_audio_dropped"` // client frames the inputs dropped as too far ahead of real time

	// What the clients saw in the window.
	ClientOutFPS   float64 `json:"client_frames_out_per_s_per_session"`
	ClientInFPS    float64 `json:"client_frames_in_per_s_per_session"`
	ClientInMinFPS float64 `json:"client_frames_in_per_s_min"` // the client that got the fewest
	ExpectedFPS    float64 `json:"client_frames_in_expected_per_s"`
	ClientInRatio  float64 `json:"client_frames_in_of_expected"` // received over expected, all clients
	Lost           int     `json:"sessions_lost"`                // clients whose socket closed before the window's end
	// Ended counts the sessions the server ended in the window, by
	// reason ("the client stopped answering pings", ...).
	Ended        map[string]int `json:"sessions_ended_in_window,omitempty"`
	InGaps       int            `json:"inbound_gaps"` // stretches of gapThreshold or more without an audio frame, over all clients
	InGapClients int            `json:"inbound_gap_sessions"`
	InGapMaxMS   float64        `json:"inbound_gap_max_ms"`
	PollLateMS   float64        `json:"gap_poll_max_late_ms"`

	SchedP99US   float64 `json:"sched_latency_p99_us"`
	SchedP999US  float64 `json:"sched_latency_p999_us"`
	SchedMaxUS   float64 `json:"sched_latency_max_us"`
	GCPauseMaxUS float64 `json:"gc_pause_max_us"`
	// OK is the WebRTC line's: no underrun, every session live.
	// ClientsOK adds the clients' side: none lost, no inbound gap, and
	// 99% of the expected frames received (less a frame at each edge of
	// the window).
	OK        bool `json:"ok"`
	ClientsOK bool `json:"clients_ok"`
}

// wsTotals sums the outputs' and inputs' counters over the sessions.
type wsTotals struct {
	sent, underruns, assisted, in, dropped uint64
	maxLate                                time.Duration
}

// runWebSocket is runServer over transports/websocket: it writes a JSON
// line to out for each N and the summary, and returns the lines' results.
func runWebSocket(ctx context.Context, cfg config, out io.Writer) ([]wsResult, error) {
	counts, err := sessionCounts(cfg.ns)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	live := map[*websocket.Session]bool{}
	ended := map[string]int{} // by reason, since the window's start
	srv, err := websocket.NewServer(websocket.Options{
		Logger:        zap.NewNop(),
		MeterProvider: cfg.tel.MeterProvider(),
		MaxSessions:   -1,
		NewPipeline: func(ctx context.Context, s *websocket.Session) (*pipeline.Task, error) {
			return cfg.newTask(ctx, "websocket", s.ID(), s.Input(), s.Output())
		},
		OnSession: func(ev websocket.SessionEvent) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Kind == websocket.SessionStarted {
				live[ev.Session] = true
			} else {
				delete(live, ev.Session)
				ended[ev.Reason]++
			}
		},
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	var serving sync.WaitGroup
	serving.Go(func() { _ = hs.Serve(ln) })
	defer serving.Wait()
	defer hs.Close()
	defer srv.Close()
	connectURL := "http://" + ln.Addr().String() + "/connect"

	liveCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(live)
	}
	sessions := func() []*websocket.Session {
		mu.Lock()
		defer mu.Unlock()
		out := make([]*websocket.Session, 0, len(live))
		for s := range live {
			out = append(out, s)
		}
		return out
	}
	// totals sums the counters of the sessions live at a window's start:
	// a session that ends in the window keeps its counters, so none
	// goes backwards.
	totals := func(window []*websocket.Session) (t wsTotals) {
		for _, s := range window {
			st := s.Output().Stats()
			t.sent += st.FramesSent
			t.underruns += st.Underruns
			t.assisted += st.AssistedFrames
			t.maxLate = max(t.maxLate, st.MaxLate)
			t.in += s.Input().FramesPushed()
			t.dropped += s.Input().AudioDropped()
		}
		return t
	}

	held := make(map[int]bool)
	var overHeap []string
	var results []wsResult
	for _, n := range counts {
		heap0, g0 := heapNow()
		var cl wsLoad
		if cfg.separate {
			cl, err = startWSClientProcess(n, connectURL, cfg.idle, cfg.cpuProfile)
		} else {
			cl, err = startWSClients(ctx, n, connectURL, cfg.idle)
		}
		if err != nil {
			return results, err
		}
		time.Sleep(cfg.warmup)
		load := loadAvg()
		sched0, pause0 := histograms()
		window := sessions()
		mu.Lock()
		clear(ended)
		mu.Unlock()
		start := totals(window)
		if err := cl.begin(); err != nil {
			cl.stop()
			return results, err
		}
		cpu0, t0, ccpu0, steal0, busy0 := cpuTime(), time.Now(), cl.cpu(), stealTime(), busyTime()
		if err := cfg.sleepWindow(n, func() uint64 { return totals(window).underruns }); err != nil {
			cl.stop()
			return results, err
		}
		end := totals(window)
		mu.Lock()
		endedInWindow := maps.Clone(ended)
		mu.Unlock()
		seen, err := cl.end()
		if err != nil {
			cl.stop()
			return results, err
		}
		sched1, pause1 := histograms()
		cpu1, t1, ccpu1, steal1, busy1 := cpuTime(), time.Now(), cl.cpu(), stealTime(), busyTime()
		heap1, g1 := heapNow()
		if cfg.memProfile != "" {
			if err := writeHeapProfile(cfg.memProfile); err != nil {
				cl.stop()
				return results, err
			}
		}
		count := liveCount()
		cl.stop()
		for deadline := time.Now().Add(30 * time.Second); liveCount() > 0 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		r := wsReport(cfg, n, count, t1.Sub(t0).Seconds(), (cpu1 - cpu0).Seconds(), start, end, seen)
		r.ClientCPUPct = 100 * (ccpu1 - ccpu0).Seconds() / r.WindowS
		r.LoadAvg = load
		r.StealPct = 100 * (steal1 - steal0).Seconds() / r.WindowS
		r.OthersCPUPct = 100*(busy1-busy0).Seconds()/r.WindowS - r.CPUPctTotal - r.ClientCPUPct
		r.HeapKBPerSession = float64(int64(heap1)-int64(heap0)) / 1024 / float64(n)
		r.GoroutinesPerSess = float64(g1-g0) / float64(n)
		r.SchedP99US = 1e6 * quantile(sched0, sched1, 0.99)
		r.SchedP999US = 1e6 * quantile(sched0, sched1, 0.999)
		r.SchedMaxUS = 1e6 * quantile(sched0, sched1, 1)
		r.GCPauseMaxUS = 1e6 * quantile(pause0, pause1, 1)
		if len(endedInWindow) > 0 {
			r.Ended = endedInWindow
		}
		held[n] = r.OK
		results = append(results, r)
		b, _ := json.Marshal(r)
		fmt.Fprintln(out, string(b))
		if cfg.maxHeapKB != 0 && r.HeapKBPerSession > cfg.maxHeapKB {
			overHeap = append(overHeap, fmt.Sprintf("%d sessions held %.0f KiB of heap each, over the bound of %.0f KiB", n, r.HeapKBPerSession, cfg.maxHeapKB))
		}
	}
	fmt.Fprintf(out, `{"kind":"summary","transport":"websocket","largest_n_without_underruns":%d,"gomaxprocs":%d}`+"\n", largestHeld(counts, held), runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return results, err
	}
	if len(overHeap) > 0 {
		return results, errors.New(strings.Join(overHeap, "; "))
	}
	return results, nil
}

// busyTime returns the CPU time this machine's CPUs have spent on any
// process (user, nice, system, irq, softirq: /proc/stat's first line less
// idle, iowait and steal), summed over the CPUs; 0 where it is not known.
func busyTime() time.Duration {
	b, _ := os.ReadFile("/proc/stat")
	return busyIn(string(b))
}

// busyIn reads the busy time from the text of /proc/stat.
func busyIn(stat string) time.Duration {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:8] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return clockTicks(busy)
}

// wsReport makes the figures of a window of wall seconds in which the
// process used cpu seconds, the servers counted from start to end and
// the clients saw seen.
func wsReport(cfg config, n, sessions int, wall, cpu float64, start, end wsTotals, seen wsSeen) wsResult {
	r := wsResult{
		Kind: "run", Transport: "websocket", Clients: clientsMode(cfg.separate), Idle: cfg.idle, EchoAllocPerFrame: cfg.allocPerFrame,
		N: n, Sessions: sessions, WindowS: wall,
		CPUPctTotal:      100 * cpu / wall,
		CPUPctPerSession: 100 * cpu / wall / float64(n),
		CPUUsPerFrame:    1e6 * cpu / (wall * wsFramesPerSecond) / float64(n),
		Underruns:        end.underruns - start.underruns,
		Assisted:         end.assisted - start.assisted,
		MaxLateMS:        float64(end.maxLate) / float64(time.Millisecond),
		OutFPS:           float64(end.sent-start.sent) / wall / float64(n),
		InFPS:            float64(end.in-start.in) / wall / float64(n),
		InDropped:        end.dropped - start.dropped,
		ClientOutFPS:     float64(seen.FramesOut) / wall / float64(n),
		ClientInFPS:      float64(seen.FramesIn) / wall / float64(n),
		ClientInMinFPS:   float64(seen.FramesInMin) / wall,
		Lost:             seen.Lost,
		InGaps:           seen.Gaps,
		InGapClients:     seen.GapClients,
		InGapMaxMS:       seen.GapMaxMS,
		PollLateMS:       seen.PollLateMS,
	}
	if cfg.idle {
		// No audio flows: every client is one long gap.
		r.InGaps, r.InGapClients, r.InGapMaxMS = 0, 0, 0
	} else {
		r.ExpectedFPS = wsFramesPerSecond
		r.ClientInRatio = r.ClientInFPS / r.ExpectedFPS
	}
	r.OK = r.Underruns == 0 && sessions == n
	// A client's window may start or end anywhere in a frame: 99% of the
	// expected frames, less a frame at each edge.
	enough := float64(seen.FramesIn) >= 0.99*wsFramesPerSecond*wall*float64(n)-2*float64(n)
	r.ClientsOK = seen.Clients == n && r.Lost == 0 && r.InGaps == 0 && (cfg.idle || enough)
	return r
}

// wsSeen is what the clients saw in a window; a client process prints it
// as JSON.
type wsSeen struct {
	Clients     int     `json:"clients"`
	FramesIn    uint64  `json:"frames_in"`     // the server's audio frames received, over all clients
	FramesInMin uint64  `json:"frames_in_min"` // by the client that got the fewest
	FramesOut   uint64  `json:"frames_out"`    // audio frames sent
	Lost        int     `json:"lost"`          // clients whose socket closed
	Gaps        int     `json:"gaps"`
	GapClients  int     `json:"gap_clients"`
	GapMaxMS    float64 `json:"gap_max_ms"`
	PollLateMS  float64 `json:"poll_late_ms"`
}

// wsWindow watches a set of clients through a window.
type wsWindow struct {
	clients  []*websockettest.Client
	in, out  []uint64
	watching *gapWatcher
}

// beginWindow takes the clients' counters and starts watching for gaps.
func beginWindow(clients []*websockettest.Client) *wsWindow {
	w := &wsWindow{clients: clients, in: make([]uint64, len(clients)), out: make([]uint64, len(clients))}
	counters := make([]*atomic.Uint64, len(clients))
	for i, c := range clients {
		w.in[i], w.out[i] = c.AudioFramesIn.Load(), c.FramesOut.Load()
		counters[i] = &c.AudioFramesIn
	}
	w.watching = watchGaps(counters)
	return w
}

// end stops the watch and returns what the clients saw since begin.
func (w *wsWindow) end() wsSeen {
	g := w.watching.stop()
	s := wsSeen{Clients: len(w.clients), Gaps: g.gaps, GapClients: g.clients, GapMaxMS: ms(g.max), PollLateMS: ms(g.pollLate)}
	for i, c := range w.clients {
		in := c.AudioFramesIn.Load() - w.in[i]
		s.FramesIn += in
		s.FramesOut += c.FramesOut.Load() - w.out[i]
		if i == 0 || in < s.FramesInMin {
			s.FramesInMin = in
		}
		select {
		case <-c.Done():
			s.Lost++
		default:
		}
	}
	return s
}

// wsLoad is a running set of WebSocket clients, here or in a client
// process.
type wsLoad struct {
	cpu   func() time.Duration // CPU used by a separate client process; 0 in process
	begin func() error         // the window starts
	end   func() (wsSeen, error)
	stop  func() // closes the clients
}

// startWSClients connects n clients in this process.
func startWSClients(ctx context.Context, n int, connectURL string, idle bool) (wsLoad, error) {
	clients, err := dialWSClients(ctx, n, connectURL, idle)
	if err != nil {
		closeWSClients(clients)
		return wsLoad{}, err
	}
	var w *wsWindow
	return wsLoad{
		cpu:   func() time.Duration { return 0 },
		begin: func() error { w = beginWindow(clients); return nil },
		end:   func() (wsSeen, error) { return w.end(), nil },
		stop:  func() { closeWSClients(clients) },
	}, nil
}

// startWSClientProcess connects n clients in a second process. The
// window is signalled to it: SIGUSR1 begins it, SIGUSR2 ends it (the
// process prints what its clients saw), SIGTERM closes the clients. With
// a cpuProfile, the process writes its CPU profile to it plus .clients.
func startWSClientProcess(n int, connectURL string, idle bool, cpuProfile string) (wsLoad, error) {
	self, err := os.Executable()
	if err != nil {
		return wsLoad{}, err
	}
	args := []string{"-client", "-transport", "websocket", "-n", strconv.Itoa(n), "-url", connectURL}
	if idle {
		args = append(args, "-idle")
	}
	if cpuProfile != "" {
		args = append(args, "-cpuprofile", cpuProfile+".clients")
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return wsLoad{}, err
	}
	if err := cmd.Start(); err != nil {
		return wsLoad{}, err
	}
	lines := bufio.NewScanner(out)
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	if !lines.Scan() || lines.Text() != "ready" {
		stop()
		return wsLoad{}, fmt.Errorf("the client process did not get %d clients ready: %q", n, lines.Text())
	}
	return wsLoad{
		cpu:   func() time.Duration { return procCPU(cmd.Process.Pid) },
		begin: func() error { return cmd.Process.Signal(syscall.SIGUSR1) },
		end: func() (wsSeen, error) {
			var s wsSeen
			if err := cmd.Process.Signal(syscall.SIGUSR2); err != nil {
				return s, err
			}
			if !lines.Scan() {
				return s, fmt.Errorf("the client process said nothing at the window's end: %v", lines.Err())
			}
			if err := json.Unmarshal(lines.Bytes(), &s); err != nil {
				return s, fmt.Errorf("the client process's window: %w", err)
			}
			return s, nil
		},
		stop: stop,
	}, nil
}

// runWSClientProcess is the client process of -separate -transport
// websocket (see startWSClientProcess).
func runWSClientProcess(ctx context.Context, n int, connectURL string, idle bool) error {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	clients, err := dialWSClients(ctx, n, connectURL, idle)
	defer closeWSClients(clients)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	var w *wsWindow
	for s := range sig {
		switch s {
		case syscall.SIGUSR1:
			w = beginWindow(clients)
		case syscall.SIGUSR2:
			if w == nil {
				return errors.New("the window ended before it began")
			}
			b, _ := json.Marshal(w.end())
			fmt.Println(string(b))
			w = nil
		default:
			return nil
		}
	}
	return nil
}

// wsTone is what every client streams: 2 s of a 440 Hz tone at 16 kHz,
// whole periods, so that it loops without a click.
var wsTone = sync.OnceValue(func() []byte {
	return websockettest.Tone(440, 8000, websockettest.DefaultSampleRate, 2*time.Second)
})

// dialWSClients connects n clients, eight at a time, each streaming the
// tone unless idle.
func dialWSClients(ctx context.Context, n int, connectURL string, idle bool) ([]*websockettest.Client, error) {
	var audio []byte
	if !idle {
		audio = wsTone()
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	clients := make([]*websockettest.Client, 0, n)
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
			c, err := websockettest.Dial(ctx, websockettest.Options{URL: connectURL, Audio: audio})
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

// closeWSClients closes the clients, eight at a time (each waits for its
// close handshake).
func closeWSClients(clients []*websockettest.Client) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c.Close()
		}()
	}
	wg.Wait()
}
