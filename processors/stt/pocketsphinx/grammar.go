package pocketsphinx

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a [Grammar]. They keep the finite-state graph PocketSphinx
// builds from it small enough to compile in milliseconds between two
// utterances.
const (
	// MaxItems bounds the items of a grammar; later ones are left out.
	MaxItems = 1000
	// MaxPhrasings bounds the phrasings of a grammar; later ones are left out.
	MaxPhrasings = 200
	// MaxWords bounds the words of one item or phrasing; longer texts are
	// cut after MaxWords words.
	MaxWords = 12
	// MaxGrammarBytes bounds the JSGF source of a grammar; items and
	// phrasings that would make it longer are left out.
	MaxGrammarBytes = 64 << 10
	// maxTextBytes bounds one input text: the rest is ignored.
	maxTextBytes = 1024
)

// Slot marks where an item goes in a phrasing: "where is the {item}".
const Slot = "{item}"

// JSGF rule names of a built grammar.
const (
	itemRule   = "<item>"
	publicRule = "<utterance>"
)

// Grammar is what the engine listens for before it falls back to its
// general language model: a JSGF grammar, either built from phrasings and
// items by [NewGrammar] or given as source by [ParseJSGF]. A Grammar is
// immutable and safe to share.
type Grammar struct {
	// Built grammars: word sequences, with itemRule standing for the slot.
	phrasings [][]string
	items     [][]string
	// dropped counts the texts left out by the bounds.
	dropped int
	// src is the source of a grammar given as JSGF; "" for built ones.
	src string
}

// NewGrammar builds the grammar of the utterances that phrasings and items
// make. Items are the things a user may name (product names, headings,
// form labels); phrasings are what they say around them. A phrasing
// containing [Slot] takes any item in its place ("where is the {item}");
// one without is a fixed phrase ("explain this"). With no phrasings, the
// grammar is the bare items.
//
// Texts are reduced to lower-case dictionary words: punctuation and JSGF's
// special characters are word breaks, numbers are spelled out ("17" →
// "seventeen"), "&", "+" and "%" become "and", "plus" and "percent", and
// letters and digits that meet are split ("s25" → "s twenty five").
// Duplicates and texts that leave no words are skipped; texts past the
// package limits (MaxItems, MaxPhrasings, MaxWords, MaxGrammarBytes) are
// left out and counted by [Grammar.Dropped]. It fails only when nothing
// is left to listen for.
func NewGrammar(phrasings, items []string) (*Grammar, error) {
	g := &Grammar{}
	size := len(header) + len(itemRule) + len(publicRule) + 16
	seen := make(map[string]bool)
	for _, text := range items {
		w := Words(text)
		key := strings.Join(w, " ")
		if len(w) == 0 || seen[key] {
			continue
		}
		if len(g.items) >= MaxItems || size+len(key)+3 > MaxGrammarBytes/2 {
			g.dropped++
			continue
		}
		seen[key] = true
		size += len(key) + 3
		g.items = append(g.items, w)
	}
	clear(seen)
	for _, text := range phrasings {
		w := phrasingWords(text)
		key := strings.Join(w, " ")
		if len(w) == 0 || seen[key] || (len(g.items) == 0 && hasSlot(w)) {
			continue
		}
		if len(g.phrasings) >= MaxPhrasings || size+len(key)+3 > MaxGrammarBytes {
			g.dropped++
			continue
		}
		seen[key] = true
		size += len(key) + 3
		g.phrasings = append(g.phrasings, w)
	}
	if len(g.phrasings) == 0 && len(g.items) > 0 {
		g.phrasings = [][]string{{itemRule}}
	}
	if len(g.phrasings) == 0 {
		return nil, errors.New("pocketsphinx: the grammar has no phrase: every phrasing and item was empty")
	}
	if !g.usesItems() {
		g.items = nil
	}
	return g, nil
}

// ParseJSGF returns a grammar given as JSGF source, used as is. Its public
// rules are what the engine listens for; its words must be in the
// dictionary, or the engine cannot use it (and keeps the general model).
// It checks only the bounds and the header: PocketSphinx parses it when
// the engine applies it.
func ParseJSGF(src string) (*Grammar, error) {
	switch {
	case len(src) > MaxGrammarBytes:
		return nil, fmt.Errorf("pocketsphinx: JSGF grammar of %d bytes is over the limit of %d", len(src), MaxGrammarBytes)
	case !utf8.ValidString(src) || strings.IndexByte(src, 0) >= 0:
		return nil, errors.New("pocketsphinx: JSGF grammar is not valid UTF-8 text")
	case !strings.HasPrefix(strings.TrimSpace(src), "#JSGF"):
		return nil, errors.New("pocketsphinx: JSGF grammar does not start with a #JSGF header")
	case !strings.Contains(src, "public"):
		return nil, errors.New("pocketsphinx: JSGF grammar has no public rule")
	}
	return &Grammar{src: src}, nil
}

// Dropped returns how many texts [NewGrammar] left out because of the
// package limits.
func (g *Grammar) Dropped() int {
	if g == nil {
		return 0
	}
	return g.dropped
}

const header = "#JSGF V1.0;\ngrammar framewire;\n"

// JSGF returns the grammar's JSGF source.
func (g *Grammar) JSGF() string {
	if g == nil {
		return ""
	}
	if g.src != "" {
		return g.src
	}
	var b strings.Builder
	b.WriteString(header)
	if len(g.items) > 0 {
		b.WriteString(itemRule)
		b.WriteString(" = ")
		writeAlternatives(&b, g.items)
		b.WriteString(";\n")
	}
	b.WriteString("public ")
	b.WriteString(publicRule)
	b.WriteString(" = ")
	writeAlternatives(&b, g.phrasings)
	b.WriteString(";\n")
	return b.String()
}

func writeAlternatives(b *strings.Builder, alts [][]string) {
	for i, words := range alts {
		if i > 0 {
			b.WriteString(" | ")
		}
		for j, w := range words {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
}

// restrict returns the grammar without the items and phrasings that use a
// word known rejects, a word that is not in the decoder's dictionary, and
// the words it left out. Unless noSpelling, a word that is not known but
// whose letters are ("usb") is spelled out instead ("u s b"). A grammar
// given as source is returned as is.
func (g *Grammar) restrict(known func(string) bool, noSpelling bool) (*Grammar, []string) {
	if g.src != "" {
		return g, nil
	}
	var missing []string
	memo := make(map[string][]string)
	fix := func(words []string) ([]string, bool) {
		out := make([]string, 0, len(words))
		ok := true
		for _, w := range words {
			if w == itemRule {
				out = append(out, w)
				continue
			}
			sp, seen := memo[w]
			if !seen {
				if noSpelling && !known(w) {
					sp = nil
				} else {
					sp = spell(w, known)
				}
				memo[w] = sp
				if sp == nil {
					missing = append(missing, w)
				}
			}
			if sp == nil {
				ok = false
				continue
			}
			out = append(out, sp...)
		}
		return out, ok
	}
	r := &Grammar{dropped: g.dropped}
	for _, it := range g.items {
		if w, ok := fix(it); ok {
			r.items = append(r.items, w)
		}
	}
	for _, p := range g.phrasings {
		if hasSlot(p) && len(r.items) == 0 {
			continue
		}
		if w, ok := fix(p); ok {
			r.phrasings = append(r.phrasings, w)
		}
	}
	if !r.usesItems() {
		r.items = nil
	}
	return r, missing
}

// empty reports whether the grammar has nothing to listen for.
func (g *Grammar) empty() bool { return g.src == "" && len(g.phrasings) == 0 }

// spell returns w as dictionary words: itself when known, else its
// letters when they all are (up to six), else nil.
func spell(w string, known func(string) bool) []string {
	if known(w) {
		return []string{w}
	}
	if len(w) > 6 {
		return nil
	}
	out := make([]string, 0, len(w))
	for i := 0; i < len(w); i++ {
		l := w[i : i+1]
		if w[i] < 'a' || w[i] > 'z' || !known(l) {
			return nil
		}
		out = append(out, l)
	}
	return out
}

func (g *Grammar) usesItems() bool {
	for _, p := range g.phrasings {
		if hasSlot(p) {
			return true
		}
	}
	return false
}

func hasSlot(words []string) bool {
	for _, w := range words {
		if w == itemRule {
			return true
		}
	}
	return false
}

// phrasingWords is [Words] for a phrasing: each Slot becomes itemRule.
func phrasingWords(text string) []string {
	if len(text) > maxTextBytes {
		text = text[:maxTextBytes]
	}
	var out []string
	for i, part := range strings.Split(text, Slot) {
		if i > 0 {
			out = append(out, itemRule)
		}
		out = appendWords(out, part)
	}
	if len(out) > MaxWords {
		out = out[:MaxWords]
	}
	return out
}

// Words reduces text to the lower-case words a speaker says for it, as
// [NewGrammar] does: "iPhone 17 Pro!" → ["iphone" "seventeen" "pro"]. At
// most MaxWords words of the first kilobyte of text are returned.
func Words(text string) []string {
	if len(text) > maxTextBytes {
		text = text[:maxTextBytes]
	}
	out := appendWords(nil, text)
	if len(out) > MaxWords {
		out = out[:MaxWords]
	}
	return out
}

// appendWords appends the words of text to out.
func appendWords(out []string, text string) []string {
	var word []byte
	var digits []byte
	flushWord := func() {
		w := strings.Trim(string(word), "'")
		if w != "" && len(out) < 4*MaxWords {
			out = append(out, w)
		}
		word = word[:0]
	}
	flushDigits := func() {
		if len(digits) > 0 {
			out = appendNumber(out, string(digits))
			digits = digits[:0]
		}
	}
	for _, r := range text {
		switch {
		case r >= '0' && r <= '9':
			flushWord()
			digits = append(digits, byte(r))
		case r == '\'' || r == '’':
			flushDigits()
			if len(word) > 0 && word[len(word)-1] != '\'' {
				word = append(word, '\'')
			}
		case unicode.IsLetter(r):
			flushDigits()
			if l, ok := fold(r); ok {
				word = append(word, l...)
			} else {
				flushWord() // a letter of another script: a word break
			}
		default:
			flushWord()
			flushDigits()
			switch r {
			case '&':
				out = append(out, "and")
			case '+':
				out = append(out, "plus")
			case '%':
				out = append(out, "percent")
			}
		}
	}
	flushWord()
	flushDigits()
	return out
}

// fold returns r as lower-case ASCII letters, if it is a Latin letter.
func fold(r rune) (string, bool) {
	r = unicode.ToLower(r)
	if r >= 'a' && r <= 'z' {
		return string(r), true
	}
	switch r {
	case 'à', 'á', 'â', 'ã', 'ä', 'å':
		return "a", true
	case 'æ':
		return "ae", true
	case 'ç':
		return "c", true
	case 'è', 'é', 'ê', 'ë':
		return "e", true
	case 'ì', 'í', 'î', 'ï':
		return "i", true
	case 'ñ':
		return "n", true
	case 'ò', 'ó', 'ô', 'õ', 'ö', 'ø':
		return "o", true
	case 'ù', 'ú', 'û', 'ü':
		return "u", true
	case 'ý', 'ÿ':
		return "y", true
	case 'ß':
		return "ss", true
	}
	return "", false
}

var (
	ones = [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tens = [...]string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
)

// appendNumber appends the spoken words of a run of digits: a cardinal up
// to 999999 ("2025" → "two thousand twenty five"), digit by digit when
// longer or when it starts with 0 ("007" → "zero zero seven").
func appendNumber(out []string, digits string) []string {
	if len(digits) > 6 || (len(digits) > 1 && digits[0] == '0') {
		for i := 0; i < len(digits) && i < MaxWords; i++ {
			out = append(out, ones[digits[i]-'0'])
		}
		return out
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		n = 10*n + int(digits[i]-'0')
	}
	if n == 0 {
		return append(out, "zero")
	}
	if n >= 1000 {
		out = appendBelow1000(out, n/1000)
		out = append(out, "thousand")
		n %= 1000
	}
	return appendBelow1000(out, n)
}

func appendBelow1000(out []string, n int) []string {
	if n >= 100 {
		out = append(out, ones[n/100], "hundred")
		n %= 100
	}
	switch {
	case n == 0:
	case n < 20:
		out = append(out, ones[n])
	default:
		out = append(out, tens[n/10])
		if n%10 != 0 {
			out = append(out, ones[n%10])
		}
	}
	return out
}

// Has reports whether text, as words, is one of the grammar's phrases. It
// is false for a grammar given as JSGF source.
func (g *Grammar) Has(text string) bool {
	if g == nil {
		return false
	}
	words := strings.Fields(text)
	for _, p := range g.phrasings {
		if g.match(p, words) {
			return true
		}
	}
	return false
}

// match reports whether words are phrasing p, its slot (if any) filled
// with one of the items.
func (g *Grammar) match(p, words []string) bool {
	slot := -1
	for i, w := range p {
		if w == itemRule {
			slot = i
			break
		}
	}
	if slot < 0 {
		return equalWords(p, words)
	}
	pre, post := p[:slot], p[slot+1:]
	if len(words) < len(pre)+len(post)+1 || !equalWords(pre, words[:len(pre)]) {
		return false
	}
	mid := words[len(pre):]
	for _, it := range g.items {
		if len(mid) >= len(it) && equalWords(it, mid[:len(it)]) && g.match(post, mid[len(it):]) {
			return true
		}
	}
	return false
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
