package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// The external mode (-url): loadbench runs only the clients, against a
// server it did not start (a framewire server, a cluster's front door or
// one of its workers), and reads the servers' side from their Prometheus
// endpoints (-scrape).

// Prometheus names of the counters the external mode reads (package
// telemetry's names, docs/observability.md). A counter nothing has added
// to yet is absent from a scrape: it counts as 0.
const (
	metricUnderruns  = "framewire_output_underruns_total"
	metricLateFrames = "framewire_output_late_frames_total"
	metricStarted    = "framewire_sessions_started_total"
	metricEnded      = "framewire_sessions_ended_total"
)

// gapThreshold is the stretch without a packet from the server that a
// client counts as an inbound gap: five 20 ms frames, more than a
// browser's jitter buffer hides.
const gapThreshold = 100 * time.Millisecond

// gapPoll is how often the clients' packet counters are read to find
// gaps: a gap is known to ±gapPoll.
const gapPoll = 10 * time.Millisecond

// maxScrapeBytes bounds one scrape's body.
const maxScrapeBytes = 8 << 20

// externalConfig is what -url asks of runExternal.
type externalConfig struct {
	offerURL         string   // the server's /api/offer
	scrape           []string // the servers' /metrics URLs
	counts           []int
	duration, warmup time.Duration
	// settle bounds the wait, after the clients have closed, for the
	// servers to count every session ended (they report a session's
	// output counters at its end).
	settle time.Duration
	idle   bool
	// dialTimeout bounds one client's connect (offer, answer, data
	// channel open).
	dialTimeout time.Duration
	// parallel is how many clients connect at a time. Default: 8.
	parallel int
}

// externalResult is the JSON line of one N in the external mode.
type externalResult struct {
	Kind   string `json:"kind"` // "external"
	Target string `json:"target"`
	N      int    `json:"n"`
	Idle   bool   `json:"idle"`

	// Connecting, as the clients see it.
	Connected     int     `json:"connected"`
	ConnectFailed int     `json:"connect_failed"`
	ConnectError  string  `json:"connect_error,omitempty"` // the first failure
	ConnectP50MS  float64 `json:"connect_p50_ms"`          // offer posted to data channel open
	ConnectP99MS  float64 `json:"connect_p99_ms"`
	ConnectMaxMS  float64 `json:"connect_max_ms"`

	// Signalling latency at the client: request sent to response headers.
	Offer latency `json:"offer"` // POST (the first offers, and any re-offer)
	Patch latency `json:"patch"` // PATCH (trickled candidates)

	// The window, as the clients see it.
	WindowS      float64 `json:"window_s"`
	ClientInPPS  float64 `json:"client_packets_in_per_s_per_session"`
	ClientOutPPS float64 `json:"client_packets_out_per_s_per_session"`
	ClientInMin  float64 `json:"client_packets_in_per_s_min"` // the client that got the fewest
	Dropped      int     `json:"sessions_lost"`               // clients whose data channel closed before the window's end (the server ended the session)
	InGaps       int     `json:"inbound_gaps"`                // stretches of gapThreshold or more without a packet, over all clients
	InGapClients int     `json:"inbound_gap_sessions"`        // clients that saw at least one
	InGapMaxMS   float64 `json:"inbound_gap_max_ms"`          // the longest stretch any client went without a packet
	PollLateMS   float64 `json:"gap_poll_max_late_ms"`        // how late the gap poller itself ran at worst: gaps shorter than it may be its own
	ClientCPUPct float64 `json:"client_cpu_pct"`              // this process's CPU, in % of one core
	LoadAvg      string  `json:"loadavg_before"`
	StealPct     float64 `json:"host_steal_pct_of_cpu"`

	// The servers' side, from -scrape. Underruns and LateFrames are the
	// measured window's (the servers count them as they happen), like
	// the in-process benchmark's; the Life ones add connecting and
	// closing. The rest are deltas from before the clients connected to
	// after the servers counted the sessions ended.
	Scraped        bool           `json:"scraped"`
	Underruns      float64        `json:"output_underruns"`
	LateFrames     float64        `json:"output_late_frames"`
	LifeUnderruns  float64        `json:"output_underruns_life"`
	LifeLateFrames float64        `json:"output_late_frames_life"`
	Started        float64        `json:"sessions_started"`
	Ended          float64        `json:"sessions_ended"`
	Settled        bool           `json:"settled"` // every connected session was counted ended within -settle
	PerServer      []serverCounts `json:"per_server,omitempty"`
	SettleS        float64        `json:"settle_s"` // from the clients' close to the last session counted ended
	ScrapeError    string         `json:"scrape_error,omitempty"`
	OK             bool           `json:"ok"`
}

// latency is the distribution of one kind of signalling request.
type latency struct {
	Count  int     `json:"count"`
	Errors int     `json:"errors"` // transport errors and non-2xx statuses
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// serverCounts are one server's counter deltas over the sessions' whole
// lives (per_server), or any servers' between two scrapes (delta).
type serverCounts struct {
	URL        string  `json:"url"`
	Started    float64 `json:"sessions_started"`
	Ended      float64 `json:"sessions_ended"`
	Underruns  float64 `json:"output_underruns_life"`
	LateFrames float64 `json:"output_late_frames_life"`
}

// offerURLOf returns the offer URL of a -url value: a base URL gets
// /api/offer, a URL with a path is used as it is.
func offerURLOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("-url %q: want an http(s) URL", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/api/offer"
	}
	return u.String(), nil
}

// runExternal runs the clients for each N against cfg.offerURL and writes
// one JSON line per N, then a summary, to out.
func runExternal(ctx context.Context, cfg externalConfig, out io.Writer) ([]externalResult, error) {
	if cfg.dialTimeout == 0 {
		cfg.dialTimeout = 30 * time.Second
	}
	if cfg.parallel <= 0 {
		cfg.parallel = 8
	}
	timer := &timingTransport{next: &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	}}
	defer timer.next.CloseIdleConnections()
	httpc := &http.Client{Transport: timer, Timeout: cfg.dialTimeout}
	scrapec := &http.Client{Timeout: 10 * time.Second}
	held := map[int]bool{}
	var results []externalResult
	for _, n := range cfg.counts {
		r, err := externalWindow(ctx, cfg, n, httpc, timer, scrapec)
		if err != nil {
			return results, err
		}
		held[n] = r.OK
		results = append(results, r)
		b, _ := json.Marshal(r)
		fmt.Fprintln(out, string(b))
	}
	fmt.Fprintf(out, `{"kind":"summary","target":%q,"largest_n_without_underruns":%d}`+"\n", cfg.offerURL, largestHeld(cfg.counts, held))
	return results, nil
}

// externalWindow measures one N.
func externalWindow(ctx context.Context, cfg externalConfig, n int, httpc *http.Client, timer *timingTransport, scrapec *http.Client) (externalResult, error) {
	r := externalResult{Kind: "external", Target: cfg.offerURL, N: n, Idle: cfg.idle, Scraped: len(cfg.scrape) > 0}
	var before []counters
	if r.Scraped {
		var err error
		if before, err = scrapeAll(ctx, scrapec, cfg.scrape); err != nil {
			return r, fmt.Errorf("scraping before the clients connect: %w", err)
		}
	}
	timer.reset()
	clients, connect, firstErr := dialMeasured(ctx, n, cfg.parallel, cfg.offerURL, cfg.idle, httpc, cfg.dialTimeout)
	r.Connected, r.ConnectFailed = len(clients), n-len(clients)
	if firstErr != nil {
		r.ConnectError = firstErr.Error()
	}
	r.ConnectP50MS, r.ConnectP99MS, r.ConnectMaxMS = ms(percentile(connect, 0.5)), ms(percentile(connect, 0.99)), ms(percentile(connect, 1))

	sleep(ctx, cfg.warmup)
	var windowStart []counters
	if r.Scraped {
		var err error
		if windowStart, err = scrapeAll(ctx, scrapec, cfg.scrape); err != nil {
			return r, fmt.Errorf("scraping at the window's start: %w", err)
		}
	}
	r.LoadAvg = loadAvg()
	in0, out0 := packetTotals(clients)
	each0 := packetsEach(clients)
	cpu0, steal0, t0 := cpuTime(), stealTime(), time.Now()
	gaps := watchGaps(packetCounters(clients))
	sleep(ctx, cfg.duration)
	g := gaps.stop()
	in1, out1 := packetTotals(clients)
	each1 := packetsEach(clients)
	cpu1, steal1, wall := cpuTime(), stealTime(), time.Since(t0).Seconds()
	r.WindowS = wall
	for i, c := range clients {
		rate := float64(each1[i]-each0[i]) / wall
		if i == 0 || rate < r.ClientInMin {
			r.ClientInMin = rate
		}
		select {
		case <-c.Closed():
			r.Dropped++
		default:
		}
	}
	if len(clients) > 0 {
		r.ClientInPPS = float64(in1-in0) / wall / float64(len(clients))
		r.ClientOutPPS = float64(out1-out0) / wall / float64(len(clients))
	}
	r.InGaps, r.InGapClients, r.InGapMaxMS, r.PollLateMS = g.gaps, g.clients, ms(g.max), ms(g.pollLate)
	r.ClientCPUPct = 100 * (cpu1 - cpu0).Seconds() / wall
	r.StealPct = 100 * (steal1 - steal0).Seconds() / wall
	if r.Scraped {
		windowEnd, err := scrapeAll(ctx, scrapec, cfg.scrape)
		if err != nil {
			return r, fmt.Errorf("scraping at the window's end: %w", err)
		}
		w, _ := delta(windowStart, windowEnd)
		r.Underruns, r.LateFrames = w.Underruns, w.LateFrames
	}
	closeClients(clients)
	r.Offer, r.Patch = timer.latency(http.MethodPost), timer.latency(http.MethodPatch)

	if r.Scraped {
		// The servers add a session's output counters when it ends: wait
		// until they have counted every connected session ended.
		start := time.Now()
		deadline := start.Add(cfg.settle)
		for {
			after, err := scrapeAll(ctx, scrapec, cfg.scrape)
			if err != nil {
				r.ScrapeError = err.Error()
			} else {
				r.ScrapeError = ""
				life, each := delta(before, after)
				r.LifeUnderruns, r.LifeLateFrames = life.Underruns, life.LateFrames
				r.Started, r.Ended, r.PerServer = life.Started, life.Ended, each
				if r.Settled = r.Ended >= float64(r.Connected); r.Settled {
					r.SettleS = time.Since(start).Seconds()
					break
				}
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			sleep(ctx, 250*time.Millisecond)
		}
	}
	r.OK = r.Connected == n && r.Dropped == 0 && r.Offer.Errors == 0 && (!r.Scraped || (r.Settled && r.Underruns == 0))
	return r, ctx.Err()
}

// delta returns the counters' change between two scrapes of every server:
// their total and each server's.
func delta(before, after []counters) (total serverCounts, each []serverCounts) {
	for i := range after {
		d := serverCounts{
			URL:        after[i].url,
			Started:    after[i].started - before[i].started,
			Ended:      after[i].ended - before[i].ended,
			Underruns:  after[i].underruns - before[i].underruns,
			LateFrames: after[i].lateFrames - before[i].lateFrames,
		}
		each = append(each, d)
		total.Started += d.Started
		total.Ended += d.Ended
		total.Underruns += d.Underruns
		total.LateFrames += d.LateFrames
	}
	return total, each
}

// dialMeasured connects n clients, parallel at a time, through httpc; it
// returns those that connected, each one's connect time (offer posted to
// data channel open), and the first error. Unlike dialClients, a client
// that fails does not stop the others: the failures are part of the
// result.
func dialMeasured(ctx context.Context, n, parallel int, offerURL string, idle bool, httpc *http.Client, timeout time.Duration) ([]*webrtctest.Client, []time.Duration, error) {
	var payloads [][]byte
	if !idle {
		var err error
		if payloads, err = webrtctest.EncodeTone(440, 8000, time.Second); err != nil {
			return nil, nil, err
		}
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		clients  []*webrtctest.Client
		times    []time.Duration
		firstErr error
	)
	sem := make(chan struct{}, parallel)
	for range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			c, err := webrtctest.Dial(dctx, webrtctest.Options{OfferURL: offerURL, HTTP: httpc, Payloads: payloads, CountOnly: true})
			if err == nil {
				if err = c.WaitOpen(dctx); err != nil {
					c.Close()
				}
			}
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			clients = append(clients, c)
			times = append(times, took)
		})
	}
	wg.Wait()
	return clients, times, firstErr
}

func packetTotals(clients []*webrtctest.Client) (in, out uint64) {
	for _, c := range clients {
		in += c.PacketsIn.Load()
		out += c.PacketsOut.Load()
	}
	return in, out
}

func packetsEach(clients []*webrtctest.Client) []uint64 {
	out := make([]uint64, len(clients))
	for i, c := range clients {
		out[i] = c.PacketsIn.Load()
	}
	return out
}

// gapStats is what watchGaps saw.
type gapStats struct {
	gaps     int           // stretches of gapThreshold or more without a packet
	clients  int           // clients with at least one
	max      time.Duration // the longest stretch
	pollLate time.Duration // the poller's worst lateness
}

// gapWatcher polls the clients' packet counters every gapPoll.
type gapWatcher struct {
	done chan struct{}
	res  chan gapStats
}

// watchGaps starts watching clients' inbound counters (one a client:
// packets, or frames) for stretches without a change, until stop. It
// reads the counters the clients keep anyway, so that it adds nothing to
// their packet path.
func watchGaps(clients []*atomic.Uint64) *gapWatcher {
	w := &gapWatcher{done: make(chan struct{}), res: make(chan gapStats, 1)}
	go func() { w.res <- pollGaps(clients, w.done) }()
	return w
}

// stop ends the watch and returns what it saw, counting the stretch each
// client is in at the end.
func (w *gapWatcher) stop() gapStats {
	close(w.done)
	return <-w.res
}

// packetCounters returns the clients' inbound packet counters, for
// watchGaps.
func packetCounters(clients []*webrtctest.Client) []*atomic.Uint64 {
	out := make([]*atomic.Uint64, len(clients))
	for i, c := range clients {
		out[i] = &c.PacketsIn
	}
	return out
}

func pollGaps(clients []*atomic.Uint64, done <-chan struct{}) gapStats {
	var st gapStats
	last := make([]uint64, len(clients))
	since := make([]time.Time, len(clients))
	gapped := make([]bool, len(clients))
	now := time.Now()
	for i, c := range clients {
		last[i], since[i] = c.Load(), now
	}
	note := func(i int, gap time.Duration) {
		st.max = max(st.max, gap)
		if gap >= gapThreshold {
			st.gaps++
			if !gapped[i] {
				gapped[i] = true
				st.clients++
			}
		}
	}
	t := time.NewTicker(gapPoll)
	defer t.Stop()
	prev := now
	for {
		select {
		case <-done:
			now := time.Now()
			for i := range clients {
				note(i, now.Sub(since[i]))
			}
			return st
		case <-t.C:
		}
		now := time.Now()
		st.pollLate = max(st.pollLate, now.Sub(prev)-gapPoll)
		prev = now
		for i, c := range clients {
			if p := c.Load(); p != last[i] {
				note(i, now.Sub(since[i]))
				last[i], since[i] = p, now
			}
		}
	}
}

// timingTransport times every request it carries, by method: from the
// request's start to the response's headers.
type timingTransport struct {
	next *http.Transport

	mu     sync.Mutex
	took   map[string][]time.Duration
	errors map[string]int
}

// RoundTrip implements http.RoundTripper.
func (t *timingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.took == nil {
		t.took, t.errors = map[string][]time.Duration{}, map[string]int{}
	}
	if err != nil || resp.StatusCode/100 != 2 {
		t.errors[req.Method]++
	}
	if err == nil {
		t.took[req.Method] = append(t.took[req.Method], d)
	}
	return resp, err
}

// reset forgets what was timed.
func (t *timingTransport) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.took, t.errors = nil, nil
}

// latency returns the distribution of method's requests since reset.
func (t *timingTransport) latency(method string) latency {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.took[method]
	return latency{Count: len(d), Errors: t.errors[method],
		P50MS: ms(percentile(d, 0.5)), P99MS: ms(percentile(d, 0.99)), MaxMS: ms(percentile(d, 1))}
}

// percentile returns the q-quantile of d (nearest rank; 0 for none). It
// sorts d.
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	k := int(math.Ceil(q*float64(len(d)))) - 1
	return d[min(max(k, 0), len(d)-1)]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// counters are one server's counters the external mode reads.
type counters struct {
	url                                   string
	underruns, lateFrames, started, ended float64
}

// scrapeAll scrapes every URL.
func scrapeAll(ctx context.Context, c *http.Client, urls []string) ([]counters, error) {
	out := make([]counters, 0, len(urls))
	var errs []error
	for _, u := range urls {
		cs, err := scrapeOne(ctx, c, u)
		if err != nil {
			errs = append(errs, err)
		}
		out = append(out, cs)
	}
	return out, errors.Join(errs...)
}

// scrapeOne reads u's counters.
func scrapeOne(ctx context.Context, c *http.Client, u string) (counters, error) {
	cs := counters{url: u}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return cs, fmt.Errorf("scraping %s: %w", u, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return cs, fmt.Errorf("scraping %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return cs, fmt.Errorf("scraping %s: %s", u, resp.Status)
	}
	fams, err := parseMetrics(io.LimitReader(resp.Body, maxScrapeBytes))
	if err != nil {
		return cs, fmt.Errorf("scraping %s: %w", u, err)
	}
	cs.underruns = counterSum(fams, metricUnderruns)
	cs.lateFrames = counterSum(fams, metricLateFrames)
	cs.started = counterSum(fams, metricStarted)
	cs.ended = counterSum(fams, metricEnded)
	return cs, nil
}

// parseMetrics parses the Prometheus text format.
func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing the metrics: %w", err)
	}
	return fams, nil
}

// counterSum sums a counter family over its label sets; 0 when absent.
func counterSum(fams map[string]*dto.MetricFamily, name string) float64 {
	f := fams[name]
	if f == nil || f.GetType() != dto.MetricType_COUNTER {
		return 0
	}
	var sum float64
	for _, m := range f.GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// splitURLs splits the -scrape list.
func splitURLs(list string) []string {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
