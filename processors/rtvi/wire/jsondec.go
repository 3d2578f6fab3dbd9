package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/framewire/framewire/internal/jsontext"
)

// This file holds the hand-written JSON reader the inbound decoders use. A
// message is first checked once for well-formed JSON ([validJSON]); the
// typed decoders then walk it with a reader, so a type mismatch is reported
// as a field error with a path, never as a syntax error, and nothing
// depends on reflection or map iteration order.

// maxDepth bounds nesting so hostile input cannot exhaust the stack. The
// deepest real message (a snapshot of depth 10) needs about 30 levels.
const maxDepth = 512

// ErrInvalidJSON is returned (wrapped) for input that is not well-formed
// JSON. The processor logs such input and drops it, as §1.1 requires.
var ErrInvalidJSON = errors.New("rtvi: invalid JSON")

// kind is the type of the next JSON value.
type kind uint8

const (
	kindInvalid kind = iota
	kindObject
	kindArray
	kindString
	kindNumber
	kindBool
	kindNull
)

func (k kind) String() string {
	switch k {
	case kindObject:
		return "object"
	case kindArray:
		return "array"
	case kindString:
		return "string"
	case kindNumber:
		return "number"
	case kindBool:
		return "boolean"
	case kindNull:
		return "null"
	}
	return "invalid value"
}

// plainByte marks the bytes a string can hold without a closer look:
// printable ASCII other than the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// reader walks a JSON document. Its methods never panic on any input.
type reader struct {
	b       []byte
	i       int
	depth   int
	scratch []byte // unescaped string values
	keyBuf  []byte // unescaped object keys
	nodes   []Node // children being decoded (see decodeChildren)
}

func (r *reader) syntax(msg string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrInvalidJSON, msg, r.i)
}

func (r *reader) ws() { r.i = jsontext.SkipSpace(r.b, r.i) }

// peek returns the kind of the next value, after whitespace.
func (r *reader) peek() kind {
	r.ws()
	if r.i >= len(r.b) {
		return kindInvalid
	}
	switch c := r.b[r.i]; {
	case c == '{':
		return kindObject
	case c == '[':
		return kindArray
	case c == '"':
		return kindString
	case c == '-' || (c >= '0' && c <= '9'):
		return kindNumber
	case c == 't' || c == 'f':
		return kindBool
	case c == 'n':
		return kindNull
	}
	return kindInvalid
}

func (r *reader) literal(lit string) error {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return r.syntax("invalid literal")
	}
	r.i += len(lit)
	return nil
}

// null consumes a null literal if one is next.
func (r *reader) null() bool {
	if r.peek() == kindNull && r.literal("null") == nil {
		return true
	}
	return false
}

// object iterates the members of an object. fn gets each key (valid only
// until fn reads the member's value) and must consume the value.
func (r *reader) object(fn func(key []byte) error) error {
	if r.peek() != kindObject {
		return r.syntax("expected object")
	}
	r.depth++
	if r.depth > maxDepth {
		return r.syntax("nesting too deep")
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		r.depth--
		return nil
	}
	for {
		if r.peek() != kindString {
			return r.syntax("expected object key")
		}
		key, err := r.stringBytes(&r.keyBuf)
		if err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return r.syntax("expected ':'")
		}
		r.i++
		if err := fn(key); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) {
			return r.syntax("unterminated object")
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return nil
		default:
			return r.syntax("expected ',' or '}'")
		}
	}
}

// array iterates the elements of an array; fn must consume each element.
func (r *reader) array(fn func(i int) error) error {
	if r.peek() != kindArray {
		return r.syntax("expected array")
	}
	r.depth++
	if r.depth > maxDepth {
		return r.syntax("nesting too deep")
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		r.depth--
		return nil
	}
	for n := 0; ; n++ {
		if err := fn(n); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) {
			return r.syntax("unterminated array")
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return nil
		default:
			return r.syntax("expected ',' or ']'")
		}
	}
}

// stringBytes reads a string value. The result aliases the input when the
// string has no escapes, and buf otherwise; either way it is only valid
// until the next read into buf.
func (r *reader) stringBytes(buf *[]byte) ([]byte, error) {
	if r.peek() != kindString {
		return nil, r.syntax("expected string")
	}
	r.i++
	start := r.i
	for r.i < len(r.b) {
		for r.i < len(r.b) && plainByte[r.b[r.i]] {
			r.i++
		}
		if r.i >= len(r.b) {
			break
		}
		c := r.b[r.i]
		switch {
		case c == '"':
			s := r.b[start:r.i]
			r.i++
			return s, nil
		case c == '\\':
			return r.unescape(start, buf)
		case c < 0x20:
			return nil, r.syntax("control character in string")
		case c < utf8.RuneSelf:
			r.i++
		default:
			rn, size := utf8.DecodeRune(r.b[r.i:])
			if rn == utf8.RuneError && size == 1 {
				return nil, r.syntax("invalid UTF-8 in string")
			}
			r.i += size
		}
	}
	return nil, r.syntax("unterminated string")
}

// unescape continues a string that has escapes, from r.i (at a backslash);
// start is the first byte of the string's content.
func (r *reader) unescape(start int, buf *[]byte) ([]byte, error) {
	out := append((*buf)[:0], r.b[start:r.i]...)
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			*buf = out
			return out, nil
		case c == '\\':
			var err error
			if out, r.i, err = jsontext.AppendEscape(out, r.b, r.i); err != nil {
				return nil, r.escapeError(err)
			}
		case c < 0x20:
			return nil, r.syntax("control character in string")
		case c < utf8.RuneSelf:
			out = append(out, c)
			r.i++
		default:
			rn, size := utf8.DecodeRune(r.b[r.i:])
			if rn == utf8.RuneError && size == 1 {
				return nil, r.syntax("invalid UTF-8 in string")
			}
			out = append(out, r.b[r.i:r.i+size]...)
			r.i += size
		}
	}
	return nil, r.syntax("unterminated string")
}

// escapeError words a jsontext escape error; r.i is where decoding stopped.
func (r *reader) escapeError(err error) error {
	switch err {
	case jsontext.ErrUnterminatedEscape:
		return r.syntax("unterminated escape")
	case jsontext.ErrInvalidUnicodeEscape:
		return r.syntax("invalid \\u escape")
	}
	return r.syntax("invalid escape")
}

// str reads a string value into a new Go string.
func (r *reader) str() (string, error) {
	b, err := r.stringBytes(&r.scratch)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// numberToken reads a number and returns its text, checking the grammar.
func (r *reader) numberToken() ([]byte, bool, error) {
	start := r.i
	integral := true
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(r.b) && r.b[r.i] == '0':
		r.i++
	case r.i < len(r.b) && r.b[r.i] >= '1' && r.b[r.i] <= '9':
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
		}
	default:
		return nil, false, r.syntax("invalid number")
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		integral = false
		r.i++
		d := r.i
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
		}
		if r.i == d {
			return nil, false, r.syntax("invalid number")
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		integral = false
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		d := r.i
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
		}
		if r.i == d {
			return nil, false, r.syntax("invalid number")
		}
	}
	return r.b[start:r.i], integral, nil
}

// errNotInteger is returned for numbers with a fraction or out of range.
var errNotInteger = errors.New("expected an integer")

// integer reads a number that must have an integral value (1 and 1.0 are
// accepted, 1.5 is not), as pydantic's lax mode does.
func (r *reader) integer() (int64, error) {
	if r.peek() != kindNumber {
		return 0, r.syntax("expected number")
	}
	tok, integral, err := r.numberToken()
	if err != nil {
		return 0, err
	}
	if integral {
		neg := tok[0] == '-'
		digits := tok
		if neg {
			digits = tok[1:]
		}
		var v uint64
		for _, c := range digits {
			if v > (math.MaxInt64+1)/10 {
				return 0, errNotInteger
			}
			v = v*10 + uint64(c-'0')
		}
		if neg {
			if v > math.MaxInt64+1 {
				return 0, errNotInteger
			}
			return -int64(v), nil
		}
		if v > math.MaxInt64 {
			return 0, errNotInteger
		}
		return int64(v), nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, errNotInteger
	}
	return int64(f), nil
}

// number reads any number as a float64.
func (r *reader) number() (float64, error) {
	if r.peek() != kindNumber {
		return 0, r.syntax("expected number")
	}
	tok, _, err := r.numberToken()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, errors.New("number out of range")
	}
	return f, nil
}

// boolean reads true or false.
func (r *reader) boolean() (bool, error) {
	if r.peek() != kindBool {
		return false, r.syntax("expected boolean")
	}
	if r.b[r.i] == 't' {
		return true, r.literal("true")
	}
	return false, r.literal("false")
}

// skip consumes one value of any kind, checking its syntax.
func (r *reader) skip() error {
	switch r.peek() {
	case kindObject:
		return r.object(func([]byte) error { return r.skip() })
	case kindArray:
		return r.array(func(int) error { return r.skip() })
	case kindString:
		_, err := r.stringBytes(&r.scratch)
		return err
	case kindNumber:
		_, _, err := r.numberToken()
		return err
	case kindBool:
		_, err := r.boolean()
		return err
	case kindNull:
		return r.literal("null")
	}
	if r.i >= len(r.b) {
		return r.syntax("unexpected end of input")
	}
	return r.syntax("unexpected character")
}

// raw consumes one value and returns a copy of its bytes.
func (r *reader) raw() (RawJSON, error) {
	r.ws()
	start := r.i
	if err := r.skip(); err != nil {
		return nil, err
	}
	return RawJSON(append([]byte(nil), r.b[start:r.i]...)), nil
}

// validJSON reports whether b holds exactly one well-formed JSON value
// (surrounded by optional whitespace), with a descriptive error.
func validJSON(b []byte) error {
	r := reader{b: b}
	if err := r.skip(); err != nil {
		return err
	}
	r.ws()
	if r.i != len(b) {
		return r.syntax("trailing data after value")
	}
	return nil
}

// fieldError is a validation failure inside a message's data, with the
// path of the offending member ("tree.root.children[2].ref").
type fieldError struct {
	path  []string // innermost first
	msg   string
	cause error // a sentinel the error wraps (ErrAudioFormat), or nil
}

func (e *fieldError) Unwrap() error { return e.cause }

func (e *fieldError) Error() string {
	var sb strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		p := e.path[i]
		if sb.Len() > 0 && p[0] != '[' {
			sb.WriteByte('.')
		}
		sb.WriteString(p)
	}
	if sb.Len() == 0 {
		return e.msg
	}
	return sb.String() + ": " + e.msg
}

// at adds a path segment to a field error (or turns any other error into one).
func at(err error, seg string) error {
	if err == nil {
		return nil
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		fe.path = append(fe.path, seg)
		return fe
	}
	return &fieldError{path: []string{seg}, msg: err.Error()}
}

// atIndex adds an array index to a field error; it builds the segment
// only when there is an error.
func atIndex(err error, i int) error {
	if err == nil {
		return nil
	}
	return at(err, "["+strconv.Itoa(i)+"]")
}

// wrongType builds the error for a member of the wrong JSON type.
func wrongType(want string, got kind) error {
	return &fieldError{msg: "expected " + want + ", got " + got.String()}
}

func missing(field string) error {
	return &fieldError{path: []string{field}, msg: "field required"}
}

// readString reads a string member, with a type error for anything else.
func (r *reader) readString() (string, error) {
	if k := r.peek(); k != kindString {
		return "", wrongType("string", k)
	}
	return r.str()
}

// readOptString reads a string or null; null reports isNull.
func (r *reader) readOptString() (s string, isNull bool, err error) {
	if r.null() {
		return "", true, nil
	}
	s, err = r.readString()
	return s, false, err
}

// readInt reads an integer member.
func (r *reader) readInt() (int64, error) {
	if k := r.peek(); k != kindNumber {
		return 0, wrongType("integer", k)
	}
	return r.integer()
}

// readBool reads a boolean member.
func (r *reader) readBool() (bool, error) {
	if k := r.peek(); k != kindBool {
		return false, wrongType("boolean", k)
	}
	return r.boolean()
}

// readObject checks that the next value is an object and iterates it.
func (r *reader) readObject(fn func(key []byte) error) error {
	if k := r.peek(); k != kindObject {
		return wrongType("object", k)
	}
	return r.object(fn)
}

// readArray checks that the next value is an array and iterates it.
func (r *reader) readArray(fn func(i int) error) error {
	if k := r.peek(); k != kindArray {
		return wrongType("array", k)
	}
	return r.array(fn)
}

// span consumes one value and returns a reader over just that value, so a
// decoder can fail inside it while the outer walk carries on.
func (r *reader) span() (reader, error) {
	r.ws()
	start := r.i
	if err := r.skip(); err != nil {
		return reader{}, err
	}
	return reader{b: r.b[start:r.i]}, nil
}

// enter consumes the opening bracket of an object or array, counting
// depth; leave is done by member and element when they reach the end.
func (r *reader) enter(open byte) error {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != open {
		return r.syntax("expected " + string(open))
	}
	r.depth++
	if r.depth > maxDepth {
		return r.syntax("nesting too deep")
	}
	r.i++
	return nil
}

// member advances to the next member of an object entered with enter,
// returning its key (valid until the value is read), or ok false after
// the closing brace. first must start true.
func (r *reader) member(first *bool) (key []byte, ok bool, err error) {
	r.ws()
	if r.i >= len(r.b) {
		return nil, false, r.syntax("unterminated object")
	}
	if r.b[r.i] == '}' && *first {
		r.i++
		r.depth--
		return nil, false, nil
	}
	if !*first {
		switch r.b[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return nil, false, nil
		default:
			return nil, false, r.syntax("expected ',' or '}'")
		}
	}
	*first = false
	if r.peek() != kindString {
		return nil, false, r.syntax("expected object key")
	}
	key, err = r.stringBytes(&r.keyBuf)
	if err != nil {
		return nil, false, err
	}
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		return nil, false, r.syntax("expected ':'")
	}
	r.i++
	return key, true, nil
}

// element advances to the next element of an array entered with enter,
// or returns ok false after the closing bracket. first must start true.
func (r *reader) element(first *bool) (ok bool, err error) {
	r.ws()
	if r.i >= len(r.b) {
		return false, r.syntax("unterminated array")
	}
	if r.b[r.i] == ']' && *first {
		r.i++
		r.depth--
		return false, nil
	}
	if !*first {
		switch r.b[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return false, nil
		default:
			return false, r.syntax("expected ',' or ']'")
		}
	}
	*first = false
	return true, nil
}
