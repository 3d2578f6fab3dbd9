package webrtc

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// clientFrom returns an HTTP client whose connections come from the
// loopback address local (127.0.0.x: every one of them is usable here),
// so the server sees another client address.
func clientFrom(t *testing.T, local string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// post sends a JSON body with c and returns the status and the body.
func post(t *testing.T, c *http.Client, url, body string) (int, string) {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// restartBody is an offer that replaces the peer connection pcID.
func restartBody(t *testing.T, offer, pcID string) string {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal([]byte(offer), &o); err != nil {
		t.Fatal(err)
	}
	o["pc_id"], o["restart_pc"] = pcID, true
	b, _ := json.Marshal(o)
	return string(b)
}

// pcIDOf returns the pc_id of an answer.
func pcIDOf(t *testing.T, answer string) string {
	t.Helper()
	var a answerBody
	if err := json.Unmarshal([]byte(answer), &a); err != nil || a.PCID == "" {
		t.Fatalf("not an answer: %s", answer)
	}
	return a.PCID
}

// Row 2 of issue 26: 200 offers that never connect, from one address, made
// every new session from anyone a 503 for 20 s. At the defaults one
// address holds at most IPLimits.MaxPendingSessions of the connecting
// table, and a client elsewhere still connects at once.
func TestAnAddressFloodingOffersDoesNotLockOthersOut(t *testing.T) {
	h := newHarness(t, Options{Logger: nopLogger()})
	offer := chromeOffer(t)
	attacker := clientFrom(t, "127.0.0.2")
	var admitted, refused atomic.Int32
	var wg sync.WaitGroup
	next := make(chan struct{})
	go func() {
		defer close(next)
		for range 200 {
			next <- struct{}{}
		}
	}()
	for range 8 {
		wg.Go(func() {
			for range next {
				switch status, body := post(t, attacker, h.url("/api/offer"), offer); status {
				case http.StatusOK:
					admitted.Add(1)
				case http.StatusServiceUnavailable:
					refused.Add(1)
				default:
					t.Errorf("an attacker's offer: %d %s", status, body)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("of 200 never-connecting offers from 127.0.0.2: %d admitted, %d refused", admitted.Load(), refused.Load())
	if n := admitted.Load(); n > 32 {
		t.Errorf("one address has %d sessions connecting, over the default 32", n)
	}
	ctx := testContext(t, 10*time.Second)
	start := time.Now()
	h.dial(ctx, webrtctest.Options{}) // from 127.0.0.1
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a client from 127.0.0.1 took %v to connect during the flood, want under 3 s", d)
	}
}

// Row 2 of issue 26, the table full of one address's sessions (its own
// limit lifted): a newcomer from another address takes the place of that
// address's oldest pending session; the address holding the most cannot
// evict its own.
func TestAFullConnectingTableEvictsTheOldestOfTheAddressHoldingMost(t *testing.T) {
	h := newHarness(t, Options{Logger: nopLogger(), MaxPendingSessions: 6, PerIP: IPLimits{MaxPendingSessions: -1}})
	offer := chromeOffer(t)
	attacker := clientFrom(t, "127.0.0.2")
	for i := range 6 {
		if status, body := post(t, attacker, h.url("/api/offer"), offer); status != http.StatusOK {
			t.Fatalf("attacker's offer %d: %d %s", i, status, body)
		}
	}
	if status, body := post(t, attacker, h.url("/api/offer"), offer); status != http.StatusServiceUnavailable {
		t.Errorf("a 7th offer from the address that holds the table: %d %s, want a 503", status, body)
	}
	h.mu.Lock()
	oldest := h.sessions[0]
	h.mu.Unlock()
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{}) // from 127.0.0.1
	select {
	case <-oldest.Done():
	case <-ctx.Done():
		t.Fatal("the oldest pending session of 127.0.0.2 was not ended")
	}
	if r := oldest.Reason(); !strings.Contains(r, "evicted") {
		t.Errorf("the oldest pending session ended because %q, want an eviction", r)
	}
	if _, ok := h.srv.Session(c.PCID()); !ok {
		t.Error("the newcomer's session is gone")
	}
	if n := h.srv.SessionCount(); n != 6 {
		t.Errorf("%d sessions, want the 5 pending and the newcomer", n)
	}
}

// Row 2 of issue 26: restart_pc re-armed the connect deadline (a session
// that never connected was alive at 31 s). The deadline counts from the
// session's first offer, restarts included.
func TestRestartsDoNotExtendANeverConnectedSessionPastItsDeadline(t *testing.T) {
	const timeout = 2 * time.Second
	h := newHarness(t, Options{ConnectTimeout: timeout})
	offer := chromeOffer(t)
	start := time.Now()
	status, _, answer := do(t, "POST", h.url("/api/offer"), offer)
	if status != http.StatusOK {
		t.Fatalf("offer: %d %s", status, answer)
	}
	pcID := pcIDOf(t, answer)
	s, ok := h.srv.Session(pcID)
	if !ok {
		t.Fatal("no session")
	}
	restarts := 0
	for s.ctx.Err() == nil && time.Since(start) < 3*timeout {
		time.Sleep(250 * time.Millisecond)
		status, _, answer := do(t, "POST", h.url("/api/offer"), restartBody(t, offer, pcID))
		if status != http.StatusOK {
			break // the session ended under the restart
		}
		if next := pcIDOf(t, answer); next != pcID {
			if _, same := h.srv.Session(next); !same || s.PCID() != next {
				break // the pc_id was unknown by then: a new session
			}
			pcID = next
			restarts++
		}
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session was not torn down")
	}
	lived := time.Since(start)
	t.Logf("%d restarts; the session ended after %v because %q", restarts, lived, s.Reason())
	if restarts < 3 {
		t.Fatalf("only %d restarts: not a restart loop", restarts)
	}
	if !strings.Contains(s.Reason(), "did not open") {
		t.Errorf("the session ended because %q, want its connect deadline", s.Reason())
	}
	if lived > timeout+2*time.Second {
		t.Errorf("a never-connected session restarting every 250 ms lived %v with ConnectTimeout %v", lived, timeout)
	}
}

// Row 2 of issue 26: each restart started a new candidate budget (1,024
// STUN packets per restart, restarts unlimited). The budget is the
// session's.
func TestCandidatesOverRestartsStayWithinOneBudget(t *testing.T) {
	h := newHarness(t, Options{IncludeLoopback: true, ICE: ICEPolicy{MaxCandidates: 10}, Logger: nopLogger()})
	offer := chromeOffer(t)
	status, _, answer := do(t, "POST", h.url("/api/offer"), offer)
	if status != http.StatusOK {
		t.Fatalf("offer: %d %s", status, answer)
	}
	pcID := pcIDOf(t, answer)
	s, _ := h.srv.Session(pcID)
	given := 0
	for i := range 4 {
		if status, _, resp := do(t, "PATCH", h.url("/api/offer"), patchBody(pcID, loopbackCandidates(i*10, 10))); status != http.StatusOK {
			t.Fatalf("PATCH %d: %d %s", i, status, resp)
		}
		given += 10
		status, _, answer := do(t, "POST", h.url("/api/offer"), restartBody(t, offer, pcID))
		if status != http.StatusOK {
			t.Fatalf("restart %d: %d %s", i, status, answer)
		}
		pcID = pcIDOf(t, answer)
	}
	// What pion was given, over every peer connection of the session.
	s.remote.mu.Lock()
	n := len(s.remote.seen)
	s.remote.mu.Unlock()
	if n > 10 {
		t.Errorf("%d of the %d candidates given over 4 restarts were used, want at most the session's 10", n, given)
	}
	h.srv.mu.Lock()
	_, pending := h.srv.pending[s]
	h.srv.mu.Unlock()
	if !pending {
		t.Error("a session whose channel never opened is not counted as connecting")
	}
}

// The defaults admit 100 sessions from one address opened at 10 a second
// (the load bench holds 100 from 127.0.0.1) even when each takes 2 s to
// connect, five times what a browser on a loaded machine takes: at most
// 20 of them are connecting at once. The connections are modelled (a
// session is marked connected 2 s after its answer, as its channel's
// opening does), so that the machine's speed under the race detector does
// not decide the result.
func TestOneAddressOpening100SessionsAt10PerSecondIsAdmitted(t *testing.T) {
	h := newHarness(t, Options{Logger: nopLogger()})
	offer := chromeOffer(t)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	var refused atomic.Int32
	for range 100 {
		<-tick.C
		status, _, body := do(t, "POST", h.url("/api/offer"), offer)
		if status != http.StatusOK {
			refused.Add(1)
			t.Logf("refused: %d %s", status, body)
			continue
		}
		s, ok := h.srv.Session(pcIDOf(t, body))
		if !ok {
			t.Fatal("no session for the answer")
		}
		wg.Go(func() {
			time.Sleep(2 * time.Second)
			if !s.connected.Swap(true) {
				h.srv.connected(s)
			}
		})
	}
	if n := refused.Load(); n > 0 {
		t.Errorf("%d of 100 sessions from one address at 10/s were refused at the defaults", n)
	}
}
