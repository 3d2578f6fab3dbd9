package origin

import (
	"net/http"
	"slices"
	"strings"
)

// Allowed reports whether origin matches one of patterns: "*", the origin
// itself (case-insensitive), or "scheme://host:*" (the same scheme and
// host with any port, or none).
func Allowed(patterns []string, origin string) bool {
	for _, p := range patterns {
		if p == "*" || strings.EqualFold(p, origin) || anyPort(p, origin) {
			return true
		}
	}
	return false
}

// Allow sets the CORS headers that let a page of origin o read the
// response, when o (the request's Origin header) matches patterns:
// Access-Control-Allow-Origin "*" under the "*" pattern, else o itself
// with "Vary: Origin". It reports whether o matched.
func Allow(h http.Header, patterns []string, o string) bool {
	if o == "" || !Allowed(patterns, o) {
		return false
	}
	if slices.Contains(patterns, "*") {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", o)
		h.Add("Vary", "Origin")
	}
	return true
}

// anyPort reports whether origin matches pattern "scheme://host:*".
func anyPort(pattern, origin string) bool {
	prefix, ok := strings.CutSuffix(pattern, ":*")
	if !ok || len(origin) < len(prefix) || !strings.EqualFold(origin[:len(prefix)], prefix) {
		return false
	}
	rest := origin[len(prefix):]
	if rest == "" {
		return true
	}
	port, ok := strings.CutPrefix(rest, ":")
	if !ok || port == "" || len(port) > 5 {
		return false
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
