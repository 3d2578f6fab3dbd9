package webrtc

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// ErrForbidden refuses a request with a 403 when an Options.Authorize
// error wraps it: the caller is known but may not connect. Any other
// error is a 401.
var ErrForbidden = errors.New("webrtc: forbidden")

// errUnauthorized is what [BearerTokens] refuses with.
var errUnauthorized = errors.New("webrtc: no valid bearer token")

// BearerTokens returns an Options.Authorize hook that admits the requests
// whose Authorization header is "Bearer <token>" with one of tokens, and
// refuses the others with a 401. The comparison takes the same time
// whichever token, if any, matches and however long they are. Empty tokens
// are ignored; with none left every request is refused.
//
// The real client sends the headers of its startBot or connect
// parameters with every request, /start, offers and PATCHes alike:
//
//	client.startBotAndConnect({endpoint: "/start", headers: new Headers({Authorization: "Bearer " + token})})
//
// A token in a page's source is no secret: hand each user a short-lived
// one from the application's own login, or write a hook that checks the
// application's session cookie.
func BearerTokens(tokens ...string) func(*http.Request) error {
	var sums [][sha256.Size]byte
	for _, t := range tokens {
		if t != "" {
			sums = append(sums, sha256.Sum256([]byte(t)))
		}
	}
	return func(r *http.Request) error {
		tok, ok := parseBearer(r.Header.Get("Authorization"))
		if !ok {
			return errUnauthorized
		}
		got := sha256.Sum256([]byte(tok))
		match := 0
		for i := range sums {
			match |= subtle.ConstantTimeCompare(got[:], sums[i][:])
		}
		if match != 1 {
			return errUnauthorized
		}
		return nil
	}
}

// parseBearer returns the token of an Authorization header value of the
// Bearer scheme (RFC 6750 §2.1: the scheme, case-insensitive, spaces and
// a token68).
func parseBearer(h string) (string, bool) {
	const scheme = "bearer"
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) || h[len(scheme)] != ' ' {
		return "", false
	}
	tok := strings.TrimLeft(h[len(scheme):], " ")
	if !isToken68(tok) {
		return "", false
	}
	return tok, true
}

// isToken68 reports whether s is an RFC 9110 token68: 1*( ALPHA / DIGIT /
// "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// authorize runs Options.Authorize on r; on a refusal it answers 401 or
// 403 itself (the error goes to the log, not to the client) and returns
// false.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Authorize == nil {
		return true
	}
	err := s.opts.Authorize(r)
	if err == nil {
		return true
	}
	s.reqLog.Info("signalling request refused by Authorize", logRequest(r, err)...)
	if errors.Is(err, ErrForbidden) {
		writeError(w, http.StatusForbidden, "forbidden")
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="framewire"`)
	writeError(w, http.StatusUnauthorized, "unauthorized")
	return false
}
