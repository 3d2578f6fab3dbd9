package webrtc

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// ICEPolicy bounds what a client may make the server do with ICE: how many
// remote candidates it may give, and which addresses the server will send
// connectivity checks (STUN binding requests) to. Every candidate the
// client gives is subject to it, in the offer's SDP as well as in trickled
// PATCH requests. The zero value is the safe default for a server on the
// open internet.
//
// The address rule: a candidate whose address is unspecified (0.0.0.0/8,
// ::), multicast, broadcast or reserved (240.0.0.0/4), or link-local
// (169.254.0.0/16, fe80::/10) is always dropped; loopback (127.0.0.0/8,
// ::1) is dropped unless AllowLoopback or [Options.IncludeLoopback] is
// set; private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7)
// are dropped unless AllowPrivate is set; host names other than mDNS
// names are dropped (the server would have to resolve them); UDP ports
// below 1024 and port 0 are dropped (no browser or NAT hands them out;
// they are the services a reflection probe aims at). A dropped candidate
// is not an error: the PATCH still succeeds, and the client's address is
// still learnt from the checks it sends (a peer-reflexive candidate, which
// no filter touches: the client can only make the server answer the
// address it sends from).
type ICEPolicy struct {
	// MaxCandidatesPerRequest bounds the candidates of one PATCH request,
	// or of one offer's SDP; a request with more is refused with a 400
	// (the client does not retry it) and none of its candidates is used.
	// Default: 64 (Chrome repeats each address for every m-line of the
	// offer: 4 addresses make 12 candidates); negative: no limit.
	MaxCandidatesPerRequest int
	// MaxCandidates bounds the distinct remote candidates of one session:
	// the offers' and the trickled ones together, over all its peer
	// connections (a restart does not start a new count, or a client
	// restarting in a loop would make the server check unbounded
	// addresses). Past it candidates are dropped, logged once per
	// session; the client is still reached from the address its own
	// checks come from. A browser gives a handful per connection.
	// Default: 128; negative: no limit.
	MaxCandidates int
	// AllowPrivate accepts candidates in private ranges. A server on the
	// public internet does not need them: a client behind NAT reaches it
	// from its public, server-reflexive address. A LAN deployment (server
	// and browsers on the same private network, no STUN) needs it, or the
	// server only learns the clients' addresses from their own checks.
	// Default: false, so a client cannot aim the server's checks at the
	// server's own internal network.
	AllowPrivate bool
	// AllowLoopback accepts loopback candidates. It is implied by
	// [Options.IncludeLoopback] (single-host tests, where the browser and
	// the load tests run on 127.0.0.1). Default: false.
	AllowLoopback bool
	// ResolveMDNS resolves the browser's *.local candidates over
	// multicast DNS (resolved addresses are not filtered). Chrome hides its
	// host addresses behind mDNS names unless the page has media
	// permission (tests start it with
	// --disable-features=WebRtcHideLocalIpsWithMdns); the browser is still
	// reached through its other candidates and its checks. Default: false,
	// *.local candidates are dropped and pion opens no mDNS socket.
	ResolveMDNS bool
}

// Defaults of [ICEPolicy].
const (
	defaultMaxCandidatesPerRequest = 64
	defaultMaxCandidates           = 128
)

// withDefaults fills the zero limits in; loopback says whether the server
// gathers loopback candidates itself (Options.IncludeLoopback).
func (p ICEPolicy) withDefaults(loopback bool) ICEPolicy {
	if p.MaxCandidatesPerRequest == 0 {
		p.MaxCandidatesPerRequest = defaultMaxCandidatesPerRequest
	}
	if p.MaxCandidates == 0 {
		p.MaxCandidates = defaultMaxCandidates
	}
	p.AllowLoopback = p.AllowLoopback || loopback
	return p
}

// verdict is what the policy decided about one remote candidate.
type verdict uint8

const (
	accepted verdict = iota
	malformed
	mdnsName
	hostName
	unspecifiedAddr
	multicastAddr
	reservedAddr
	linkLocalAddr
	loopbackAddr
	privateAddr
	badPort
	overCap // accepted, but the connection has MaxCandidates already
)

var verdictNames = [...]string{
	accepted:        "accepted",
	malformed:       "malformed",
	mdnsName:        "mDNS name (ResolveMDNS is off)",
	hostName:        "host name",
	unspecifiedAddr: "unspecified address",
	multicastAddr:   "multicast address",
	reservedAddr:    "broadcast or reserved address",
	linkLocalAddr:   "link-local address",
	loopbackAddr:    "loopback address (AllowLoopback is off)",
	privateAddr:     "private address (AllowPrivate is off)",
	badPort:         "port 0 or a UDP port below 1024",
	overCap:         "over MaxCandidates",
}

func (v verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// candidate is what the filter reads of a candidate attribute (RFC 8839
// §5.1): foundation component transport priority address port typ type...
type candidate struct {
	transport string // lower case
	address   string
	port      uint16
}

// key identifies a remote candidate for counting: pion treats the same
// transport, address and port as one candidate.
func (c candidate) key() string {
	return c.transport + " " + c.address + " " + strconv.Itoa(int(c.port))
}

// parseCandidate reads a candidate attribute with or without its
// "a=" and "candidate:" prefixes. It checks only what the filter needs;
// pion parses the rest.
func parseCandidate(s string) (candidate, bool) {
	s = strings.TrimPrefix(s, "a=")
	s, ok := strings.CutPrefix(s, "candidate:")
	if !ok {
		return candidate{}, false
	}
	var f [8]string
	n := 0
	for field := range strings.FieldsSeq(s) {
		f[n] = field
		if n++; n == len(f) {
			break
		}
	}
	if n < len(f) || f[6] != "typ" {
		return candidate{}, false
	}
	port, err := strconv.ParseUint(f[5], 10, 16)
	if err != nil {
		return candidate{}, false
	}
	return candidate{transport: strings.ToLower(f[2]), address: f[4], port: uint16(port)}, true
}

// Ranges the netip predicates do not name.
var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	reserved    = netip.MustParsePrefix("240.0.0.0/4") // with 255.255.255.255
	sharedNAT   = netip.MustParsePrefix("100.64.0.0/10")
)

// judge decides about one candidate attribute.
func (p *ICEPolicy) judge(s string) (candidate, verdict) {
	c, ok := parseCandidate(s)
	if !ok {
		return c, malformed
	}
	if c.port == 0 || (c.transport == "udp" && c.port < 1024) {
		return c, badPort
	}
	addr, err := netip.ParseAddr(c.address)
	if err != nil {
		if strings.HasSuffix(strings.ToLower(strings.TrimSuffix(c.address, ".")), ".local") {
			if p.ResolveMDNS {
				return c, accepted
			}
			return c, mdnsName
		}
		return c, hostName
	}
	return c, p.judgeAddr(addr.Unmap())
}

// judgeAddr applies the address rule of [ICEPolicy].
func (p *ICEPolicy) judgeAddr(a netip.Addr) verdict {
	switch {
	case a.IsUnspecified() || (a.Is4() && thisNetwork.Contains(a)):
		return unspecifiedAddr
	case a.IsMulticast():
		return multicastAddr
	case a.Is4() && reserved.Contains(a):
		return reservedAddr
	case a.IsLinkLocalUnicast():
		return linkLocalAddr
	case a.IsLoopback():
		if p.AllowLoopback {
			return accepted
		}
		return loopbackAddr
	case a.IsPrivate() || (a.Is4() && sharedNAT.Contains(a)):
		if p.AllowPrivate {
			return accepted
		}
		return privateAddr
	}
	return accepted
}

// remoteCandidates counts the distinct remote candidates one session
// accepted, against ICEPolicy.MaxCandidates.
type remoteCandidates struct {
	mu     sync.Mutex
	seen   map[string]struct{}
	warned bool // the cap was reported
}

// admit reports whether the accepted candidate c may be given to pion:
// true for one seen before or while the peer is under limit (negative:
// none). full is true the first time a candidate is refused for the cap.
func (r *remoteCandidates) admit(c candidate, limit int) (ok, full bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := c.key()
	if _, seen := r.seen[k]; seen {
		return true, false
	}
	if limit >= 0 && len(r.seen) >= limit {
		full, r.warned = !r.warned, true
		return false, full
	}
	if r.seen == nil {
		r.seen = map[string]struct{}{}
	}
	r.seen[k] = struct{}{}
	return true, false
}

// tooManyCandidates is the 400 of a request over MaxCandidatesPerRequest.
func tooManyCandidates(what string, n, limit int) error {
	return badRequest("%s carries %d candidates; the limit is %d per request", what, n, limit)
}

// filterOfferCandidates applies the policy to the candidate lines of an
// offer's SDP, counted in r: it returns the SDP without the candidates the
// policy drops (malformed ones too), and the number dropped by kind for
// the log. The SDP is returned unchanged (not copied) when nothing is
// dropped.
func (p *ICEPolicy) filterOfferCandidates(offer string, r *remoteCandidates) (string, map[verdict]int, error) {
	const prefix = "a=candidate:"
	if !strings.Contains(offer, prefix) {
		return offer, nil, nil
	}
	if p.MaxCandidatesPerRequest >= 0 {
		if n := strings.Count(offer, "\n"+prefix); n > p.MaxCandidatesPerRequest {
			return "", nil, tooManyCandidates("the offer", n, p.MaxCandidatesPerRequest)
		}
	}
	var (
		b       strings.Builder
		dropped map[verdict]int
		rest    = offer
		done    int // bytes of offer already judged and kept
	)
	for len(rest) > 0 {
		line, next, _ := strings.Cut(rest, "\n")
		start := len(offer) - len(rest)
		rest = next
		attr := strings.TrimSuffix(line, "\r")
		if !strings.HasPrefix(attr, prefix) {
			continue
		}
		c, v := p.judge(attr)
		if v == accepted {
			if ok, _ := r.admit(c, p.MaxCandidates); ok {
				continue
			}
			v = overCap
		}
		if dropped == nil {
			dropped = map[verdict]int{}
			b.Grow(len(offer))
		}
		dropped[v]++
		b.WriteString(offer[done:start])
		done = len(offer) - len(rest)
	}
	if dropped == nil {
		return offer, nil, nil
	}
	b.WriteString(offer[done:])
	return b.String(), dropped, nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// droppedSummary renders the dropped counts for a log line.
func droppedSummary(d map[verdict]int) string {
	var b strings.Builder
	for v := accepted; v <= overCap; v++ {
		if n := d[v]; n > 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d %s", n, v)
		}
	}
	return b.String()
}

// icePolicy returns the server's ICE policy with its defaults.
func (s *Server) icePolicy() ICEPolicy {
	return s.opts.ICE.withDefaults(s.opts.IncludeLoopback)
}
