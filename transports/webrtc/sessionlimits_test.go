package webrtc

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// nopFactory builds sessions whose pipeline is the session's input and
// output alone.
func nopFactory(_ context.Context, s *Session) (*pipeline.Task, error) {
	return pipeline.NewTask(pipeline.New(s.Input(), s.Output()), pipeline.TaskOptions{}), nil
}

// chromeOffer is a real browser offer: answering it builds a session and
// a peer connection, which never connects since no browser is behind it.
func chromeOffer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/offer-chrome.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// limitsOf are the session limits of opts after defaults, for comparison.
type limitsOf struct {
	MaxSessions, MaxPendingSessions int
	ConnectTimeout                  time.Duration
	PerIP                           IPLimits
	ForwardedHeader                 string
}

func TestSessionLimitsHaveSafeDefaultsThatHoldTheLoopbackLoad(t *testing.T) {
	d := (Options{}).withDefaults()
	got := limitsOf{d.MaxSessions, d.MaxPendingSessions, d.ConnectTimeout, d.PerIP, d.ForwardedHeader}
	want := limitsOf{500, 100, 20 * time.Second, IPLimits{MaxPendingSessions: 32, Burst: 20, MaxAddresses: 10000}, "X-Forwarded-For"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	// The load bench connects 100 streaming sessions from 127.0.0.1, 8 at a
	// time; the e2e tests a few at a time. Of the per-address limits only
	// the sessions connecting at once are bounded.
	if d.PerIP.MaxSessions != 0 || d.PerIP.Rate != 0 || d.MaxSessions < 100 || d.PerIP.MaxPendingSessions < 8 {
		t.Errorf("the defaults refuse the load bench's 100 sessions from one address: %+v", got)
	}
	if d := (Options{MaxSessions: -1, MaxPendingSessions: -1}).withDefaults(); d.MaxSessions > 0 || d.MaxPendingSessions > 0 {
		t.Errorf("negative limits are not 'no limit': %d, %d", d.MaxSessions, d.MaxPendingSessions)
	}
	if d := (Options{GatherTimeout: time.Minute}).withDefaults(); d.ConnectTimeout != 70*time.Second {
		t.Errorf("ConnectTimeout with a 1 min GatherTimeout = %v, want 70s", d.ConnectTimeout)
	}
}

// Row 6: 200 offers that never connect held 800 sockets and ~18 goroutines
// each for ~30 s, with no limit on sessions.
func TestOffersThatNeverConnectAreCappedAndEndedSoon(t *testing.T) {
	h := newHarness(t, Options{MaxPendingSessions: 3, ConnectTimeout: 3 * time.Second})
	offer := chromeOffer(t)
	for i := range 3 {
		if status, _, body := do(t, "POST", h.url("/api/offer"), offer); status != http.StatusOK {
			t.Fatalf("offer %d: %d %s", i, status, body)
		}
	}
	status, hdr, body := do(t, "POST", h.url("/api/offer"), offer)
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(body, "connecting") {
		t.Errorf("a 4th offer with 3 pending: %d Retry-After %q %s, want a 503 to retry", status, hdr.Get("Retry-After"), body)
	}
	if n := h.srv.SessionCount(); n != 3 {
		t.Errorf("%d sessions, want the 3 admitted", n)
	}
	h.mu.Lock()
	pending := append([]*Session(nil), h.sessions...)
	h.mu.Unlock()
	for _, s := range pending {
		select {
		case <-s.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a session that never connected was not ended 10 s after a 3 s ConnectTimeout")
		}
		if r := s.Reason(); !strings.Contains(r, "did not open") && !strings.Contains(r, "failed") {
			t.Errorf("a never-connected session ended because %q", r)
		}
	}
	// Their room is free again, and connected sessions are not pending.
	ctx := testContext(t, 30*time.Second)
	for range 4 {
		h.dial(ctx, webrtctest.Options{})
	}
	if status, _, body := do(t, "POST", h.url("/api/offer"), offer); status != http.StatusOK {
		t.Errorf("an offer with 4 connected sessions and MaxPendingSessions 3: %d %s", status, body)
	}
}

func TestMaxSessionsCountsSessionsStillConnecting(t *testing.T) {
	h := newHarness(t, Options{MaxSessions: 2})
	offer := chromeOffer(t)
	for range 2 {
		if status, _, body := do(t, "POST", h.url("/api/offer"), offer); status != http.StatusOK {
			t.Fatalf("offer: %d %s", status, body)
		}
	}
	status, hdr, _ := do(t, "POST", h.url("/api/offer"), offer)
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "2" {
		t.Errorf("an offer at MaxSessions: %d Retry-After %q, want 503 and 2", status, hdr.Get("Retry-After"))
	}
}

// trustLoopback makes the harness's requests, all from 127.0.0.1, count
// against the X-Forwarded-For they carry.
var trustLoopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func TestPerIPRateRefusesWithRetryAfterAndCountsEachClientApart(t *testing.T) {
	h := newHarness(t, Options{PerIP: IPLimits{Rate: 1, Burst: 3}, TrustedProxies: trustLoopback})
	from := func(ip string) (int, string) {
		status, hdr, _ := do(t, "POST", h.url("/start"), "{}", "X-Forwarded-For", ip)
		return status, hdr.Get("Retry-After")
	}
	for i := range 3 {
		if status, _ := from("198.51.100.7"); status != http.StatusOK {
			t.Fatalf("request %d within the burst: %d", i, status)
		}
	}
	if status, retry := from("198.51.100.7"); status != http.StatusServiceUnavailable || retry != "1" {
		t.Errorf("past the burst: %d Retry-After %q, want 503 and 1 (the client retries)", status, retry)
	}
	if status, _ := from("198.51.100.8"); status != http.StatusOK {
		t.Errorf("another client was refused: %d", status)
	}
	// IPv6 clients are counted by their /64.
	for i := range 3 {
		from("2001:db8:1:2::" + string(rune('a'+i)))
	}
	if status, _ := from("2001:db8:1:2::ffff"); status != http.StatusServiceUnavailable {
		t.Errorf("a 4th address of the same /64: %d, want 503", status)
	}
	time.Sleep(1100 * time.Millisecond) // one request's worth at 1/s
	if status, _ := from("198.51.100.7"); status != http.StatusOK {
		t.Errorf("after the refill: %d", status)
	}
}

func TestForwardedHeadersAreIgnoredFromUntrustedPeers(t *testing.T) {
	h := newHarness(t, Options{PerIP: IPLimits{Rate: 0.1, Burst: 2}})
	for i, ip := range []string{"198.51.100.1", "198.51.100.2"} {
		if status, _, _ := do(t, "POST", h.url("/start"), "{}", "X-Forwarded-For", ip); status != http.StatusOK {
			t.Fatalf("request %d: %d", i, status)
		}
	}
	if status, _, _ := do(t, "POST", h.url("/start"), "{}", "X-Forwarded-For", "198.51.100.3"); status != http.StatusServiceUnavailable {
		t.Errorf("a forged X-Forwarded-For escaped the limit of 127.0.0.1: %d", status)
	}
}

func TestPerIPMaxSessionsRefusesWithRetryAfterUntilOneEnds(t *testing.T) {
	h := newHarness(t, Options{PerIP: IPLimits{MaxSessions: 1}, TrustedProxies: trustLoopback})
	ctx := testContext(t, 30*time.Second)
	// testclient posts from 127.0.0.1 with no forwarded header: the proxy's
	// own address is the client.
	c := h.dialUnmanaged(ctx, webrtctest.Options{})
	_, err := webrtctest.Dial(ctx, webrtctest.Options{OfferURL: h.url("/api/offer")})
	var se *webrtctest.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable {
		t.Fatalf("a second session from one address: %v, want a 503", err)
	}
	offer := chromeOffer(t)
	if status, _, body := do(t, "POST", h.url("/api/offer"), offer, "X-Forwarded-For", "203.0.113.9"); status != http.StatusOK {
		t.Errorf("a session from another address: %d %s", status, body)
	}
	s, _, _ := h.session(c)
	c.Close()
	<-s.Done()
	h.dial(ctx, webrtctest.Options{})
}

func TestIPTableForgetsTheLeastRecentIdleAddressAndKeepsThoseWithSessions(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tab := newIPTable(IPLimits{Rate: 1, Burst: 1, MaxAddresses: 2}.withDefaults())
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")
	ea := tab.entry(a, t0)
	tab.claim(ea) // a has a live session
	if ok, _ := tab.allow(ea, t0); !ok {
		t.Fatal("a's first request was refused")
	}
	tab.entry(b, t0)
	tab.entry(c, t0) // full: b, the only idle one, goes
	if _, ok := tab.byAddr[b]; ok {
		t.Error("the idle address was kept past MaxAddresses")
	}
	if tab.byAddr[a] != ea {
		t.Fatal("an address with a live session was forgotten")
	}
	if ok, wait := tab.allow(ea, t0.Add(500*time.Millisecond)); ok || wait != 500*time.Millisecond {
		t.Errorf("a's second request within 1/Rate: allowed %v, wait %v; want refused, 500ms", ok, wait)
	}
	tab.release(ea)
	tab.entry(b, t0) // c is older than a now
	if _, ok := tab.byAddr[c]; ok {
		t.Error("c, seen before a was released, should have gone first")
	}
	if tab.byAddr[a] != ea {
		t.Error("a, released last, was forgotten first")
	}
}

func TestPerIPLimitsReadTheForwardedHeaderWhenTheOperatorNamesIt(t *testing.T) {
	h := newHarness(t, Options{PerIP: IPLimits{Rate: 0.1, Burst: 1}, TrustedProxies: trustLoopback, ForwardedHeader: HeaderForwarded})
	from := func(fwd string) int {
		status, _, _ := do(t, "POST", h.url("/start"), "{}", "Forwarded", fwd, "X-Forwarded-For", "192.0.2.99")
		return status
	}
	if s := from(`for=198.51.100.1;proto=https`); s != http.StatusOK {
		t.Fatalf("first request: %d", s)
	}
	if s := from(`for="198.51.100.1:4711"`); s != http.StatusServiceUnavailable {
		t.Errorf("the same client again (another port): %d, want 503", s)
	}
	if s := from(`for="[2001:db8::1]"`); s != http.StatusOK {
		t.Errorf("another client: %d (X-Forwarded-For, not the operator's header, must not count)", s)
	}
}
