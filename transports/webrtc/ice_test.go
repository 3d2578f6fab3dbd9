package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pion "github.com/pion/webrtc/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

func nopFactoryForOptions(context.Context, *Session) (*pipeline.Task, error) {
	return nil, errors.New("unused")
}

func hostCandidate(addr string, port int) string {
	return fmt.Sprintf("candidate:1 1 udp 2122260223 %s %d typ host generation 0", addr, port)
}

func TestICEPolicyDecidesByAddress(t *testing.T) {
	def := ICEPolicy{}.withDefaults(false)
	lan := ICEPolicy{AllowPrivate: true}.withDefaults(false)
	loop := ICEPolicy{}.withDefaults(true) // Options.IncludeLoopback
	mdns := ICEPolicy{ResolveMDNS: true}.withDefaults(false)
	for _, c := range []struct {
		cand                string
		def, lan, loop, mdn verdict
	}{
		{hostCandidate("203.0.113.7", 50000), accepted, accepted, accepted, accepted},
		{"a=" + hostCandidate("2001:db8::1", 50000), accepted, accepted, accepted, accepted},
		{"candidate:2 1 TCP 1518280447 198.51.100.1 9 typ host tcptype active", accepted, accepted, accepted, accepted},
		{hostCandidate("10.1.2.3", 50000), privateAddr, accepted, privateAddr, privateAddr},
		{hostCandidate("172.16.0.1", 50000), privateAddr, accepted, privateAddr, privateAddr},
		{hostCandidate("192.168.1.20", 50000), privateAddr, accepted, privateAddr, privateAddr},
		{hostCandidate("100.64.0.9", 50000), privateAddr, accepted, privateAddr, privateAddr},
		{hostCandidate("fd00::2", 50000), privateAddr, accepted, privateAddr, privateAddr},
		{hostCandidate("::ffff:10.0.0.1", 50000), privateAddr, accepted, privateAddr, privateAddr},
		{hostCandidate("127.0.0.1", 50000), loopbackAddr, loopbackAddr, accepted, loopbackAddr},
		{hostCandidate("127.9.9.9", 50000), loopbackAddr, loopbackAddr, accepted, loopbackAddr},
		{hostCandidate("::1", 50000), loopbackAddr, loopbackAddr, accepted, loopbackAddr},
		{hostCandidate("0.0.0.0", 50000), unspecifiedAddr, unspecifiedAddr, unspecifiedAddr, unspecifiedAddr},
		{hostCandidate("0.1.2.3", 50000), unspecifiedAddr, unspecifiedAddr, unspecifiedAddr, unspecifiedAddr},
		{hostCandidate("::", 50000), unspecifiedAddr, unspecifiedAddr, unspecifiedAddr, unspecifiedAddr},
		{hostCandidate("224.0.0.251", 5353), multicastAddr, multicastAddr, multicastAddr, multicastAddr},
		{hostCandidate("ff02::1", 50000), multicastAddr, multicastAddr, multicastAddr, multicastAddr},
		{hostCandidate("255.255.255.255", 50000), reservedAddr, reservedAddr, reservedAddr, reservedAddr},
		{hostCandidate("240.0.0.1", 50000), reservedAddr, reservedAddr, reservedAddr, reservedAddr},
		{hostCandidate("169.254.10.10", 50000), linkLocalAddr, linkLocalAddr, linkLocalAddr, linkLocalAddr},
		{hostCandidate("fe80::1%eth0", 50000), linkLocalAddr, linkLocalAddr, linkLocalAddr, linkLocalAddr},
		{hostCandidate("2f1e6c4c-1b5d-4a7e-9c0e-3f2f8a9d1c11.local", 50000), mdnsName, mdnsName, mdnsName, accepted},
		{hostCandidate("Host.LOCAL.", 50000), mdnsName, mdnsName, mdnsName, accepted},
		{hostCandidate("example.com", 50000), hostName, hostName, hostName, hostName},
		{hostCandidate("203.0.113.7", 53), badPort, badPort, badPort, badPort},
		{hostCandidate("203.0.113.7", 0), badPort, badPort, badPort, badPort},
		{hostCandidate("203.0.113.7", 70000), malformed, malformed, malformed, malformed},
		{"candidate:garbage", malformed, malformed, malformed, malformed},
		{"candidate:1 1 udp 1 203.0.113.7 50000 host", malformed, malformed, malformed, malformed},
		{"", malformed, malformed, malformed, malformed},
	} {
		got := [4]verdict{}
		for i, p := range []ICEPolicy{def, lan, loop, mdns} {
			_, got[i] = p.judge(c.cand)
		}
		want := [4]verdict{c.def, c.lan, c.loop, c.mdn}
		if got != want {
			t.Errorf("%q: default, AllowPrivate, IncludeLoopback, ResolveMDNS = %v, want %v", c.cand, got, want)
		}
	}
}

// patchBody is a PATCH of the candidates cands for pcID, on mid 0.
func patchBody(pcID string, cands []string) string {
	type cand struct {
		Candidate string `json:"candidate"`
		SDPMid    string `json:"sdp_mid"`
		Index     int    `json:"sdp_mline_index"`
	}
	body := struct {
		PCID       string `json:"pc_id"`
		Candidates []cand `json:"candidates"`
	}{PCID: pcID}
	for _, c := range cands {
		body.Candidates = append(body.Candidates, cand{Candidate: c, SDPMid: "0"})
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// loopbackCandidates returns n distinct candidates on 127.0.0.0/8, which
// only loopback traffic can reach.
func loopbackCandidates(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		k := from + i
		out[i] = hostCandidate(fmt.Sprintf("127.0.%d.%d", 1+k/200, 1+k%200), 40000+k)
	}
	return out
}

// remoteCandidateAddrs returns the ip:port of the remote candidates pion
// has for the session's current peer connection, peer-reflexive ones
// (learnt from the client's checks) left out.
//
// pion's GetStats reads a field that its close writes without a lock
// (PeerConnection.statsGetter in pion/webrtc v4.2.26), so the race
// detector flags a session that ends on pion's goroutine after a test read
// its stats. The first read therefore arranges for the test to close that
// peer connection itself, on the test's goroutine, before the harness ends
// the session: the write then follows the reads, and pion's later closes
// return at once.
func remoteCandidateAddrs(t *testing.T, s *Session) []string {
	t.Helper()
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if _, seen := statsRead.LoadOrStore(p.pc, true); !seen {
		t.Cleanup(func() {
			_ = p.pc.Close()
			statsRead.Delete(p.pc)
		})
	}
	var out []string
	for _, st := range p.pc.GetStats() {
		if c, ok := st.(pion.ICECandidateStats); ok && c.Type == pion.StatsTypeRemoteCandidate && c.CandidateType != pion.ICECandidateTypePrflx {
			out = append(out, fmt.Sprintf("%s:%d", c.IP, c.Port))
		}
	}
	slices.Sort(out)
	return out
}

// statsRead holds the peer connections whose stats a test has read.
var statsRead sync.Map

// Row 5 of issue 17: one PATCH with 2000 host candidates made the server
// send 16,000 STUN binding requests in 5 s. A request over
// MaxCandidatesPerRequest is refused whole.
func TestAPatchOverThePerRequestLimitIsRefusedWhole(t *testing.T) {
	h := newHarness(t, Options{IncludeLoopback: true})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{NoTrickle: true})
	s, _, _ := h.session(c)
	seen := func() int {
		s.remote.mu.Lock()
		defer s.remote.mu.Unlock()
		return len(s.remote.seen)
	}
	before, fromOffer := seen(), remoteCandidateAddrs(t, s) // the client's offer carries its own
	status, _, resp := do(t, "PATCH", h.url("/api/offer"), patchBody(c.PCID(), loopbackCandidates(0, 2000)))
	if status != 400 || !strings.Contains(resp, "2000 candidates") || !strings.Contains(resp, "limit is 64") {
		t.Fatalf("PATCH of 2000 candidates: %d %s, want a 400 naming the count and the limit", status, resp)
	}
	if n := seen(); n != before {
		t.Errorf("%d candidates of the refused request were kept", n-before)
	}
	time.Sleep(100 * time.Millisecond) // pion adds candidates on its own goroutine
	if diff := cmp.Diff(fromOffer, remoteCandidateAddrs(t, s)); diff != "" {
		t.Errorf("pion's remote candidates changed with a refused request (-before +after):\n%s", diff)
	}
}

// Row 5 of issue 17: candidates accumulate across PATCHes up to
// MaxCandidates per session; the rest are dropped, logged once.
func TestRemoteCandidatesOfAConnectionAreCapped(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	h := newHarness(t, Options{IncludeLoopback: true, Logger: zap.New(core)})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{NoTrickle: true})
	s, _, _ := h.session(c)
	for i := range 4 { // 4 × 60 distinct candidates, each request under 64
		status, _, resp := do(t, "PATCH", h.url("/api/offer"), patchBody(c.PCID(), loopbackCandidates(60*i, 60)))
		if status != 200 {
			t.Fatalf("PATCH %d: %d %s", i, status, resp)
		}
	}
	// The same candidates again are not new ones.
	if status, _, resp := do(t, "PATCH", h.url("/api/offer"), patchBody(c.PCID(), loopbackCandidates(0, 60))); status != 200 {
		t.Fatalf("repeated PATCH: %d %s", status, resp)
	}
	eventually(t, 5*time.Second, "pion took the candidates", func() bool { return len(remoteCandidateAddrs(t, s)) >= 128 })
	if got := len(remoteCandidateAddrs(t, s)); got != 128 {
		t.Errorf("pion has %d remote candidates after 240 were trickled, want MaxCandidates = 128", got)
	}
	if n := logs.FilterMessage("the client's candidates reached the session's limit; dropping the rest").Len(); n != 1 {
		t.Errorf("the limit was logged %d times, want once", n)
	}
	readyRoundTrip(t, ctx, c, "capped01")
}

// offerWithCandidates is the recorded Chrome offer with cands added to its
// first media section.
func offerWithCandidates(t *testing.T, cands []string) string {
	t.Helper()
	body, err := os.ReadFile("testdata/offer-chrome.json")
	if err != nil {
		t.Fatal(err)
	}
	var offer map[string]any
	if err := json.Unmarshal(body, &offer); err != nil {
		t.Fatal(err)
	}
	sdp := offer["sdp"].(string)
	var lines strings.Builder
	for _, c := range cands {
		lines.WriteString("a=" + c + "\r\n")
	}
	i := strings.Index(sdp, "a=mid:0\r\n")
	if i < 0 {
		t.Fatal("the recorded offer has no a=mid:0")
	}
	i += len("a=mid:0\r\n")
	offer["sdp"] = sdp[:i] + lines.String() + sdp[i:]
	offer["pc_id"] = nil
	b, _ := json.Marshal(offer)
	return string(b)
}

// Row 5 of issue 17: the address rule applies to the candidates of the
// offer's SDP as well as to trickled ones; refused addresses never reach
// pion, mDNS names included.
func TestTheAddressRuleAppliesToOfferedAndTrickledCandidates(t *testing.T) {
	h := newHarness(t, Options{})
	refused := []string{
		hostCandidate("10.0.0.1", 50000),
		hostCandidate("192.168.0.2", 50000),
		hostCandidate("127.0.0.1", 50000),
		hostCandidate("0.0.0.0", 50000),
		hostCandidate("224.0.0.251", 50000),
		hostCandidate("169.254.1.1", 50000),
		hostCandidate("0c2b4f1e-5f8e-4b5e-9d3c-1a2b3c4d5e6f.local", 50000),
		hostCandidate("example.com", 50000),
		hostCandidate("203.0.113.9", 53),
	}
	offered := append([]string{hostCandidate("203.0.113.7", 50000)}, refused...)
	status, _, resp := do(t, "POST", h.url("/api/offer"), offerWithCandidates(t, offered))
	if status != 200 {
		t.Fatalf("offer: %d %s", status, resp)
	}
	var ans answerBody
	if err := json.Unmarshal([]byte(resp), &ans); err != nil {
		t.Fatal(err)
	}
	s, ok := h.srv.Session(ans.PCID)
	if !ok {
		t.Fatal("no session for the answer's pc_id")
	}
	trickled := append([]string{hostCandidate("198.51.100.3", 50001)}, refused...)
	for i := range trickled { // distinct ports: not the offer's candidates again
		trickled[i] = strings.Replace(trickled[i], " 50000 ", " 50002 ", 1)
	}
	if status, _, resp := do(t, "PATCH", h.url("/api/offer"), patchBody(ans.PCID, trickled)); status != 200 {
		t.Fatalf("PATCH: %d %s, want 200 (dropped candidates are not an error)", status, resp)
	}
	want := []string{"198.51.100.3:50001", "203.0.113.7:50000"}
	eventually(t, 5*time.Second, "pion took the trickled candidate", func() bool { return len(remoteCandidateAddrs(t, s)) >= 2 })
	if diff := cmp.Diff(want, remoteCandidateAddrs(t, s)); diff != "" {
		t.Errorf("pion's remote candidates (-want +got):\n%s", diff)
	}
}

func TestTooManyCandidatesInAnOfferAreRefused(t *testing.T) {
	h := newHarness(t, Options{})
	var cands []string
	for i := range 65 {
		cands = append(cands, hostCandidate("203.0.113.7", 40000+i))
	}
	status, _, resp := do(t, "POST", h.url("/api/offer"), offerWithCandidates(t, cands))
	if status != 400 || !strings.Contains(resp, "65 candidates") {
		t.Fatalf("offer with 65 candidates: %d %s, want a 400 naming the count", status, resp)
	}
}

// Row 11 of issue 17: after a legitimate restart, offers reusing the
// session's first pc_id took the live session over. Only the current
// pc_id leads to the session now: an old one is an unknown pc_id (a new
// connection, its own session), and a PATCH with it is a 404.
func TestOnlyTheCurrentPCIDMayRestartOrRenegotiate(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 30*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, _ := h.session(c)
	oldID := c.PCID()
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	current := c.PCID()
	for _, restart := range []bool{true, false} {
		body, err := os.ReadFile("testdata/offer-chrome.json")
		if err != nil {
			t.Fatal(err)
		}
		var offer map[string]any
		_ = json.Unmarshal(body, &offer)
		offer["pc_id"], offer["restart_pc"] = oldID, restart
		b, _ := json.Marshal(offer)
		status, _, resp := do(t, "POST", h.url("/api/offer"), string(b))
		if status == 200 {
			var ans answerBody
			_ = json.Unmarshal([]byte(resp), &ans)
			if other, _ := h.srv.Session(ans.PCID); other == s {
				t.Errorf("restart_pc:%v with the retired pc_id was answered on the live session", restart)
			}
		}
		if s.PCID() != current {
			t.Fatalf("restart_pc:%v with the retired pc_id %s replaced the session's connection: now %s, was %s",
				restart, oldID, s.PCID(), current)
		}
	}
	if got, ok := h.srv.Session(oldID); ok && got == s {
		t.Error("the retired pc_id still leads to the session")
	}
	if status, _, _ := do(t, "PATCH", h.url("/api/offer"), patchBody(oldID, nil)); status != 404 {
		t.Errorf("PATCH with the retired pc_id: %d, want 404", status)
	}
	readyRoundTrip(t, ctx, c, "current1")
}

func TestRestartAndRenegotiateRefuseAPCIDThatIsNotCurrent(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	s, _, _ := h.session(c)
	body, _ := os.ReadFile("testdata/offer-chrome.json")
	var offer offerRequest
	_ = json.Unmarshal(body, &offer)
	// What a request that looked the session up by a pc_id a restart has
	// just retired reaches.
	_, err := s.renegotiate(ctx, offer.SDP, "retired-pc-id")
	if err == nil || !strings.Contains(err.Error(), "not the session's current peer connection") {
		t.Errorf("renegotiate with a retired pc_id: %v", err)
	}
	current := s.PCID()
	_, err = s.restart(ctx, offer.SDP, "retired-pc-id")
	if err == nil || !strings.Contains(err.Error(), "not the session's current peer connection") {
		t.Errorf("restart with a retired pc_id: %v", err)
	}
	if s.PCID() != current {
		t.Errorf("the refused restart replaced the connection")
	}
}

func TestOptionsConfigureTheICEPolicyAndInboundLimits(t *testing.T) {
	srv, err := NewServer(Options{
		NewPipeline: nopFactoryForOptions,
		ICE:         ICEPolicy{MaxCandidatesPerRequest: 3, AllowPrivate: true},
		Inbound:     transports.InboundLimits{MessagesPerSecond: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	got := srv.icePolicy()
	want := ICEPolicy{MaxCandidatesPerRequest: 3, MaxCandidates: 128, AllowPrivate: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ICE policy (-want +got):\n%s", diff)
	}
	lim := srv.newLimiter(time.Now()).Limits()
	if lim.MessagesPerSecond != 5 || lim.MessageBurst != 10 || lim.ByteBurst != 1<<20 {
		t.Errorf("inbound limits %+v: want 5/s, a burst of 10, the default bytes", lim)
	}
}
