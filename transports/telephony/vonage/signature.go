package vonage

// Vonage's signed webhooks, checked on the answer webhook before any NCCO
// is answered.
//
// The scheme, from Vonage's documentation (the Voice API webhook reference,
// developer.vonage.com/voice/voice-api/webhook-reference, "Signed
// Webhooks": the Voice API signs callbacks by default; the claims from the
// signed-webhooks page of github.com/Nexmo/station
// _documentation/en/messages/concepts/signed-webhooks.md at commit
// 22a9d7eebb41a1d6cdb00e8dab2e6f2dba483422; the GET payload from Vonage
// API Support's article "How do I verify that the Voice API Webhook request
// and its payload has not been tampered during transit?"), and the check
// Vonage's SDK makes (github.com/Vonage/vonage-node-sdk
// packages/jwt/lib/verifySignature.ts at commit
// babd2d8c2e0976b391cdb4677ea784650f3b6376 accepts HS256):
//
//   - The request carries "Authorization: Bearer <JWT>", HS256, keyed with
//     the account's signature secret (Dashboard, API settings).
//   - Claims: iat (Unix seconds), jti, iss "Vonage", api_key (which
//     account's secret signed it), application_id, and payload_hash, the hex
//     SHA-256 of the payload.
//   - The payload of a POST is its body. Of a GET (the answer webhook's
//     default method) it is the query parameters as a JSON object, in the
//     order they appear, with no whitespace (JSON.stringify's output).
//   - The token has no exp; this package bounds its age by iat.
//
// The GET payload rule comes from a support article, not from code; see
// docs/decisions/telephony-signatures.md.

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultTolerance is how far a token's iat may be from the clock, either
// way, when Verifier.Tolerance is zero.
const DefaultTolerance = 5 * time.Minute

// DefaultMaxBody is the largest webhook body Verifier reads when MaxBody is
// zero.
const DefaultMaxBody = 64 << 10

// maxToken bounds the Authorization header's token.
const maxToken = 4 << 10

// The ways a check fails. Errors from Check and Verify wrap one of these;
// their text never contains the token.
var (
	// ErrNoToken: no "Authorization: Bearer" header.
	ErrNoToken = errors.New("vonage: request has no Authorization: Bearer token")
	// ErrToken: the token is malformed, not HS256, or not signed with the
	// signature secret.
	ErrToken = errors.New("vonage: webhook token does not verify")
	// ErrTimestamp: the token's iat is missing or outside the tolerance.
	ErrTimestamp = errors.New("vonage: webhook token issued outside the tolerance")
	// ErrPayloadHash: the token's payload_hash is missing or not the
	// payload's.
	ErrPayloadHash = errors.New("vonage: payload does not match the token's payload_hash")
	// ErrAPIKey: the token's api_key is not the configured one.
	ErrAPIKey = errors.New("vonage: webhook token is for another API key")
	// ErrBodyTooLarge: the body is longer than the verifier reads.
	ErrBodyTooLarge = errors.New("vonage: webhook body too large")
)

// Claims are the claims of a Vonage webhook token.
type Claims struct {
	jwt.RegisteredClaims
	// PayloadHash is the hex SHA-256 of the request's payload.
	PayloadHash string `json:"payload_hash,omitempty"`
	// APIKey names the account whose signature secret signed the token.
	APIKey string `json:"api_key,omitempty"`
	// ApplicationID is the Vonage application the webhook is for.
	ApplicationID string `json:"application_id,omitempty"`
}

// Verifier checks the signed JWT on incoming Vonage webhook requests. Its
// zero value rejects every request (it has no secret); set SignatureSecret,
// or set Insecure for local tests without Vonage.
type Verifier struct {
	// SignatureSecret is the account's signature secret, the HS256 key.
	SignatureSecret string
	// APIKey, when set, must be the token's api_key.
	APIKey string
	// Tolerance is how far iat may be from Now, either way; zero means
	// DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxBody bounds the body read; zero means DefaultMaxBody.
	MaxBody int64
	// IgnorePayloadHash checks the token (secret, age, api_key) but not
	// that its payload_hash is this request's payload. Only for traffic
	// whose payload this package hashes differently from Vonage.
	IgnorePayloadHash bool
	// Insecure turns checking off: every request passes. For local tests
	// and simulators only.
	Insecure bool
}

// Check verifies r's token. It reads the body (at most MaxBody bytes) and
// puts it back for the handlers after it.
func (v Verifier) Check(r *http.Request) error {
	if v.Insecure {
		return nil
	}
	token, err := BearerToken(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	payload, err := readBody(r, v.MaxBody)
	if err != nil {
		return err
	}
	if r.Method == http.MethodGet && len(payload) == 0 && !v.IgnorePayloadHash {
		if payload, err = QueryPayload(r.URL.RawQuery); err != nil {
			return err
		}
	}
	_, err = v.Verify(token, payload)
	return err
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

// Verify checks token, the JWT of a webhook, against payload (a POST's
// body, or QueryPayload of a GET's query) and returns its claims. Insecure
// does not apply to it.
func (v Verifier) Verify(token string, payload []byte) (*Claims, error) {
	claims, err := v.verifyToken(token)
	if err != nil {
		return nil, err
	}
	if v.APIKey != "" && subtle.ConstantTimeCompare([]byte(claims.APIKey), []byte(v.APIKey)) != 1 {
		return nil, fmt.Errorf("%w (token's api_key %q)", ErrAPIKey, claims.APIKey)
	}
	if v.IgnorePayloadHash {
		return claims, nil
	}
	if err := checkPayloadHash(claims.PayloadHash, payload); err != nil {
		return nil, err
	}
	return claims, nil
}

func (v Verifier) verifyToken(token string) (*Claims, error) {
	if v.SignatureSecret == "" {
		return nil, fmt.Errorf("%w: no signature secret configured", ErrToken)
	}
	if len(token) > maxToken {
		return nil, fmt.Errorf("%w: token of %d bytes (limit %d)", ErrToken, len(token), maxToken)
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	claims := &Claims{}
	_, err := jwt.ParseWithClaims(token, claims,
		func(*jwt.Token) (any, error) { return []byte(v.SignatureSecret), nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(now), jwt.WithLeeway(tolerance))
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) || errors.Is(err, jwt.ErrTokenNotValidYet) || errors.Is(err, jwt.ErrTokenUsedBeforeIssued) {
			return nil, fmt.Errorf("%w: %v", ErrTimestamp, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrToken, err)
	}
	if claims.IssuedAt == nil {
		return nil, fmt.Errorf("%w: token has no iat", ErrTimestamp)
	}
	at := claims.IssuedAt.Time
	if d := now().Sub(at); d > tolerance || d < -tolerance {
		return nil, fmt.Errorf("%w: issued at %s, %s from now (tolerance %s)", ErrTimestamp,
			at.UTC().Format(time.RFC3339), d.Round(time.Second), tolerance)
	}
	return claims, nil
}

func checkPayloadHash(claim string, payload []byte) error {
	if claim == "" {
		return fmt.Errorf("%w: token has no payload_hash", ErrPayloadHash)
	}
	sum := sha256.Sum256(payload)
	if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(strings.ToLower(claim))) != 1 {
		return fmt.Errorf("%w (%d-byte payload)", ErrPayloadHash, len(payload))
	}
	return nil
}

// Sign returns the token Vonage sends for payload with claims (its
// PayloadHash is set from payload; IssuedAt should be set): for simulators
// and tests that play Vonage's side.
func Sign(secret string, claims Claims, payload []byte) (string, error) {
	sum := sha256.Sum256(payload)
	claims.PayloadHash = hex.EncodeToString(sum[:])
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
}

// BearerToken returns the token of an Authorization header value of the
// form "Bearer <token>" (the scheme in any case, as RFC 9110 allows).
func BearerToken(header string) (string, error) {
	scheme, token, ok := strings.Cut(header, " ")
	if header == "" {
		return "", ErrNoToken
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", fmt.Errorf("%w: Authorization is not a Bearer token", ErrNoToken)
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", fmt.Errorf("%w: empty Bearer token", ErrNoToken)
	}
	return token, nil
}

// QueryPayload is the payload Vonage hashes for a GET webhook: its query
// parameters as a JSON object in the order they appear, no whitespace, as
// JavaScript's JSON.stringify writes it. A repeated name keeps its first
// value.
func QueryPayload(rawQuery string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		if pair == "" {
			continue
		}
		k, val, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("%w: query: %v", ErrPayloadHash, err)
		}
		value, err := url.QueryUnescape(val)
		if err != nil {
			return nil, fmt.Errorf("%w: query: %v", ErrPayloadHash, err)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		writeJSString(&b, key)
		b.WriteByte(':')
		writeJSString(&b, value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeJSString writes s quoted as JSON.stringify does: only '"', '\' and
// control characters escaped, everything else (HTML characters, U+2028,
// non-ASCII) as is. Invalid UTF-8 becomes U+FFFD, as it does when a query
// is decoded into a JavaScript string.
func writeJSString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r) // utf8.RuneError for invalid bytes
		}
	}
	b.WriteByte('"')
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
		return nil, fmt.Errorf("vonage: reading webhook body: %w", err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, max)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
