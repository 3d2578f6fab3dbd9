package twilio

// Twilio's webhook request signature (X-Twilio-Signature), checked on the
// incoming-call webhook before any TwiML is answered.
//
// The algorithm, as Twilio's helper libraries compute it (facts read from
// github.com/twilio/twilio-go client/request_validator.go at commit
// d858acdc095564232ae71a5cd1c7b130dad88b73, and github.com/twilio/twilio-node
// src/webhooks/webhooks.ts at commit 45d3d65a4ea87652f4c7973af0e0998f3af31322;
// Twilio's "Secure webhooks" page, twilio.com/docs/usage/webhooks/webhooks-security):
//
//   - The signed string is the full URL Twilio requested (scheme, host, path
//     and query string as sent), followed, for a form-encoded POST, by every
//     body parameter as name then value with no separator, names sorted in
//     byte order. Twilio-node sorts a repeated name's values and drops
//     duplicates; this package does the same.
//   - The signature is base64(HMAC-SHA1(auth token, signed string)).
//   - Twilio is inconsistent about the port: the libraries accept the URL
//     with and without the scheme's default port (:443, :80), and so does
//     this package.
//   - A JSON body is not signed as parameters: the URL then carries a
//     bodySHA256 query parameter, the hex SHA-256 of the raw body, and the
//     signature covers the URL alone.
//
// Not implemented: Twilio-node's further fallback that re-encodes the query
// string the legacy way, and the HMAC-SHA256 variant of Webhook Rules
// (X-Twilio-Webhooks-Signature-Settings); see
// docs/decisions/telephony-signatures.md.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// SignatureHeader is the header that carries Twilio's request signature.
const SignatureHeader = "X-Twilio-Signature"

// DefaultMaxBody is the largest webhook body Verifier reads when MaxBody is
// zero. Twilio's voice webhooks are a few kilobytes of form parameters.
const DefaultMaxBody = 64 << 10

// The ways a check fails. Errors from Check and Verify wrap one of these, so
// callers can tell them apart with errors.Is; their text never contains the
// signature.
var (
	// ErrNoSignature: the request has no X-Twilio-Signature header.
	ErrNoSignature = errors.New("twilio: request has no " + SignatureHeader + " header")
	// ErrSignature: the header does not match the URL and parameters.
	ErrSignature = errors.New("twilio: " + SignatureHeader + " does not match the request")
	// ErrBodyHash: the body does not match the URL's bodySHA256 parameter.
	ErrBodyHash = errors.New("twilio: body does not match its bodySHA256 parameter")
	// ErrBodyTooLarge: the body is longer than the verifier reads.
	ErrBodyTooLarge = errors.New("twilio: webhook body too large")
	// ErrMalformed: the URL or the form body cannot be parsed.
	ErrMalformed = errors.New("twilio: malformed webhook request")
)

// Verifier checks Twilio's signature on incoming webhook requests. Its zero
// value rejects every request (it has no auth token); set AuthToken, or set
// Insecure for local tests without Twilio.
type Verifier struct {
	// AuthToken is the account's auth token, the HMAC key.
	AuthToken string
	// PublicURL is the scheme and host Twilio calls, with any path prefix a
	// proxy strips, such as "https://bot.example.com". The signed URL is
	// PublicURL followed by the request's path and query. Empty: the
	// request's own Host, with https when it came over TLS. Set it behind a
	// proxy or tunnel, where the request's scheme and host are not Twilio's.
	PublicURL string
	// MaxBody bounds the body read; zero means DefaultMaxBody.
	MaxBody int64
	// Insecure turns checking off: every request passes. For local tests
	// and simulators only; never set it where Twilio can reach.
	Insecure bool
}

// Check verifies r's signature. It reads the body (at most MaxBody bytes)
// and puts it back, so handlers after it can read it again, ParseForm
// included.
func (v Verifier) Check(r *http.Request) error {
	if v.Insecure {
		return nil
	}
	sig := r.Header.Get(SignatureHeader)
	if sig == "" {
		return ErrNoSignature
	}
	body, err := readBody(r, v.MaxBody)
	if err != nil {
		return err
	}
	rawURL := requestURL(r, v.PublicURL)
	var params url.Values
	if r.Method == http.MethodPost && isForm(r.Header.Get("Content-Type")) {
		params, err = url.ParseQuery(string(body))
		if err != nil {
			return fmt.Errorf("%w: form body: %v", ErrMalformed, err)
		}
	}
	return verify(v.AuthToken, rawURL, params, body, sig)
}

// Handler returns next behind the check: a request that fails it is
// answered 403 Forbidden (413 when its body is too large) and never reaches
// next.
func (v Verifier) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := v.Check(r); err != nil {
			code := http.StatusForbidden
			if errors.Is(err, ErrBodyTooLarge) {
				code = http.StatusRequestEntityTooLarge
			}
			http.Error(w, http.StatusText(code), code)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Verify checks signature against a request Twilio made to rawURL with the
// form parameters params (nil for a GET, whose parameters are in rawURL).
// When rawURL has a bodySHA256 query parameter, body must hash to it and
// params must be empty; otherwise body is ignored.
func Verify(authToken, rawURL string, params url.Values, body []byte, signature string) error {
	if signature == "" {
		return ErrNoSignature
	}
	return verify(authToken, rawURL, params, body, signature)
}

func verify(authToken, rawURL string, params url.Values, body []byte, signature string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%w: url: %v", ErrMalformed, err)
	}
	if authToken == "" {
		return fmt.Errorf("%w: no auth token configured", ErrSignature)
	}
	bodyHash := u.Query().Get("bodySHA256")
	if bodyHash != "" {
		params = nil
	}
	matched := false
	for _, candidate := range urlVariants(u, rawURL) {
		want := Sign(authToken, candidate, params)
		if subtle.ConstantTimeCompare([]byte(want), []byte(signature)) == 1 {
			matched = true
			break
		}
	}
	if !matched {
		return fmt.Errorf("%w (url %q, %d parameters)", ErrSignature, rawURL, len(params))
	}
	if bodyHash != "" {
		sum := sha256.Sum256(body)
		if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(strings.ToLower(bodyHash))) != 1 {
			return fmt.Errorf("%w (%d bytes)", ErrBodyHash, len(body))
		}
	}
	return nil
}

// Sign returns the X-Twilio-Signature Twilio sends for a request to rawURL
// with the form parameters params: for simulators and tests that play
// Twilio's side.
func Sign(authToken, rawURL string, params url.Values) string {
	mac := hmac.New(sha1.New, []byte(authToken))
	io.WriteString(mac, rawURL)
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		values := slices.Clone(params[k])
		slices.Sort(values)
		for _, v := range slices.Compact(values) {
			io.WriteString(mac, k)
			io.WriteString(mac, v)
		}
	}
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// urlVariants is rawURL as given, then with its default port added or
// removed: Twilio signs one or the other.
func urlVariants(u *url.URL, rawURL string) []string {
	out := []string{rawURL}
	def := ""
	switch u.Scheme {
	case "https", "wss":
		def = "443"
	case "http", "ws":
		def = "80"
	}
	if def == "" || u.Host == "" {
		return out
	}
	alt := *u
	if u.Port() == "" {
		alt.Host = net.JoinHostPort(u.Hostname(), def)
	} else {
		alt.Host = u.Hostname()
		if strings.Contains(alt.Host, ":") {
			alt.Host = "[" + alt.Host + "]"
		}
	}
	return append(out, alt.String())
}

// requestURL is the URL Twilio requested, as far as the server can tell.
func requestURL(r *http.Request, public string) string {
	if public != "" {
		return strings.TrimSuffix(public, "/") + r.URL.RequestURI()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

func isForm(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// readBody reads r's body up to max bytes and puts it back for the next
// reader.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if max <= 0 {
		max = DefaultMaxBody
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: reading body: %v", ErrMalformed, err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, max)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
