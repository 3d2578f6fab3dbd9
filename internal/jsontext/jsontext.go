package jsontext

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// The ways an escape sequence can be malformed. Callers compare against
// them to word their own error; they carry no position (see AppendEscape).
var (
	// ErrUnterminatedEscape: the input ends right after a backslash.
	ErrUnterminatedEscape = errors.New("jsontext: unterminated escape")
	// ErrInvalidEscape: a backslash is followed by a byte that starts no
	// JSON escape.
	ErrInvalidEscape = errors.New("jsontext: invalid escape")
	// ErrInvalidUnicodeEscape: \u is not followed by four hex digits.
	ErrInvalidUnicodeEscape = errors.New(`jsontext: invalid \u escape`)
)

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON white space (space, tab, newline, carriage return), or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return i
		}
		i++
	}
	return i
}

// AppendEscape decodes the escape sequence that starts at b[i] (a
// backslash), appends its UTF-8 encoding to dst and returns dst and the
// offset just past the sequence. A \u escape of a high surrogate takes the
// \u escape of a low surrogate that follows it as the other half of the
// pair; a surrogate without its other half becomes U+FFFD, and the escape
// after an unpaired high surrogate is left for the next call, as
// encoding/json does.
//
// On failure dst comes back unchanged with one of the Err values and the
// offset where decoding stopped: i for ErrUnterminatedEscape, just past
// the escape letter for ErrInvalidEscape, and the offset of the four hex
// digits that are missing or wrong for ErrInvalidUnicodeEscape (in the
// second escape of a pair, that second escape's digits).
func AppendEscape(dst, b []byte, i int) ([]byte, int, error) {
	if i+1 >= len(b) {
		return dst, i, ErrUnterminatedEscape
	}
	e := b[i+1]
	i += 2
	switch e {
	case '"', '\\', '/':
		return append(dst, e), i, nil
	case 'b':
		return append(dst, '\b'), i, nil
	case 'f':
		return append(dst, '\f'), i, nil
	case 'n':
		return append(dst, '\n'), i, nil
	case 'r':
		return append(dst, '\r'), i, nil
	case 't':
		return append(dst, '\t'), i, nil
	case 'u':
	default:
		return dst, i, ErrInvalidEscape
	}
	r, ok := hex4(b, i)
	if !ok {
		return dst, i, ErrInvalidUnicodeEscape
	}
	i += 4
	if utf16.IsSurrogate(r) {
		hi := r
		r = utf8.RuneError
		if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
			lo, ok := hex4(b, i+2)
			if !ok {
				return dst, i + 2, ErrInvalidUnicodeEscape
			}
			if full := utf16.DecodeRune(hi, lo); full != utf8.RuneError {
				r = full
				i += 6
			}
		}
	}
	return utf8.AppendRune(dst, r), i, nil
}

// AppendUnescaped appends raw, the contents of a JSON string without its
// quotes, to dst with its escapes decoded as AppendEscape decodes them.
// Bytes outside escapes are copied as they are: control characters and
// invalid UTF-8 are the caller's to reject (encoding/json would reject the
// one and replace the other with U+FFFD). On a malformed escape it returns
// the error and dst with what came before the escape appended; the
// dst's capacity is reused, so with room enough it does not allocate.
func AppendUnescaped(dst, raw []byte) ([]byte, error) {
	var err error
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		if dst, i, err = AppendEscape(dst, raw, i); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if len(b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
