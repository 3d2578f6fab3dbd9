package plivo

// Plivo's V3 request signature, checked on the answer webhook before any
// Plivo XML is answered.
//
// The algorithm, as Plivo's SDKs compute it (facts read from
// github.com/plivo/plivo-node lib/utils/v3Security.js at commit
// 4889b056e050beb302dc854c67e6a791086c6d51, github.com/plivo/plivo-python
// plivo/utils/signature_v3.py at a0cd3237d2ce1dc46434572997f9ccf380502af0,
// and github.com/plivo/plivo-go utils.go at
// 273a8369467eeb2e2603d3916a0f6587dbde4ec4; the headers from
// docs.plivo.com/docs/voice/xml/request/validation):
//
//   - Headers: X-Plivo-Signature-V3 (signed with the account's or
//     subaccount's auth token), X-Plivo-Signature-Ma-V3 (always with the
//     main account's), X-Plivo-Signature-V3-Nonce. A signature header may
//     hold several signatures separated by commas; any one matching is
//     enough.
//   - The base is scheme://host[:port]/path of the URL Plivo requested,
//     without its query.
//   - GET: the URL's query parameters, names sorted, each name's values
//     sorted, as name=value joined by "&", decoded (not re-escaped); the
//     string is base, then "?" and that list when it is not empty.
//   - POST: the query list as for GET, and the body's form parameters,
//     names and values sorted the same way, as name then value with no
//     separator. The string is base; then "?" if either is not empty; the
//     query list; "." if both are not empty; the body list.
//   - The signature is base64(HMAC-SHA256(auth token, string + "." + nonce)).
//
// The nonce carries no time, so the signature alone does not stop a replay
// of a captured request; see docs/decisions/telephony-signatures.md.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The headers Plivo signs requests with.
const (
	SignatureHeader            = "X-Plivo-Signature-V3"
	MainAccountSignatureHeader = "X-Plivo-Signature-Ma-V3"
	NonceHeader                = "X-Plivo-Signature-V3-Nonce"
)

// DefaultMaxBody is the largest webhook body Verifier reads when MaxBody is
// zero.
const DefaultMaxBody = 64 << 10

// maxSignatures bounds how many comma-separated signatures one header may
// offer.
const maxSignatures = 8

// The ways a check fails. Errors from Check and Verify wrap one of these;
// their text never contains a signature.
var (
	// ErrNoSignature: no signature header, or no nonce.
	ErrNoSignature = errors.New("plivo: request is not signed")
	// ErrSignature: no offered signature matches the request.
	ErrSignature = errors.New("plivo: " + SignatureHeader + " does not match the request")
	// ErrBodyTooLarge: the body is longer than the verifier reads.
	ErrBodyTooLarge = errors.New("plivo: webhook body too large")
	// ErrMalformed: the URL, the form body or a header cannot be parsed.
	ErrMalformed = errors.New("plivo: malformed webhook request")
)

// Verifier checks Plivo's V3 signature on incoming webhook requests. Its
// zero value rejects every request (it has no auth token); set AuthToken,
// or set Insecure for local tests without Plivo.
type Verifier struct {
	// AuthToken is the auth token of the account or subaccount the
	// application belongs to. It is checked against both signature headers,
	// so a main account's token works with either.
	AuthToken string
	// PublicURL is the scheme and host Plivo calls, with any path prefix a
	// proxy strips, such as "https://bot.example.com". Empty: the request's
	// own Host, with https when it came over TLS.
	PublicURL string
	// MaxBody bounds the body read; zero means DefaultMaxBody.
	MaxBody int64
	// Insecure turns checking off: every request passes. For local tests
	// and simulators only.
	Insecure bool
}

// Check verifies r's signature. It reads the body (at most MaxBody bytes)
// and puts it back, so handlers after it can read it again.
func (v Verifier) Check(r *http.Request) error {
	if v.Insecure {
		return nil
	}
	sig := r.Header.Get(SignatureHeader)
	ma := r.Header.Get(MainAccountSignatureHeader)
	nonce := r.Header.Get(NonceHeader)
	if sig == "" && ma == "" {
		return fmt.Errorf("%w: no %s header", ErrNoSignature, SignatureHeader)
	}
	if nonce == "" {
		return fmt.Errorf("%w: no %s header", ErrNoSignature, NonceHeader)
	}
	body, err := readBody(r, v.MaxBody)
	if err != nil {
		return err
	}
	var params url.Values
	if r.Method != http.MethodGet && isForm(r.Header.Get("Content-Type")) {
		if params, err = url.ParseQuery(string(body)); err != nil {
			return fmt.Errorf("%w: form body: %v", ErrMalformed, err)
		}
	}
	rawURL := requestURL(r, v.PublicURL)
	if sig != "" {
		err = Verify(v.AuthToken, r.Method, rawURL, params, nonce, sig)
		if err == nil || ma == "" || !errors.Is(err, ErrSignature) {
			return err
		}
	}
	return Verify(v.AuthToken, r.Method, rawURL, params, nonce, ma)
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

// Verify checks signatures, the value of a signature header (one signature
// or several separated by commas), against a request Plivo made with method
// to rawURL with the form body params (nil for a GET) and nonce.
func Verify(authToken, method, rawURL string, params url.Values, nonce, signatures string) error {
	if signatures == "" || nonce == "" {
		return fmt.Errorf("%w: no signature or nonce", ErrNoSignature)
	}
	if authToken == "" {
		return fmt.Errorf("%w: no auth token configured", ErrSignature)
	}
	offered := strings.SplitN(signatures, ",", maxSignatures+1)
	if len(offered) > maxSignatures {
		return fmt.Errorf("%w: more than %d signatures in one header", ErrMalformed, maxSignatures)
	}
	want, err := Sign(authToken, method, rawURL, params, nonce)
	if err != nil {
		return err
	}
	for _, s := range offered {
		if subtle.ConstantTimeCompare([]byte(want), []byte(strings.TrimSpace(s))) == 1 {
			return nil
		}
	}
	return fmt.Errorf("%w (%s %q, %d body parameters)", ErrSignature, method, rawURL, len(params))
}

// Sign returns the X-Plivo-Signature-V3 Plivo sends for a request with
// method to rawURL with the form body params and nonce: for simulators and
// tests that play Plivo's side. It fails only when rawURL does not parse.
func Sign(authToken, method, rawURL string, params url.Values, nonce string) (string, error) {
	s, err := SignedString(method, rawURL, params)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, []byte(authToken))
	io.WriteString(mac, s)
	io.WriteString(mac, ".")
	io.WriteString(mac, nonce)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// SignedString is the string Plivo's V3 signature covers, before the nonce,
// for a request with method to rawURL with the form body params. It is
// exported so that a failing check can be compared with what Plivo's SDKs
// compute.
func SignedString(method, rawURL string, params url.Values) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("%w: url: %v", ErrMalformed, err)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", fmt.Errorf("%w: url query: %v", ErrMalformed, err)
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://" + u.Host + u.EscapedPath())
	if method == http.MethodGet {
		for k, vs := range params {
			query[k] = append(query[k], vs...)
		}
		if q := joinSorted(query, "=", "&"); q != "" {
			b.WriteString("?" + q)
		}
		return b.String(), nil
	}
	q := joinSorted(query, "=", "&")
	if q != "" || len(params) > 0 {
		b.WriteString("?" + q)
	}
	if q != "" && len(params) > 0 {
		b.WriteString(".")
	}
	b.WriteString(joinSorted(params, "", ""))
	return b.String(), nil
}

// joinSorted writes every name and value, names sorted and each name's
// values sorted, as name+kv+value, joined by sep.
func joinSorted(vs url.Values, kv, sep string) string {
	keys := make([]string, 0, len(vs))
	for k := range vs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		values := slices.Clone(vs[k])
		slices.Sort(values)
		for _, v := range values {
			if b.Len() > 0 {
				b.WriteString(sep)
			}
			b.WriteString(k + kv + v)
		}
	}
	return b.String()
}

// requestURL is the URL Plivo requested, as far as the server can tell.
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
