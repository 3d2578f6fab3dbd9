package telnyx

// Telnyx's webhook signature, checked on the incoming-call webhook before
// any TeXML is answered.
//
// The algorithm, as Telnyx's SDK checks it (facts read from
// github.com/team-telnyx/telnyx-node src/lib/webhooks.ts at commit
// b9b12ca781db2dd9fba6ff189d1de2e35c04cd1f; developers.telnyx.com's webhook
// pages say the same):
//
//   - Two headers: telnyx-signature-ed25519, the base64 of a 64-byte
//     Ed25519 signature, and telnyx-timestamp, Unix seconds.
//   - The signed message is the timestamp header's text, "|", then the raw
//     body, byte for byte.
//   - The key is the account's Ed25519 public key, 32 bytes given in base64
//     in Mission Control.
//   - The SDK rejects a timestamp more than 300 s from its clock, either way.

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// The headers Telnyx signs webhooks with.
const (
	SignatureHeader = "Telnyx-Signature-Ed25519"
	TimestampHeader = "Telnyx-Timestamp"
)

// DefaultTolerance is how far a webhook's timestamp may be from the clock,
// either way, when Verifier.Tolerance is zero: the 5 minutes Telnyx's SDK
// allows.
const DefaultTolerance = 5 * time.Minute

// DefaultMaxBody is the largest webhook body Verifier reads when MaxBody is
// zero.
const DefaultMaxBody = 64 << 10

// The ways a check fails. Errors from Check and Verify wrap one of these;
// their text never contains the signature.
var (
	// ErrNoSignature: the signature or timestamp header is missing.
	ErrNoSignature = errors.New("telnyx: request is not signed")
	// ErrSignature: the signature does not verify for the timestamp and
	// body under the public key.
	ErrSignature = errors.New("telnyx: " + SignatureHeader + " does not match the request")
	// ErrMalformed: a header is not of its form (the timestamp not decimal
	// seconds, the signature not 64 bytes of base64).
	ErrMalformed = errors.New("telnyx: malformed signature header")
	// ErrTimestamp: the timestamp is outside the tolerance, too old (a
	// replay) or in the future.
	ErrTimestamp = errors.New("telnyx: webhook timestamp outside the tolerance")
	// ErrBodyTooLarge: the body is longer than the verifier reads.
	ErrBodyTooLarge = errors.New("telnyx: webhook body too large")
	// ErrPublicKey: the configured public key is not 32 bytes.
	ErrPublicKey = errors.New("telnyx: invalid public key")
)

// ParsePublicKey decodes the base64 public key Telnyx's Mission Control
// shows (Account Settings, Keys & Credentials, Public Key).
func ParsePublicKey(b64 string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64: %v", ErrPublicKey, err)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrPublicKey, len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// Verifier checks Telnyx's signature on incoming webhook requests. Its zero
// value rejects every request (it has no key); set PublicKey, or set
// Insecure for local tests without Telnyx.
type Verifier struct {
	// PublicKey is the account's webhook public key (see ParsePublicKey).
	PublicKey ed25519.PublicKey
	// Tolerance is how far the timestamp may be from Now, either way; zero
	// means DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxBody bounds the body read; zero means DefaultMaxBody.
	MaxBody int64
	// Insecure turns checking off: every request passes. For local tests
	// and simulators only.
	Insecure bool
}

// Check verifies r's signature and timestamp. It reads the body (at most
// MaxBody bytes) and puts it back for the handlers after it.
func (v Verifier) Check(r *http.Request) error {
	if v.Insecure {
		return nil
	}
	sig, ts := r.Header.Get(SignatureHeader), r.Header.Get(TimestampHeader)
	if sig == "" || ts == "" {
		return missing(sig, ts)
	}
	body, err := readBody(r, v.MaxBody)
	if err != nil {
		return err
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	return Verify(v.PublicKey, body, ts, sig, now(), v.Tolerance)
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

// Verify checks a webhook body against its two header values at time now;
// tolerance zero means DefaultTolerance.
func Verify(pub ed25519.PublicKey, body []byte, timestamp, signature string, now time.Time, tolerance time.Duration) error {
	if signature == "" || timestamp == "" {
		return missing(signature, timestamp)
	}
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: %d bytes configured, want %d", ErrPublicKey, len(pub), ed25519.PublicKeySize)
	}
	at, err := ParseTimestamp(timestamp)
	if err != nil {
		return err
	}
	raw, err := parseSignature(signature)
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, signedMessage(timestamp, body), raw) {
		return fmt.Errorf("%w (timestamp %s, %d-byte body)", ErrSignature, timestamp, len(body))
	}
	// The timestamp is checked after the signature, so that what the error
	// says about it is about a timestamp Telnyx sent.
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, %s from now (tolerance %s)", ErrTimestamp,
			at.UTC().Format(time.RFC3339), d.Round(time.Second), tolerance)
	}
	return nil
}

// Sign returns the two header values Telnyx sends for body at time at, for
// simulators and tests that play Telnyx's side.
func Sign(priv ed25519.PrivateKey, body []byte, at time.Time) (signature, timestamp string) {
	timestamp = strconv.FormatInt(at.Unix(), 10)
	return base64.StdEncoding.EncodeToString(ed25519.Sign(priv, signedMessage(timestamp, body))), timestamp
}

// ParseTimestamp parses a telnyx-timestamp header: decimal Unix seconds, at
// most 12 digits (year 33658), no sign or space.
func ParseTimestamp(s string) (time.Time, error) {
	if len(s) == 0 || len(s) > 12 {
		return time.Time{}, fmt.Errorf("%w: timestamp of %d characters", ErrMalformed, len(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, fmt.Errorf("%w: timestamp %q is not decimal seconds", ErrMalformed, s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: timestamp: %v", ErrMalformed, err)
	}
	return time.Unix(n, 0), nil
}

// parseSignature decodes the signature header: standard base64 (padded or
// not) of exactly 64 bytes.
func parseSignature(s string) ([]byte, error) {
	if len(s) > 128 {
		return nil, fmt.Errorf("%w: signature of %d characters", ErrMalformed, len(s))
	}
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: signature is not base64", ErrMalformed)
	}
	if len(b) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: signature of %d bytes, want %d", ErrMalformed, len(b), ed25519.SignatureSize)
	}
	return b, nil
}

func signedMessage(timestamp string, body []byte) []byte {
	msg := make([]byte, 0, len(timestamp)+1+len(body))
	msg = append(msg, timestamp...)
	msg = append(msg, '|')
	return append(msg, body...)
}

func missing(sig, ts string) error {
	switch {
	case sig == "" && ts == "":
		return fmt.Errorf("%w: no %s or %s header", ErrNoSignature, SignatureHeader, TimestampHeader)
	case sig == "":
		return fmt.Errorf("%w: no %s header", ErrNoSignature, SignatureHeader)
	default:
		return fmt.Errorf("%w: no %s header", ErrNoSignature, TimestampHeader)
	}
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
		return nil, fmt.Errorf("telnyx: reading webhook body: %w", err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, max)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
