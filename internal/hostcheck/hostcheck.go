package hostcheck

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Allowlist says which Host header values a server answers. Its zero value
// is the default policy: localhost names and IP literals. A DNS rebinding
// attack needs a domain name the attacker controls, so an IP literal is
// never one; every other name must be listed.
type Allowlist struct {
	// Hosts are patterns matched against the request's host without its
	// port, case-insensitively: "*" (any host), an exact name
	// ("bot.example.com"), or "*.example.com" (any name under
	// example.com, not example.com itself). Listing any pattern keeps the
	// defaults.
	Hosts []string
	// NoDefaults drops the default localhost names and IP literals, so
	// that only Hosts is allowed.
	NoDefaults bool
}

// Default returns the allowlist of a server listening on listenAddr
// ("host:port", as net.Listen takes it): the defaults, plus the listen
// host when it is a name rather than an IP literal or empty.
func Default(listenAddr string) Allowlist {
	host, _, err := net.SplitHostPort(listenAddr)
	if err != nil {
		host = listenAddr
	}
	if host == "" || isIP(host) || isLocalhost(host) {
		return Allowlist{}
	}
	return Allowlist{Hosts: []string{host}}
}

// Allows reports whether hostport, a Host header value with or without a
// port, is allowed.
func (a Allowlist) Allows(hostport string) bool {
	host, ok := hostOnly(hostport)
	if !ok {
		return false
	}
	if !a.NoDefaults && (isLocalhost(host) || isIP(host)) {
		return true
	}
	for _, p := range a.Hosts {
		if matches(p, host) {
			return true
		}
	}
	return false
}

// Check writes 403 Forbidden and reports false when r's Host is not
// allowed. The body names the rule, not the host, so nothing the client
// sent is reflected back.
func (a Allowlist) Check(w http.ResponseWriter, r *http.Request) bool {
	if a.Allows(r.Host) {
		return true
	}
	http.Error(w, "forbidden: the Host header names a host this server does not serve", http.StatusForbidden)
	return false
}

// Handler wraps next so that it sees only requests whose Host is allowed.
func (a Allowlist) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.Check(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// hostOnly strips the port and the brackets of an IPv6 literal from a
// Host header value. It reports false for a value no client sends: empty,
// over 255 bytes, or with a character no host name or literal has.
func hostOnly(hostport string) (string, bool) {
	if hostport == "" || len(hostport) > 255+8 {
		return "", false
	}
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if !digits(port) {
			return "", false
		}
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 255 {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':' || c == '_' || c == '%') {
			return "", false
		}
	}
	return host, true
}

func digits(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isIP(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

// isLocalhost reports whether host is "localhost" or a name under it,
// which resolvers answer with loopback (RFC 6761 §6.3).
func isLocalhost(host string) bool {
	h := strings.ToLower(host)
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

func matches(pattern, host string) bool {
	pattern = strings.TrimSuffix(pattern, ".")
	if pattern == "*" {
		return true
	}
	if suffix, ok := strings.CutPrefix(pattern, "*."); ok {
		return len(host) > len(suffix)+1 && host[len(host)-len(suffix)-1] == '.' &&
			strings.EqualFold(host[len(host)-len(suffix):], suffix)
	}
	return strings.EqualFold(pattern, host)
}
