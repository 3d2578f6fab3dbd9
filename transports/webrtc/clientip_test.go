package webrtc

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClientAddrTrustsForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	cases := []struct {
		name, remote, header string
		values               []string
		trusted              []netip.Prefix
		want                 string
	}{
		{"no proxies trusted: the connection", "203.0.113.5:4000", HeaderXForwardedFor, []string{"198.51.100.1"}, nil, "203.0.113.5"},
		{"an untrusted peer's header is ignored", "203.0.113.5:4000", HeaderXForwardedFor, []string{"198.51.100.1"}, proxies, "203.0.113.5"},
		{"one proxy", "10.0.0.2:80", HeaderXForwardedFor, []string{"198.51.100.1"}, proxies, "198.51.100.1"},
		{"the client's own prefix is not believed", "10.0.0.2:80", HeaderXForwardedFor, []string{"1.2.3.4, 198.51.100.1"}, proxies, "198.51.100.1"},
		{"a chain of proxies", "10.0.0.2:80", HeaderXForwardedFor, []string{"198.51.100.1, 10.9.9.9", "10.1.1.1"}, proxies, "198.51.100.1"},
		{"ports and brackets", "10.0.0.2:80", HeaderXForwardedFor, []string{"[2001:db8::7]:5000, 10.1.1.1:3000"}, proxies, "2001:db8::7"},
		{"a mapped IPv4", "[::ffff:10.0.0.2]:80", HeaderXForwardedFor, []string{"::ffff:198.51.100.1"}, proxies, "198.51.100.1"},
		{"garbage stops at the proxy", "10.0.0.2:80", HeaderXForwardedFor, []string{"evil, 10.1.1.1"}, proxies, "10.1.1.1"},
		{"no header: the proxy", "10.0.0.2:80", HeaderXForwardedFor, nil, proxies, "10.0.0.2"},
		{"every hop trusted: the farthest", "10.0.0.2:80", HeaderXForwardedFor, []string{"10.3.3.3"}, proxies, "10.3.3.3"},
		{"Forwarded", "10.0.0.2:80", HeaderForwarded, []string{`for=198.51.100.1;proto=https;by=10.0.0.2`}, proxies, "198.51.100.1"},
		{"Forwarded, quoted IPv6 with a port, two elements", "[fd00::1]:80", HeaderForwarded,
			[]string{`for="[2001:db8:cafe::17]:4711", For=10.2.2.2`}, proxies, "2001:db8:cafe::17"},
		{"Forwarded unknown stops at the proxy", "10.0.0.2:80", HeaderForwarded, []string{`for=unknown`}, proxies, "10.0.0.2"},
		{"Forwarded malformed: the proxy", "10.0.0.2:80", HeaderForwarded, []string{`for="198.51.100.1`}, proxies, "10.0.0.2"},
		{"the other header is the client's to forge", "10.0.0.2:80", HeaderForwarded, nil, proxies, "10.0.0.2"},
		{"a Unix socket", "@", HeaderXForwardedFor, nil, proxies, "invalid IP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/start", nil)
			r.RemoteAddr = c.remote
			for _, v := range c.values {
				r.Header.Add(c.header, v)
			}
			if c.name == "the other header is the client's to forge" {
				r.Header.Set(HeaderXForwardedFor, "198.51.100.1")
			}
			if got := clientAddr(r, c.trusted, c.header).String(); got != c.want {
				t.Errorf("client %s, want %s", got, c.want)
			}
		})
	}
}

func TestForwardedForsParsesRFC7239Elements(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`for=192.0.2.60;proto=http;by=203.0.113.43`, []string{"192.0.2.60"}, true},
		{`for=192.0.2.43, for=198.51.100.17`, []string{"192.0.2.43", "198.51.100.17"}, true},
		{`for="[2001:db8:cafe::17]:4711"`, []string{"[2001:db8:cafe::17]:4711"}, true},
		{`proto=https, for=_hidden`, []string{"", "_hidden"}, true},
		{`for="a\"b;c,d"`, []string{`a"b;c,d`}, true},
		{``, []string{""}, true},
		{`for=`, nil, false},
		{`for`, nil, false},
		{`for=1.2.3.4 x`, nil, false},
		{`for="open`, nil, false},
	}
	for _, c := range cases {
		got, ok := forwardedFors(c.in)
		if ok != c.ok || !cmp.Equal(got, c.want) {
			t.Errorf("forwardedFors(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestLimitKeyCountsIPv6ByItsSlash64(t *testing.T) {
	for in, want := range map[string]string{
		"198.51.100.7":          "198.51.100.7",
		"2001:db8:1:2:3:4:5:6":  "2001:db8:1:2::",
		"2001:db8:1:2::ffff":    "2001:db8:1:2::",
		"2001:db8:1:3::1":       "2001:db8:1:3::",
		"fe80::1%eth0":          "fe80::",
		"2001:db8:ffff:ffff::1": "2001:db8:ffff:ffff::",
	} {
		if got := limitKey(netip.MustParseAddr(in)).String(); got != want {
			t.Errorf("limitKey(%s) = %s, want %s", in, got, want)
		}
	}
}

func FuzzForwardedClient(f *testing.F) {
	f.Add("198.51.100.1, 10.1.1.1", false)
	f.Add("[2001:db8::7]:5000,10.1.1.1:3000", false)
	f.Add(`for=198.51.100.1;proto=https, for="[fd00::2]:80"`, true)
	f.Add(`for="\"`, true)
	f.Add(`for=unknown;by=_x,,;`, true)
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	peer := netip.MustParseAddr("10.0.0.2")
	f.Fuzz(func(t *testing.T, header string, forwarded bool) {
		values := strings.Split(header, "\n")
		got := forwardedClient(peer, values, forwarded, trusted)
		if !got.IsValid() || got.Zone() != "" || got.Is4In6() {
			t.Fatalf("client %v from %q", got, header)
		}
		// An untrusted peer is the client, whatever it forwarded.
		if other := netip.MustParseAddr("203.0.113.1"); forwardedClient(other, values, forwarded, trusted) != other {
			t.Fatalf("an untrusted peer's header %q was believed", header)
		}
		if fors, ok := forwardedFors(header); ok && len(fors) != strings.Count(header, ",")+1 && !strings.Contains(header, `"`) {
			t.Fatalf("forwardedFors(%q) = %q: one value per element", header, fors)
		}
	})
}
