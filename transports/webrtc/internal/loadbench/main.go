// Command loadbench measures the WebRTC transport under load. For each N it
// starts a client process holding N simulated browser clients
// (internal/testclient) that each stream 20 ms Opus frames up and receive
// the bot's audio, against an in-process server whose pipeline echoes the
// user's audio back (Input -> echo -> Output), so every session decodes,
// resamples, re-encodes and paces audio both ways. It prints one JSON line
// per N: server CPU per session, heap per session, output underruns, and
// the frame rates seen on both sides; then the largest N without underruns.
//
//	go run -tags "opus nolibopusfile" ./transports/webrtc/internal/loadbench -n 25,50,100
//
// With -idle the clients send nothing and the pipeline has no echo: the
// figures are those of idle sessions (silence out, keepalives in).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
	"github.com/framewire/framewire/transports/webrtc/internal/testclient"
)

func main() {
	ns := flag.String("n", "25,50,100", "comma-separated session counts")
	duration := flag.Duration("duration", 10*time.Second, "measurement window per N")
	warmup := flag.Duration("warmup", 3*time.Second, "settling time before measuring")
	idle := flag.Bool("idle", false, "idle sessions: no audio up, no echo")
	clientMode := flag.Bool("client", false, "internal: run as the client process")
	url := flag.String("url", "", "internal: offer URL for -client")
	cpuProfile := flag.String("cpuprofile", "", "write the server's CPU profile here")
	flag.Parse()
	if *cpuProfile != "" && !*clientMode {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *clientMode {
		n, _ := strconv.Atoi(*ns)
		if err := runClients(n, *url, *idle); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench clients:", err)
			os.Exit(1)
		}
		return
	}
	if err := runServer(*ns, *duration, *warmup, *idle); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// echo turns the user's audio into bot audio: a pass-through processor
// that also pushes each input frame back as output (sharing the PCM, which
// is immutable).
type echo struct{}

func (echo) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if in, ok := f.(*frames.InputAudioRaw); ok {
		h.Push(&frames.OutputAudioRaw{Audio: in.Audio}, frames.Downstream)
	}
	return nil
}

type result struct {
	Kind              string  `json:"kind"`
	Codec             string  `json:"codec"`
	Idle              bool    `json:"idle"`
	N                 int     `json:"n"`
	Sessions          int     `json:"sessions"`
	WindowS           float64 `json:"window_s"`
	CPUPctPerSession  float64 `json:"cpu_pct_of_core_per_session"`
	CPUUsPerFrame     float64 `json:"cpu_us_per_session_per_20ms"`
	CPUPctTotal       float64 `json:"cpu_pct_total"`
	ClientCPUPct      float64 `json:"client_process_cpu_pct"`
	LoadAvg           string  `json:"loadavg_before"`
	HeapKBPerSession  float64 `json:"heap_kb_per_session"`
	GoroutinesPerSess float64 `json:"goroutines_per_session"`
	Underruns         uint64  `json:"output_underruns"`
	OutFPS            float64 `json:"output_frames_per_s_per_session"`
	InFPS             float64 `json:"input_frames_per_s_per_session"`
	ClientInPPS       float64 `json:"client_packets_in_per_s_per_session"`
	OK                bool    `json:"ok"`
}

func runServer(list string, duration, warmup time.Duration, idle bool) error {
	var mu sync.Mutex
	live := map[*webrtc.Session]bool{}
	srv, err := webrtc.NewServer(webrtc.Options{
		Logger:   zap.NewNop(),
		Settings: testclient.LoopbackOnly,
		NewPipeline: func(_ context.Context, s *webrtc.Session) (*pipeline.Task, error) {
			procs := []pipeline.Processor{s.Input(), s.Output()}
			if !idle {
				procs = []pipeline.Processor{s.Input(), echo{}, s.Output()}
			}
			mu.Lock()
			live[s] = true
			mu.Unlock()
			go func() {
				<-s.Done()
				mu.Lock()
				delete(live, s)
				mu.Unlock()
			}()
			// Output at the input's 16 kHz: the echo passes audio through
			// unchanged, and libopus encodes from 16 kHz itself.
			return pipeline.NewTask(pipeline.New(procs...), pipeline.TaskOptions{
				Logger: zap.NewNop(), AudioOutSampleRate: 16000, IdleTimeout: -1,
			}), nil
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
			out = append(out, s)
		}
		return out
	}
	totals := func() (sent, underruns, in uint64) {
		for _, s := range sessions() {
			st := s.Output().Stats()
			sent += st.FramesSent
			underruns += st.Underruns
			in += s.Input().FramesPushed()
		}
		return
	}

	best := 0
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad -n value %q", field)
		}
		heap0, g0 := heapNow()
		self, _ := os.Executable()
		args := []string{"-client", "-n", strconv.Itoa(n), "-url", offerURL}
		if idle {
			args = append(args, "-idle")
		}
		cmd := exec.Command(self, args...)
		cmd.Stderr = os.Stderr
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			return err
		}
		lines := bufio.NewScanner(out)
		if !lines.Scan() || lines.Text() != "ready" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("the client process did not get %d clients ready: %q", n, lines.Text())
		}
		time.Sleep(warmup)
		load := loadAvg()
		sent0, under0, in0 := totals()
		cpu0, t0, ccpu0 := cpuTime(), time.Now(), procCPU(cmd.Process.Pid)
		time.Sleep(duration)
		sent1, under1, in1 := totals()
		cpu1, t1, ccpu1 := cpuTime(), time.Now(), procCPU(cmd.Process.Pid)
		heap1, g1 := heapNow()
		count := len(sessions())
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var client struct{ PacketsIn uint64 }
		if lines.Scan() {
			_ = json.Unmarshal(lines.Bytes(), &client)
		}
		_ = cmd.Wait()
		for deadline := time.Now().Add(30 * time.Second); len(sessions()) > 0 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		wall := t1.Sub(t0).Seconds()
		cpu := (cpu1 - cpu0).Seconds()
		r := result{
			Kind: "run", Codec: codec.Default().Params.MimeType, Idle: idle, N: n, Sessions: count, WindowS: wall,
			CPUPctTotal:       100 * cpu / wall,
			ClientCPUPct:      100 * (ccpu1 - ccpu0).Seconds() / wall,
			LoadAvg:           load,
			CPUPctPerSession:  100 * cpu / wall / float64(n),
			CPUUsPerFrame:     1e6 * cpu / (wall * 50) / float64(n),
			HeapKBPerSession:  float64(int64(heap1)-int64(heap0)) / 1024 / float64(n),
			GoroutinesPerSess: float64(g1-g0) / float64(n),
			Underruns:         under1 - under0,
			OutFPS:            float64(sent1-sent0) / wall / float64(n),
			InFPS:             float64(in1-in0) / wall / float64(n),
			ClientInPPS:       float64(client.PacketsIn) / (warmup + duration).Seconds() / float64(n),
		}
		r.OK = r.Underruns == 0 && count == n
		if r.OK && n > best {
			best = n
		}
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
	fmt.Printf(`{"kind":"summary","largest_n_without_underruns":%d,"gomaxprocs":%d}`+"\n", best, runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
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
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
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

// runClients connects n clients, prints "ready", streams until SIGTERM,
// then prints the packets received and closes them.
func runClients(n int, url string, idle bool) error {
	var payloads [][]byte
	if !idle {
		var err error
		if payloads, err = testclient.EncodeTone(440, 8000, time.Second); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients := make([]*testclient.Client, 0, n)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
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
			c, err := testclient.Dial(ctx, testclient.Options{OfferURL: url, Payloads: payloads, CountOnly: true})
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
	if firstErr != nil {
		return firstErr
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	var in uint64
	for _, c := range clients {
		in += c.PacketsIn.Load()
	}
	fmt.Printf(`{"PacketsIn":%d}`+"\n", in)
	return nil
}
