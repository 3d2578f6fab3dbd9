package webrtc

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzCandidateFilter feeds candidate attributes from outside (a PATCH's
// candidate or an offer's a=candidate line) to the ICE policy. It never
// panics; what it accepts has a port the rule allows and an address that
// is an IP the rule allows (or an mDNS name only when ResolveMDNS is on);
// a policy allowing more never refuses what a stricter one accepts; and
// the filtered offer keeps exactly the accepted lines.
func FuzzCandidateFilter(f *testing.F) {
	for _, s := range []string{
		hostCandidate("203.0.113.7", 50000),
		hostCandidate("10.0.0.1", 50000),
		hostCandidate("127.0.0.1", 50000),
		hostCandidate("::ffff:127.0.0.1", 50000),
		hostCandidate("fe80::1%eth0", 50000),
		hostCandidate("224.0.0.251", 5353),
		hostCandidate("x.local", 50000),
		hostCandidate("203.0.113.7", 53),
		"candidate:2 1 TCP 1518280447 198.51.100.1 9 typ host tcptype active",
		"candidate:3 1 udp 1686052607 198.51.100.2 61000 typ srflx raddr 10.0.0.2 rport 61000",
		"a=candidate:1 1 udp 2122260223 2001:db8::1 50000 typ host",
		"candidate:garbage",
		"candidate:1 1 udp 1 1.2.3.4 65536 typ host",
		"",
	} {
		f.Add(s)
	}
	strict := ICEPolicy{}.withDefaults(false)
	loose := ICEPolicy{AllowPrivate: true, AllowLoopback: true, ResolveMDNS: true}.withDefaults(false)
	f.Fuzz(func(t *testing.T, s string) {
		c, v := strict.judge(s)
		_, lv := loose.judge(s)
		if v == accepted && lv != accepted {
			t.Fatalf("%q: the strict policy accepts, the loose one says %v", s, lv)
		}
		if v == accepted {
			if c.port == 0 || (c.transport == "udp" && c.port < 1024) {
				t.Fatalf("%q accepted with port %d", s, c.port)
			}
			a, err := netip.ParseAddr(c.address)
			if err != nil {
				t.Fatalf("%q accepted with a non-IP address %q", s, c.address)
			}
			a = a.Unmap()
			if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast() {
				t.Fatalf("%q accepted with address %v", s, a)
			}
		}
		if strings.ContainsAny(s, "\r\n") {
			return
		}
		line := "a=" + strings.TrimPrefix(s, "a=")
		offer := "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n" + line + "\r\na=mid:0\r\n"
		out, _, err := strict.filterOfferCandidates(offer, &remoteCandidates{})
		if err != nil {
			t.Fatalf("one line: %v", err)
		}
		kept := strings.Contains(out, line+"\r\n")
		if _, lv := strict.judge(line); strings.HasPrefix(line, "a=candidate:") && kept != (lv == accepted) {
			t.Fatalf("%q: kept %v, verdict %v", line, kept, lv)
		}
		if !strings.HasSuffix(out, "a=mid:0\r\n") || !strings.HasPrefix(out, "v=0\r\nm=audio") {
			t.Fatalf("the filter damaged the rest of the offer: %q", out)
		}
	})
}
