package assemblyai

import (
	"bytes"
	"fmt"

	"github.com/framewire/framewire/internal/jsontext"
)

// scanner is a small pull parser over one server message: it reads what
// the Turn decoder asks for and skips the rest, without allocating.
// Values it reads are checked strictly (a string is a string without raw
// control characters, with valid escapes); values it skips only loosely.
// After the first error every call is a no-op.
type scanner struct {
	b   []byte
	i   int
	err error
}

func (s *scanner) reset(b []byte) { s.b, s.i, s.err = b, 0, nil }

func (s *scanner) fail(what string) {
	if s.err == nil {
		s.err = fmt.Errorf("assemblyai: bad message at byte %d: %s", s.i, what)
	}
	s.i = len(s.b)
}

// peek returns the next byte that is not white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.i = jsontext.SkipSpace(s.b, s.i)
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) literal(lit string) {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.fail("bad literal")
		return
	}
	s.i += len(lit)
}

// null consumes a null if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return true
	}
	return false
}

// open starts a container ('{' or '['); false for null, after an error,
// and (recording an error) for any other value.
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
// that end closes, consuming the comma; first must start true.
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
	s.fail("expected ',' or the end of a container")
	return false
}

// key reads a member name and its colon. A name with escapes (which
// AssemblyAI does not send) is unescaped into *buf.
func (s *scanner) key(buf *[]byte) []byte {
	k, esc := s.quoted()
	if esc {
		*buf = s.appendRaw((*buf)[:0], k)
		k = *buf
	}
	if s.peek() != ':' {
		s.fail("expected ':'")
		return nil
	}
	s.i++
	return k
}

// quoted reads a string and returns its raw contents and whether they
// hold escapes.
func (s *scanner) quoted() (raw []byte, escaped bool) {
	if s.peek() != '"' {
		s.fail("expected a string")
		return nil, false
	}
	start := s.i + 1
	end := s.closingQuote(start)
	if end < 0 {
		return nil, false
	}
	raw = s.b[start:end]
	return raw, bytes.IndexByte(raw, '\\') >= 0
}

// closingQuote finds the quote that ends the string whose contents start
// at start, moves past it and returns its offset, or -1 after an error.
func (s *scanner) closingQuote(start int) int {
	for i := start; ; {
		j := bytes.IndexByte(s.b[i:], '"')
		if j < 0 {
			s.fail("unterminated string")
			return -1
		}
		end := i + j
		k := end - 1
		for k >= start && s.b[k] == '\\' {
			k--
		}
		i = end + 1
		if (end-1-k)%2 == 0 { // an even run of backslashes: not escaped
			s.i = i
			return end
		}
	}
}

// appendString reads a string value (null reads as empty), checks it and
// appends it unescaped to dst.
func (s *scanner) appendString(dst []byte) []byte {
	if s.err != nil || s.null() {
		return dst
	}
	raw, _ := s.quoted()
	if s.err != nil {
		return dst
	}
	return s.appendRaw(dst, raw)
}

// appendRaw checks the raw contents of a string and appends them
// unescaped to dst.
func (s *scanner) appendRaw(dst, raw []byte) []byte {
	esc := false
	for _, c := range raw {
		if c == '\\' {
			esc = true
		}
		if c < ' ' {
			s.fail("control character in a string")
			return dst
		}
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

// boolean reads true, false or null (false).
func (s *scanner) boolean() bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return s.err == nil
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.fail("expected a boolean")
	}
	return false
}

// skip skips one value of any kind.
func (s *scanner) skip() {
	switch c := s.peek(); {
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
		s.fail("unterminated container")
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		for s.i++; s.i < len(s.b); s.i++ {
			if c := s.b[s.i]; !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				break
			}
		}
	default:
		s.fail("unexpected value")
	}
}

// end checks that only white space is left.
func (s *scanner) end() {
	if s.err == nil && s.peek() != 0 {
		s.fail("data after the message")
	}
}
