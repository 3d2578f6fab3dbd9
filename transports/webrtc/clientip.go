package webrtc

import (
	"net/http"
	"net/netip"
	"strings"
)

// Forwarded headers a trusted proxy may name the client in; see
// Options.ForwardedHeader.
const (
	// HeaderXForwardedFor is the de facto standard list of addresses,
	// "client, proxy1, proxy2", each proxy appending the one it got the
	// request from.
	HeaderXForwardedFor = "X-Forwarded-For"
	// HeaderForwarded is RFC 7239's header: `for=192.0.2.60;proto=https,
	// for="[2001:db8::17]:4711"`.
	HeaderForwarded = "Forwarded"
)

// clientAddr returns the address the limits of r count against: the
// connection's peer, or, when that peer is a trusted proxy, the address
// the proxies forwarded in header (see [forwardedClient]). It is the zero
// Addr when the connection's address does not parse (a Unix socket): all
// such requests then share one allowance.
func clientAddr(r *http.Request, trusted []netip.Prefix, header string) netip.Addr {
	peer := parseHost(r.RemoteAddr)
	if len(trusted) == 0 || !peer.IsValid() {
		return peer
	}
	return forwardedClient(peer, r.Header.Values(header), header == HeaderForwarded, trusted)
}

// forwardedClient walks the hops a request passed through from the
// nearest one back: peer (the connection's address), then the forwarded
// addresses from right to left. The first hop that is not a trusted proxy
// is the client: what lies left of it was written by the client itself and
// may be forged. When a trusted proxy forwarded something that is not an
// address (unknown, an obfuscated name, garbage) the walk stops at that
// proxy, whose address is returned; so does it when every hop is trusted.
// values are the header's lines, in order; forwarded selects RFC 7239
// syntax over X-Forwarded-For's.
func forwardedClient(peer netip.Addr, values []string, forwarded bool, trusted []netip.Prefix) netip.Addr {
	var hops []string
	for _, v := range values {
		if forwarded {
			fors, ok := forwardedFors(v)
			if !ok {
				// A malformed header cannot be walked: nothing in it is
				// known to come from a proxy.
				return peer
			}
			hops = append(hops, fors...)
		} else {
			for h := range strings.SplitSeq(v, ",") {
				hops = append(hops, strings.TrimSpace(h))
			}
		}
	}
	addr := peer
	for i := len(hops) - 1; i >= 0 && isTrusted(addr, trusted); i-- {
		next := parseNode(hops[i])
		if !next.IsValid() {
			return addr
		}
		addr = next
	}
	return addr
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHost parses the "host:port" of http.Request.RemoteAddr.
func parseHost(hostport string) netip.Addr {
	if ap, err := netip.ParseAddrPort(hostport); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	if a, err := netip.ParseAddr(hostport); err == nil {
		return a.Unmap().WithZone("")
	}
	return netip.Addr{}
}

// parseNode parses one forwarded hop: an IPv4 or IPv6 address, with or
// without a port, IPv6 bare or in brackets. Anything else (unknown, an
// obfuscated _name, a host name) is the zero Addr.
func parseNode(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if a := parseHost(s); a.IsValid() {
		return a
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return a.Unmap().WithZone("")
		}
	}
	return netip.Addr{}
}

// forwardedFors returns the for= value of each element of one Forwarded
// header line (RFC 7239 §4), "" for an element without one, unquoted. It
// reports false when the line does not parse.
func forwardedFors(v string) ([]string, bool) {
	var fors []string
	elemFor, i := "", 0
	for {
		// One pair: token "=" (token / quoted-string), or nothing.
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
		start := i
		for i < len(v) && isTokenChar(v[i]) {
			i++
		}
		name := v[start:i]
		if name != "" {
			if i >= len(v) || v[i] != '=' {
				return nil, false
			}
			i++
			var value string
			if i < len(v) && v[i] == '"' {
				var ok bool
				value, i, ok = quotedString(v, i)
				if !ok {
					return nil, false
				}
			} else {
				start := i
				for i < len(v) && isTokenChar(v[i]) {
					i++
				}
				if i == start {
					return nil, false
				}
				value = v[start:i]
			}
			if strings.EqualFold(name, "for") {
				elemFor = value
			}
		}
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
		if i == len(v) {
			return append(fors, elemFor), true
		}
		switch v[i] {
		case ';':
		case ',':
			fors = append(fors, elemFor)
			elemFor = ""
		default:
			return nil, false
		}
		i++
	}
}

// quotedString reads the quoted-string at v[i] (a '"'), returning its
// unescaped text and the index after the closing quote.
func quotedString(v string, i int) (string, int, bool) {
	var b strings.Builder
	for i++; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case c == '\\', c < 0x20 && c != '\t', c == 0x7f:
			return "", i, false
		default:
			b.WriteByte(c)
		}
	}
	return "", i, false
}

// isTokenChar reports whether c may appear in an RFC 9110 token.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// limitKey is the key an address is counted under: IPv4 as it is, IPv6 by
// its /64.
func limitKey(a netip.Addr) netip.Addr {
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}
