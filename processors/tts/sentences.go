package tts

import (
	"strings"
	"unicode/utf8"
)

// DefaultMaxSentenceBytes is the length past which a [SentenceAggregator]
// cuts text that has no sentence end, so a run-on answer still starts
// speaking.
const DefaultMaxSentenceBytes = 400

// SentenceAggregator groups streamed text (LLM tokens) into sentences, the
// unit a TTS service speaks. A sentence ends at '.', '!', '?' or '…'
// (with any closing quotes or brackets) followed by white space, at a CJK
// full stop, exclamation or question mark, or at a line break. It does not
// end inside a number (3.14), a URL or file name (example.com/a.b), after a
// known abbreviation (Dr., e.g., vs.), after an initial (J. R. R.), or after
// a list number at the start of a line (1.). Because the character after a
// period decides, a sentence is released only when that character arrives
// or the text is flushed.
//
// The zero value is ready to use. It is not safe for concurrent use.
type SentenceAggregator struct {
	// MaxBytes cuts a sentence that grows past it at the last comma or
	// space. Default: DefaultMaxSentenceBytes; negative disables the cut.
	MaxBytes int

	buf  []byte
	scan int // bytes of buf known not to end a sentence
}

// Add appends streamed text. Take the sentences it completed with
// [SentenceAggregator.Next].
func (a *SentenceAggregator) Add(text string) { a.buf = append(a.buf, text...) }

// Next returns the next complete sentence, trimmed, if there is one.
func (a *SentenceAggregator) Next() (string, bool) {
	for {
		end, ok := a.boundary()
		if !ok {
			return "", false
		}
		s := strings.TrimSpace(string(a.buf[:end]))
		a.consume(end)
		if s != "" {
			return s, true
		}
	}
}

// Flush returns the text still held, trimmed (possibly ""), and empties the
// aggregator. Call it at the end of an LLM response.
func (a *SentenceAggregator) Flush() string {
	s := strings.TrimSpace(string(a.buf))
	a.Reset()
	return s
}

// Reset drops the text held (on interruption).
func (a *SentenceAggregator) Reset() {
	a.buf, a.scan = a.buf[:0], 0
}

// Len returns the number of bytes held.
func (a *SentenceAggregator) Len() int { return len(a.buf) }

func (a *SentenceAggregator) consume(n int) {
	rest := copy(a.buf, a.buf[n:])
	a.buf, a.scan = a.buf[:rest], 0
}

// boundary finds the end of the first complete sentence in buf.
func (a *SentenceAggregator) boundary() (int, bool) {
	b := a.buf
	i := a.scan
	for i < len(b) {
		c := b[i]
		if c == '\n' {
			if hasText(b[:i]) {
				return i + 1, true
			}
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			if !utf8.FullRune(b[i:]) {
				break // the rest of the rune is still on its way
			}
			r, size = utf8.DecodeRune(b[i:])
		}
		switch r {
		case '。', '！', '？':
			j := skipClosers(b, i+size)
			if j == len(b) {
				return a.wait(i)
			}
			return j, true
		case '.', '!', '?', '…':
			j := i + size
			for j < len(b) && (b[j] == '.' || b[j] == '!' || b[j] == '?') {
				j++
			}
			j = skipClosers(b, j)
			if j == len(b) {
				return a.wait(i) // the next character decides
			}
			if isSpace(b[j]) && !(r == '.' && j == i+1 && a.keepsPeriod(i)) {
				return j, true
			}
			i = j
			continue
		}
		i += size
	}
	return a.wait(i)
}

// wait records that buf is known to hold no sentence end before i, and
// cuts it when it has grown past the maximum.
func (a *SentenceAggregator) wait(i int) (int, bool) {
	a.scan = i
	if max := a.maxBytes(); max > 0 && len(a.buf) > max {
		return cutPoint(a.buf, max), true
	}
	return 0, false
}

func (a *SentenceAggregator) maxBytes() int {
	if a.MaxBytes == 0 {
		return DefaultMaxSentenceBytes
	}
	return a.MaxBytes
}

// keepsPeriod reports whether the single period at buf[i], followed by
// white space, belongs to the word before it rather than ending a
// sentence: an abbreviation, an initial, a dotted word (e.g, U.S) or a list
// number at the start of a line.
func (a *SentenceAggregator) keepsPeriod(i int) bool {
	b := a.buf
	start := i
	for start > 0 && !isSpace(b[start-1]) && b[start-1] != '(' && b[start-1] != '"' {
		start--
	}
	word := b[start:i]
	if len(word) == 0 {
		return false
	}
	if len(word) == 1 && word[0] >= 'A' && word[0] <= 'Z' {
		return true // an initial
	}
	if allDigits(word) {
		// "1. First" at the start of a line is a list number; "in 1990. Then"
		// ends a sentence.
		return !hasTextOnLine(b[:start])
	}
	if dottedAbbreviation(word) {
		return true // e.g, i.e, U.S, a.m, Ph.D
	}
	_, ok := abbreviations[strings.ToLower(string(word))]
	return ok
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]struct{}{
	"mr": {}, "mrs": {}, "ms": {}, "dr": {}, "prof": {}, "sr": {}, "jr": {}, "st": {},
	"mt": {}, "lt": {}, "col": {}, "gen": {}, "capt": {}, "sgt": {}, "rev": {}, "hon": {},
	"vs": {}, "cf": {}, "al": {}, "approx": {}, "fig": {}, "figs": {}, "dept": {},
	"est": {}, "vol": {}, "ca": {}, "inc": {}, "ltd": {}, "co": {},
	"corp": {}, "jan": {}, "feb": {}, "mar": {}, "apr": {}, "jun": {}, "jul": {}, "aug": {},
	"sep": {}, "sept": {}, "oct": {}, "nov": {}, "dec": {}, "e.g": {}, "i.e": {},
}

// dottedAbbreviation reports whether word is made of letter groups of one
// or two letters joined by periods (e.g, U.S, Ph.D), unlike a host or file
// name (example.com, main.go).
func dottedAbbreviation(word []byte) bool {
	groups, n := 0, 0
	for _, c := range word {
		switch {
		case c == '.':
			if n == 0 {
				return false
			}
			groups, n = groups+1, 0
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			n++
			if n > 2 {
				return false
			}
		default:
			return false
		}
	}
	return groups > 0 && n > 0
}

func skipClosers(b []byte, j int) int {
	for j < len(b) {
		switch b[j] {
		case '"', '\'', ')', ']', '}', '*', '_':
			j++
			continue
		}
		if r, size := utf8.DecodeRune(b[j:]); r == '”' || r == '’' || r == '»' || r == '」' || r == '』' || r == '）' {
			j += size
			continue
		}
		break
	}
	return j
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func allDigits(w []byte) bool {
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func hasText(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return true
		}
	}
	return false
}

// hasTextOnLine reports whether the current line of b has any text.
func hasTextOnLine(b []byte) bool {
	for i := len(b) - 1; i >= 0 && b[i] != '\n'; i-- {
		if !isSpace(b[i]) {
			return true
		}
	}
	return false
}

// cutPoint picks where to cut an over-long sentence: after the last comma
// or semicolon followed by a space in the second half, else at the last
// space, else at max (on a rune boundary).
func cutPoint(b []byte, max int) int {
	limit := min(len(b), max)
	for i := limit - 1; i > limit/2; i-- {
		if (b[i] == ',' || b[i] == ';') && i+1 < len(b) && isSpace(b[i+1]) {
			return i + 1
		}
	}
	for i := limit - 1; i > 0; i-- {
		if isSpace(b[i]) {
			return i + 1
		}
	}
	for limit > 0 && limit < len(b) && !utf8.RuneStart(b[limit]) {
		limit--
	}
	if limit == 0 {
		return len(b)
	}
	return limit
}
