package exotel

// Exotel does not sign its requests. Its documentation offers two ways for
// a bot server to know a request is Exotel's, and this file checks both:
//
//   - HTTP Basic authentication. The URL given to the Voicebot or Stream
//     applet may carry credentials, wss://<user>:<password>@host/path (or
//     https://... for the endpoint that answers the socket's URL); Exotel
//     then sends "Authorization: Basic base64(user:password)". Exotel's
//     page puts its API key and token there; any pair the server knows
//     works, and one made for the bot is better than the account's API
//     credentials.
//   - IP allowlisting: Exotel's source ranges, which its support gives
//     on request; it publishes no list.
//
// Sources: developer.exotel.com/docs/agentstream/stream-voicebot-applet
// (the applet's "Authentication" parameter: IP whitelisting, or Basic Auth
// in the URL sent as an Authorization: Basic header);
// developer.exotel.com/docs/advanced-config/network-requirements (inbound
// webhooks from "Exotel IP ranges", from support). No Exotel page or SDK
// describes a request signature; see docs/decisions/telephony-signatures.md.

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// maxForwardedFor bounds the X-Forwarded-For header read behind a trusted
// proxy.
const maxForwardedFor = 1 << 10

// The ways a check fails. Errors from Check wrap one of these; their text
// never contains a password.
var (
	// ErrNotConfigured: the Verifier has neither credentials nor networks.
	ErrNotConfigured = errors.New("exotel: no credentials or networks configured to check requests against")
	// ErrNoCredentials: the request has no Basic Authorization header.
	ErrNoCredentials = errors.New("exotel: request has no Basic credentials")
	// ErrCredentials: the request's Basic credentials are not the
	// configured ones.
	ErrCredentials = errors.New("exotel: wrong Basic credentials")
	// ErrNetwork: the request's source address is not in an allowed
	// network.
	ErrNetwork = errors.New("exotel: request from outside the allowed networks")
)

// Verifier checks that a request (the applet's WebSocket upgrade, or a
// webhook) comes from Exotel, by Basic credentials, source address, or both
// when both are set. Its zero value rejects every request; set Username
// and Password, or AllowedNetworks, or Insecure for local tests.
type Verifier struct {
	// Username and Password are the Basic credentials in the URL given to
	// Exotel. Both empty: credentials are not checked.
	Username, Password string
	// AllowedNetworks, when not empty, are the only networks requests may
	// come from (see ParseNetworks).
	AllowedNetworks []netip.Prefix
	// TrustedProxies are the networks of proxies in front of the server.
	// A request from one is taken to come from the rightmost address of
	// its X-Forwarded-For that is not itself a trusted proxy. Empty: the
	// connection's address is the source and X-Forwarded-For is ignored.
	TrustedProxies []netip.Prefix
	// Insecure turns checking off: every request passes. For local tests
	// and simulators only.
	Insecure bool
}

// Check verifies r's credentials and source address as configured.
func (v Verifier) Check(r *http.Request) error {
	if v.Insecure {
		return nil
	}
	creds := v.Username != "" || v.Password != ""
	if !creds && len(v.AllowedNetworks) == 0 {
		return ErrNotConfigured
	}
	if len(v.AllowedNetworks) > 0 {
		addr, err := v.source(r)
		if err != nil {
			return err
		}
		if !contains(v.AllowedNetworks, addr) {
			return fmt.Errorf("%w (%s)", ErrNetwork, addr)
		}
	}
	if creds {
		user, pass, ok := r.BasicAuth()
		if !ok {
			return ErrNoCredentials
		}
		if !equal(user, v.Username) || !equal(pass, v.Password) {
			return fmt.Errorf("%w (user %q)", ErrCredentials, user)
		}
	}
	return nil
}

// Handler returns next behind the check: a request that fails it is
// answered 403 Forbidden, or 401 with a Basic challenge when it brought no
// credentials, and never reaches next.
func (v Verifier) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := v.Check(r); err != nil {
			code := http.StatusForbidden
			if errors.Is(err, ErrNoCredentials) {
				code = http.StatusUnauthorized
				w.Header().Set("WWW-Authenticate", `Basic realm="exotel"`)
			}
			http.Error(w, http.StatusText(code), code)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ParseNetworks parses a comma-separated list of addresses and CIDR
// prefixes ("203.0.113.0/24, 198.51.100.7, 2001:db8::/32"), as an
// environment variable would hold Exotel's ranges.
func ParseNetworks(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("exotel: network %q: %w", f, err)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("exotel: network %q: %w", f, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// source is the address the request came from: the connection's, or behind
// trusted proxies the rightmost untrusted X-Forwarded-For entry.
func (v Verifier) source(r *http.Request) (netip.Addr, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: unknown source address %q", ErrNetwork, r.RemoteAddr)
	}
	addr = addr.Unmap()
	if !contains(v.TrustedProxies, addr) {
		return addr, nil
	}
	xff := strings.Join(r.Header.Values("X-Forwarded-For"), ",")
	if len(xff) > maxForwardedFor {
		return netip.Addr{}, fmt.Errorf("%w: X-Forwarded-For of %d bytes", ErrNetwork, len(xff))
	}
	hops := strings.Split(xff, ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if hop == "" {
			continue
		}
		a, err := netip.ParseAddr(hop)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("%w: X-Forwarded-For entry %q is not an address", ErrNetwork, hop)
		}
		if a = a.Unmap(); !contains(v.TrustedProxies, a) {
			return a, nil
		}
	}
	return addr, nil
}

func contains(nets []netip.Prefix, a netip.Addr) bool {
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// equal compares in constant time, lengths included.
func equal(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
