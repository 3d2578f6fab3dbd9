package jsontext

import (
	"bytes"
	"fmt"
)

// Scanner is a small pull parser for the JSON of stream events (an SSE
// event's data, a websocket message). It reads only what a decoder asks
// for, skips the rest, and allocates nothing once its scratch has grown:
// strings come back as slices of the input, or appended unescaped to the
// caller's buffer. Values it skips are checked loosely; values it reads
// are checked strictly. After the first error every call is a no-op and
// [Scanner.Err] reports it. The zero value is ready after [Scanner.Reset].
//
// A decoder walks an object like this:
//
//	if s.Open('{') {
//		for first := true; s.More('}', &first); {
//			switch string(s.Key()) {
//			case "text":
//				buf = s.AppendString(buf)
//			default:
//				s.Skip()
//			}
//		}
//	}
type Scanner struct {
	b   []byte
	i   int
	err error
	key []byte // a member name unescaped in Strict mode

	// Prefix starts the text of the errors the scanner reports, such as
	// "anthropic".
	Prefix string
	// Strict reads strings as encoding/json does where the lenient default
	// takes a shortcut: a string value it reads fails on a raw control
	// character, and a member name with escapes is unescaped before it is
	// returned (by default names come back raw, since the names decoders
	// look for have none).
	Strict bool
}

// Reset starts scanning b.
func (s *Scanner) Reset(b []byte) { s.b, s.i, s.err = b, 0, nil }

// Err returns the first error, or nil.
func (s *Scanner) Err() error { return s.err }

// Fail records an error at the current offset (the first one wins) and
// stops the scan.
func (s *Scanner) Fail(what string) {
	if s.err == nil {
		s.err = fmt.Errorf("%s: invalid stream event JSON at byte %d: %s", s.Prefix, s.i, what)
	}
	s.i = len(s.b)
}

func (s *Scanner) ws() { s.i = SkipSpace(s.b, s.i) }

// Peek returns the next non-space byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// Null consumes a JSON null if one is next.
func (s *Scanner) Null() bool {
	if s.Peek() == 'n' {
		s.literal("null")
		return true
	}
	return false
}

func (s *Scanner) literal(lit string) {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.Fail("bad literal")
		return
	}
	s.i += len(lit)
}

// Open starts a container ('{' or '['). It returns false for null, for
// another kind of value (which is an error) and after an error.
func (s *Scanner) Open(c byte) bool {
	if s.err != nil || s.Null() {
		return false
	}
	if s.Peek() != c {
		s.Fail("unexpected value")
		return false
	}
	s.i++
	return true
}

// More reports whether another member or element follows in the container
// that end closes, consuming the separator. first must start true.
func (s *Scanner) More(end byte, first *bool) bool {
	if s.err != nil {
		return false
	}
	c := s.Peek()
	if *first {
		*first = false
		if c == end {
			s.i++
			return false
		}
		return true
	}
	switch c {
	case ',':
		s.i++
		return true
	case end:
		s.i++
		return false
	}
	s.Fail("expected ',' or end of container")
	return false
}

// Key reads a member name and its colon. The name is raw (not unescaped)
// unless the scanner is Strict; a Strict name with escapes is valid until
// the next call.
func (s *Scanner) Key() []byte {
	k, esc := s.str()
	if esc && s.Strict {
		s.key = s.appendRaw(s.key[:0], k, true)
		k = s.key
	}
	if s.i < len(s.b) && s.b[s.i] == ':' {
		s.i++
		return k
	}
	if s.Peek() != ':' {
		s.Fail("expected ':'")
		return nil
	}
	s.i++
	return k
}

// str reads a string and returns its raw contents and whether they hold
// escapes. Short strings (member names) are scanned byte by byte, longer
// ones with a vectorised search for the closing quote.
func (s *Scanner) str() (raw []byte, escaped bool) {
	if s.Peek() != '"' {
		s.Fail("expected string")
		return nil, false
	}
	b := s.b
	start := s.i + 1
	i := start
	for limit := min(len(b), start+16); i < limit; i++ {
		switch b[i] {
		case '"':
			s.i = i + 1
			return b[start:i], false
		case '\\':
			limit = 0 // escapes: take the general path
		}
	}
	end := s.closingQuote(i)
	if end < 0 {
		return nil, false
	}
	raw = b[start:end]
	return raw, bytes.IndexByte(raw, '\\') >= 0
}

// closingQuote finds the quote that ends the string whose contents start
// at or before from, moves past it and returns its offset, or -1 after
// recording an error.
func (s *Scanner) closingQuote(from int) int {
	b := s.b
	start := s.i + 1
	i := from
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			s.Fail("unterminated string")
			return -1
		}
		end := i + j
		k := end - 1
		for k >= start && b[k] == '\\' {
			k--
		}
		i = end + 1
		if (end-1-k)%2 == 0 { // the quote is not escaped
			s.i = i
			return end
		}
	}
}

// AppendString reads a string value (null reads as empty) and appends it,
// unescaped, to dst.
func (s *Scanner) AppendString(dst []byte) []byte {
	if s.Null() {
		return dst
	}
	raw, esc := s.str()
	if s.err != nil {
		return dst
	}
	return s.appendRaw(dst, raw, esc)
}

// String reads a string value as a new string (null reads as "").
func (s *Scanner) String() string {
	if s.Null() {
		return ""
	}
	raw, esc := s.str()
	if s.err != nil {
		return ""
	}
	if !esc {
		if !s.clean(raw) {
			return ""
		}
		return string(raw)
	}
	return string(s.appendRaw(nil, raw, esc))
}

// appendRaw appends the raw contents of a string, which hold escapes when
// esc is set, to dst unescaped, after checking them with clean.
func (s *Scanner) appendRaw(dst, raw []byte, esc bool) []byte {
	if !s.clean(raw) {
		return dst
	}
	if !esc {
		return append(dst, raw...)
	}
	out, err := AppendUnescaped(dst, raw)
	if err != nil {
		s.Fail("bad escape")
		return dst
	}
	return out
}

// clean reports whether the raw contents of a string are acceptable: in
// Strict mode, free of raw control characters (recording an error if not).
func (s *Scanner) clean(raw []byte) bool {
	if !s.Strict {
		return true
	}
	for _, c := range raw {
		if c < ' ' {
			s.Fail("control character in a string")
			return false
		}
	}
	return true
}

// Bool reads true, false or null (false).
func (s *Scanner) Bool() bool {
	switch s.Peek() {
	case 't':
		s.literal("true")
		return s.err == nil
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.Fail("expected a boolean")
	}
	return false
}

// Equal reads a string value and reports whether it is lit (compared raw,
// so lit must need no escaping).
func (s *Scanner) Equal(lit string) bool {
	if s.Null() {
		return false
	}
	raw, _ := s.str()
	return string(raw) == lit
}

// Int reads an integer (null reads as 0; a fraction or exponent is
// dropped; magnitudes beyond 2^40 saturate).
func (s *Scanner) Int() int {
	if s.Null() {
		return 0
	}
	s.ws()
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	start, n := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if n < 1<<40 {
			n = n*10 + int(s.b[s.i]-'0')
		}
		s.i++
	}
	if s.i == start {
		s.Fail("expected number")
		return 0
	}
	s.number()
	if neg {
		return -n
	}
	return n
}

func (s *Scanner) number() {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
			s.i++
		default:
			return
		}
	}
}

// Raw skips one value and returns its text, a slice of the input.
func (s *Scanner) Raw() []byte {
	s.ws()
	start := s.i
	s.Skip()
	if s.err != nil {
		return nil
	}
	return s.b[start:s.i]
}

// Skip skips one value of any kind.
func (s *Scanner) Skip() {
	switch c := s.Peek(); {
	case c == '"':
		s.closingQuote(s.i + 1)
	case c == '{' || c == '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if s.closingQuote(s.i+1) < 0 {
					return
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return
				}
			}
			s.i++
		}
		s.Fail("unterminated container")
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		s.i++
		s.number()
	default:
		s.Fail("unexpected value")
	}
}

// End checks that only white space is left.
func (s *Scanner) End() {
	if s.Peek() != 0 && s.err == nil {
		s.Fail("trailing data")
	}
}
