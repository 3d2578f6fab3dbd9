package openai

import (
	"bytes"
	"fmt"

	"github.com/framewire/framewire/internal/jsontext"
)

// scanner is a small pull parser for the JSON of stream chunks. It reads
// only what the stream needs, skips the rest, and allocates nothing itself:
// strings come back as slices of the input (or of a caller's buffer when
// they must be unescaped). Values it skips are checked only loosely; values
// it reads are checked strictly.
type scanner struct {
	b   []byte
	i   int
	err error
}

func (s *scanner) reset(b []byte) { s.b, s.i, s.err = b, 0, nil }

func (s *scanner) fail(what string) {
	if s.err == nil {
		s.err = fmt.Errorf("openai: invalid stream chunk JSON at byte %d: %s", s.i, what)
	}
	s.i = len(s.b)
}

func (s *scanner) ws() { s.i = jsontext.SkipSpace(s.b, s.i) }

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null consumes a JSON null if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return true
	}
	return false
}

func (s *scanner) literal(lit string) {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.fail("bad literal")
		return
	}
	s.i += len(lit)
}

// open starts a container ('{' or '['). It returns false for null or an error.
func (s *scanner) open(c byte) bool {
	if s.err != nil || s.null() {
		return false
	}
	if s.peek() != c {
		s.fail("unexpected value")
		return false
	}
	s.i++
	return true
}

// more reports whether another member or element follows in the container
// that end closes, consuming the separator. first must start true.
func (s *scanner) more(end byte, first *bool) bool {
	if s.err != nil {
		return false
	}
	c := s.peek()
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
	s.fail("expected ',' or end of container")
	return false
}

// key reads a member name and its colon. The name is raw (not unescaped).
func (s *scanner) key() []byte {
	k, _ := s.str()
	if s.i < len(s.b) && s.b[s.i] == ':' { // the usual compact form
		s.i++
		return k
	}
	if s.peek() != ':' {
		s.fail("expected ':'")
		return nil
	}
	s.i++
	return k
}

// str reads a string and returns its raw contents and whether they hold
// escapes. This is the hot path of the stream: short strings (member names)
// are scanned byte by byte, longer ones with a vectorised search.
func (s *scanner) str() (raw []byte, escaped bool) {
	if s.peek() != '"' {
		s.fail("expected string")
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
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			s.fail("unterminated string")
			return nil, false
		}
		end := i + j
		k := end - 1
		for k >= start && b[k] == '\\' {
			k--
		}
		i = end + 1
		if (end-1-k)%2 == 0 { // the quote is not escaped
			s.i = i
			raw = b[start:end]
			return raw, bytes.IndexByte(raw, '\\') >= 0
		}
	}
}

// skipString skips a string (the scanner is at its opening quote) with a
// vectorised search for the closing quote: skipped values (ids, model
// names) are usually longer than member names.
func (s *scanner) skipString() {
	b := s.b
	start := s.i + 1
	i := start
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			s.fail("unterminated string")
			return
		}
		end := i + j
		k := end - 1
		for k >= start && b[k] == '\\' {
			k--
		}
		i = end + 1
		if (end-1-k)%2 == 0 {
			s.i = i
			return
		}
	}
}

// appendString reads a string value (null reads as empty) and appends it,
// unescaped, to dst.
func (s *scanner) appendString(dst []byte) []byte {
	if s.null() {
		return dst
	}
	raw, esc := s.str()
	if s.err != nil {
		return dst
	}
	if !esc {
		return append(dst, raw...)
	}
	out, err := jsontext.AppendUnescaped(dst, raw)
	if err != nil {
		s.fail("bad escape")
		return dst
	}
	return out
}

// int reads an integer (null reads as 0; a fraction or exponent is
// dropped).
func (s *scanner) int() int {
	if s.null() {
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
		s.fail("expected number")
		return 0
	}
	s.number() // fraction and exponent, if any
	if neg {
		return -n
	}
	return n
}

func (s *scanner) number() {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
			s.i++
		default:
			return
		}
	}
}

// skip skips one value of any kind.
func (s *scanner) skip() {
	switch c := s.peek(); {
	case c == '"':
		s.skipString()
	case c == '{' || c == '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				if s.err != nil {
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
		s.fail("unterminated container")
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
		s.fail("unexpected value")
	}
}

// end checks that only white space is left.
func (s *scanner) end() {
	if s.peek() != 0 && s.err == nil {
		s.fail("trailing data")
	}
}
