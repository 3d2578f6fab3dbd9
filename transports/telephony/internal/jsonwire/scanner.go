package jsonwire

import "bytes"

// MaxDepth is how deep a [Scanner] follows nested objects and arrays in a
// value it skips; deeper, it gives up.
const MaxDepth = 32

// Scanner walks one JSON text for a provider's media fast path: the media
// messages, nearly all of a call's, are read without encoding/json and
// without allocating. It is strict: at anything it does not read exactly
// as encoding/json would (an escaped key or string, non-ASCII, a key that
// matches a field only case-insensitively, a field of another event), the
// caller gives up and takes encoding/json's path, which also reports the
// errors. Each provider's FuzzDecodeFastPath holds the two paths equal.
//
// A Scanner reports success with its bool results and nothing else: false
// means "not here", never an error to show.
type Scanner struct {
	b     []byte
	i     int
	depth int
}

// NewScanner returns a Scanner at the start of b.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

func (s *Scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips space and then c, if c is next.
func (s *Scanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// PlainString reads a string of printable ASCII without escapes and
// returns its contents, a subslice of the text.
func (s *Scanner) PlainString() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// Value skips one JSON value, checking its grammar, and returns its text,
// a subslice of the text.
func (s *Scanner) Value() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) {
		return nil, false
	}
	start := s.i
	ok := false
	switch c := s.b[s.i]; {
	case c == '"':
		ok = s.skipString()
	case c == '{':
		ok = s.skipObject()
	case c == '[':
		ok = s.skipArray()
	case c == 't':
		ok = s.literal("true")
	case c == 'f':
		ok = s.literal("false")
	case c == 'n':
		ok = s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		ok = s.skipNumber()
	}
	if !ok {
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *Scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

func (s *Scanner) skipString() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.b) {
				return false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) {
					return false
				}
				for _, h := range s.b[j+1 : j+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func (s *Scanner) skipNumber() bool {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

func (s *Scanner) skipObject() bool {
	if s.depth++; s.depth > MaxDepth {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // {
	if s.consume('}') {
		return true
	}
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.skipString() || !s.consume(':') {
			return false
		}
		if _, ok := s.Value(); !ok {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

func (s *Scanner) skipArray() bool {
	if s.depth++; s.depth > MaxDepth {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // [
	if s.consume(']') {
		return true
	}
	for {
		if _, ok := s.Value(); !ok {
			return false
		}
		if s.consume(']') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// Members calls member for each key of the object that comes next, with
// the scanner at the key's value; member reads the value (with
// [Scanner.PlainString], [Scanner.Value] or a nested Members) or returns
// false to give up. A key must be a plain string (see
// [Scanner.PlainString]).
func (s *Scanner) Members(member func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		key, ok := s.PlainString()
		if !ok || !s.consume(':') || !member(key) {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// End reports whether only space is left.
func (s *Scanner) End() bool {
	s.space()
	return s.i == len(s.b)
}

// Foreign reports whether encoding/json could match key to one of fields
// other than exactly (it folds case, and some non-ASCII letters): the fast
// path then gives up.
func Foreign(key []byte, fields ...string) bool {
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	for _, f := range fields {
		if bytes.EqualFold(key, []byte(f)) {
			return true
		}
	}
	return false
}
