package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// Result is one measurement, with the keys bench/WORKLOADS.md lists; fields that
// do not apply to a workload are omitted.
type Result struct {
	Kind                string   `json:"kind"`
	Peer                string   `json:"peer"`
	Workload            string   `json:"workload"`
	N                   int      `json:"n"`
	OK                  bool     `json:"ok"`
	FramesPerS          *float64 `json:"frames_per_s,omitempty"`
	USPerFrame          *float64 `json:"us_per_frame,omitempty"`
	USPerFramePerHop    *float64 `json:"us_per_frame_per_hop,omitempty"`
	CPUUSPerFramePerHop *float64 `json:"cpu_us_per_frame_per_hop,omitempty"`
	P50US               *float64 `json:"p50_us,omitempty"`
	P90US               *float64 `json:"p90_us,omitempty"`
	P99US               *float64 `json:"p99_us,omitempty"`
	CPUUSPerIter        *float64 `json:"cpu_us_per_iter,omitempty"`
	InterruptLatencyUS  *float64 `json:"interrupt_latency_us,omitempty"`
	Flushed             *float64 `json:"flushed,omitempty"`
	StaleDelivered      *float64 `json:"stale_delivered,omitempty"`
	RTF                 *float64 `json:"rtf,omitempty"`
	CPURTF              *float64 `json:"cpu_rtf,omitempty"`
	XRealtime           *float64 `json:"x_realtime,omitempty"`
	RSSStartKB          *float64 `json:"rss_start_kb,omitempty"`
	RSSPeakKB           *float64 `json:"rss_peak_kb,omitempty"`
	Commit              string   `json:"commit"`
	Date                string   `json:"date"`
	Note                string   `json:"note,omitempty"`
}

type cell struct {
	workload string
	n        int
}

var cells = []cell{
	{"W1", 1}, {"W1", 10}, {"W1", 50},
	{"W2", 10},
	{"W3", 10},
	{"W4", 5},
	// Not one of bench/WORKLOADS.md's four: W1 at N=10 with an observer that sleeps 1 ms per
	// event, to show what a slow observer costs.
	{"W1-slow-observer", 10},
}

const repetitions = 3

func main() {
	child := flag.String("child", "", "run one measurement of this workload in this process")
	n := flag.Int("n", 10, "number of pass-through processors (with -child)")
	only := flag.String("only", "", "run only the cells of this workload")
	cpuProfile := flag.String("cpuprofile", "", "with -child: write a CPU profile of the measurement here")
	flag.Parse()
	if *child != "" {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fail(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				fail(err)
			}
		}
		r := measure(*child, *n)
		pprof.StopCPUProfile()
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		fail(err)
	}
	commit := gitCommit()
	date := time.Now().UTC().Format(time.RFC3339)
	out := json.NewEncoder(os.Stdout)
	for _, c := range cells {
		if *only != "" && c.workload != *only {
			continue
		}
		var runs []Result
		for range repetitions {
			r, err := runChild(exe, c)
			if err != nil {
				r = Result{Workload: c.workload, N: c.n, Note: err.Error()}
			}
			r.Kind, r.Peer, r.Commit, r.Date = "run", "framewire", commit, date
			out.Encode(r)
			runs = append(runs, r)
		}
		m := median(runs)
		m.Kind, m.Peer, m.Commit, m.Date = "median", "framewire", commit, date
		out.Encode(m)
	}
	if *only == "" || *only == "W1-slow-observer" {
		out.Encode(observerCost(exe, commit, date))
	}
}

// observerPairs is how many interleaved W1 / W1-slow-observer pairs
// observerCost runs: three runs each are too few to see a 5% difference on
// a machine whose timings vary by 25% from run to run.
const observerPairs = 21

// ObserverCost compares W1 at N=10 with and without an observer that
// sleeps 1 ms per event, over interleaved runs, so slow drifts of the
// machine hit both sides alike.
type ObserverCost struct {
	Kind           string  `json:"kind"` // "observer_cost"
	Pairs          int     `json:"pairs"`
	FramesPerS     float64 `json:"frames_per_s_median"`
	SlowFramesPerS float64 `json:"slow_observer_frames_per_s_median"`
	CostPct        float64 `json:"throughput_cost_pct"`
	CPUPerHop      float64 `json:"cpu_us_per_frame_per_hop_median"`
	SlowCPUPerHop  float64 `json:"slow_observer_cpu_us_per_frame_per_hop_median"`
	Commit         string  `json:"commit"`
	Date           string  `json:"date"`
	Error          string  `json:"error,omitempty"`
}

func observerCost(exe, commit, date string) ObserverCost {
	var fps, slowFPS, cpu, slowCPU []float64
	for range observerPairs {
		a, err := runChild(exe, cell{"W1", 10})
		if err != nil {
			return ObserverCost{Kind: "observer_cost", Error: err.Error()}
		}
		b, err := runChild(exe, cell{"W1-slow-observer", 10})
		if err != nil {
			return ObserverCost{Kind: "observer_cost", Error: err.Error()}
		}
		fps, cpu = append(fps, *a.FramesPerS), append(cpu, *a.CPUUSPerFramePerHop)
		slowFPS, slowCPU = append(slowFPS, *b.FramesPerS), append(slowCPU, *b.CPUUSPerFramePerHop)
	}
	c := ObserverCost{
		Kind: "observer_cost", Pairs: observerPairs, Commit: commit, Date: date,
		FramesPerS: medianOf(fps), SlowFramesPerS: medianOf(slowFPS),
		CPUPerHop: medianOf(cpu), SlowCPUPerHop: medianOf(slowCPU),
	}
	c.CostPct = 100 * (1 - c.SlowFramesPerS/c.FramesPerS)
	return c
}

// medianOf returns the middle value of vals (the upper one of an even
// count), without reordering vals.
func medianOf(vals []float64) float64 {
	vals = slices.Clone(vals)
	slices.Sort(vals)
	return vals[len(vals)/2]
}

// runChild runs one measurement in a fresh process.
func runChild(exe string, c cell) (Result, error) {
	cmd := exec.Command(exe, "-child", c.workload, "-n", fmt.Sprint(c.n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("%s n=%d: %v: %s", c.workload, c.n, err, strings.TrimSpace(stderr.String()))
	}
	var r Result
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &r); err == nil && r.Workload != "" {
			return r, nil
		}
	}
	return Result{}, fmt.Errorf("%s n=%d: no result in output %q", c.workload, c.n, stdout)
}

// median takes the median of every numeric field over runs; ok only if
// every run was ok.
func median(runs []Result) Result {
	m := Result{Workload: runs[0].Workload, N: runs[0].N, OK: true}
	for _, r := range runs {
		m.OK = m.OK && r.OK
	}
	fields := []func(*Result) **float64{
		func(r *Result) **float64 { return &r.FramesPerS },
		func(r *Result) **float64 { return &r.USPerFrame },
		func(r *Result) **float64 { return &r.USPerFramePerHop },
		func(r *Result) **float64 { return &r.CPUUSPerFramePerHop },
		func(r *Result) **float64 { return &r.P50US },
		func(r *Result) **float64 { return &r.P90US },
		func(r *Result) **float64 { return &r.P99US },
		func(r *Result) **float64 { return &r.CPUUSPerIter },
		func(r *Result) **float64 { return &r.InterruptLatencyUS },
		func(r *Result) **float64 { return &r.Flushed },
		func(r *Result) **float64 { return &r.StaleDelivered },
		func(r *Result) **float64 { return &r.RTF },
		func(r *Result) **float64 { return &r.CPURTF },
		func(r *Result) **float64 { return &r.XRealtime },
		func(r *Result) **float64 { return &r.RSSStartKB },
		func(r *Result) **float64 { return &r.RSSPeakKB },
	}
	for _, field := range fields {
		var vals []float64
		for i := range runs {
			if v := *field(&runs[i]); v != nil {
				vals = append(vals, *v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		v := medianOf(vals)
		*field(&m) = &v
	}
	return m
}

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "framewire-bench:", err)
	os.Exit(1)
}

func f64(v float64) *float64 { return &v }
