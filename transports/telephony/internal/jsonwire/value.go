package jsonwire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Errors the package wraps; each provider package exports them as its own
// ErrTooLarge, ErrBadMessage and ErrBadPayload, so a transport can count
// refusals by cause.
var (
	// ErrTooLarge: a message or its payload is over a limit.
	ErrTooLarge = errors.New("over the limit")
	// ErrBadMessage: a message is not the JSON object expected, or a field
	// is missing or of the wrong type.
	ErrBadMessage = errors.New("malformed message")
	// ErrBadPayload: a media payload is not standard base64.
	ErrBadPayload = errors.New("payload is not base64")
)

// Number is an integer a provider writes as a JSON string ("3") or a JSON
// number. Absent, null or "" is 0; anything else but an optional minus and
// at most 18 digits is an error.
type Number int64

// UnmarshalJSON reads b, a JSON string or number, as an integer.
func (n *Number) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	*n = 0
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' || v > (1<<62)/10 {
			return errNotInteger
		}
		v = v*10 + int64(c-'0')
	}
	if len(b) == 0 {
		return errNotInteger
	}
	if neg {
		v = -v
	}
	*n = Number(v)
	return nil
}

var errNotInteger = errors.New("not an integer of at most 18 digits")

// Payload decodes a base64 JSON string as the decoder reads it, into Buf's
// spare capacity (growing it only when the payload does not fit), so the
// payload is never held as a string. Set Buf and Limit before decoding;
// UnmarshalJSON sets the rest.
type Payload struct {
	// Buf is where the payload is decoded: Buf[:0] of a reused buffer.
	Buf []byte
	// Limit is the most decoded bytes accepted.
	Limit int
	// Out is the decoded payload.
	Out []byte
	// Set reports that the field was present.
	Set bool
	// Err is UnmarshalJSON's error, kept so that a caller of json.Unmarshal
	// can tell a bad payload from a bad message.
	Err error
}

// UnmarshalJSON decodes b, a JSON string of standard base64, into p.Buf.
// Its error wraps [ErrBadMessage] (not a string), [ErrBadPayload] or
// [ErrTooLarge].
func (p *Payload) UnmarshalJSON(b []byte) error {
	p.Set = true
	if len(b) < 2 || b[0] != '"' {
		p.Err = fmt.Errorf("%w: not a string", ErrBadMessage)
		return p.Err
	}
	b64 := b[1 : len(b)-1]
	if bytes.IndexByte(b64, '\\') >= 0 { // an escaped string: unquote it first
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			p.Err = fmt.Errorf("%w: %v", ErrBadMessage, err)
			return p.Err
		}
		b64 = []byte(s)
	}
	p.Out, p.Err = DecodeBase64(b64, p.Buf, p.Limit)
	return p.Err
}

// DecodeBase64 decodes standard base64, padded or not, into buf's spare
// capacity, refusing more than limit decoded bytes ([ErrTooLarge]) before
// decoding any. Bad base64 is [ErrBadPayload].
func DecodeBase64(b64, buf []byte, limit int) ([]byte, error) {
	enc := base64.StdEncoding
	if len(b64)%4 != 0 {
		enc = base64.RawStdEncoding // the padding left out
	}
	n := enc.DecodedLen(len(b64))
	if n > limit+2 { // DecodedLen counts padding as data
		return nil, fmt.Errorf("%d base64 bytes: %w (%d decoded)", len(b64), ErrTooLarge, limit)
	}
	if cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	out := buf[:n]
	m, err := enc.Decode(out, b64)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	if m > limit {
		return nil, fmt.Errorf("%d bytes: %w (%d)", m, ErrTooLarge, limit)
	}
	return out[:m], nil
}

// ValidDigit reports whether d is one DTMF key: 0-9, *, # or A-D.
func ValidDigit(d string) bool {
	if len(d) != 1 {
		return false
	}
	c := d[0]
	return c >= '0' && c <= '9' || c == '*' || c == '#' || c >= 'A' && c <= 'D'
}

// Intern returns b as a string, the one it returned last time when b is
// the same, so that a stream id repeated in every message costs nothing.
// last is the caller's memory of it, one per connection.
func Intern(last *string, b []byte) string {
	if string(b) != *last {
		*last = string(b)
	}
	return *last
}

// AppendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 passed through as bytes (the stream
// ids and the transports' mark names are ASCII).
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
