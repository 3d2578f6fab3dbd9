package demobrain

import (
	"strings"
	"unicode"
)

// tokens splits s into lower-case words of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stem strips a few English suffixes so "solving" meets "solve" and
// "neurons" meets "neuron". It is crude on purpose: both sides of every
// comparison go through it.
func stem(w string) string {
	for _, suf := range []string{"ing", "ies", "es", "ed", "s", "e"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// stopwords are ignored when matching topics.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "it": true, "its": true,
	"this": true, "that": true, "these": true, "those": true, "of": true, "in": true, "on": true, "at": true,
	"to": true, "for": true, "from": true, "with": true, "and": true, "or": true, "me": true, "my": true,
	"i": true, "you": true, "your": true, "do": true, "does": true, "did": true, "where": true, "what": true,
	"which": true, "how": true, "many": true, "much": true, "about": true, "talk": true, "talks": true,
	"say": true, "says": true, "mention": true, "mentions": true, "discuss": true, "discusses": true,
	"article": true, "essay": true, "text": true, "page": true, "please": true, "can": true, "could": true,
	"show": true, "find": true, "there": true, "here": true, "tell": true, "part": true, "bit": true,
	"s": true, "have": true, "has": true, "any": true, "some": true, "one": true, "get": true, "be": true,
	"go": true, "we": true, "us": true, "them": true, "they": true, "their": true, "so": true, "if": true,
}

// content returns the stemmed content words of s.
func content(s string) []string {
	var out []string
	for _, w := range tokens(s) {
		if !stopwords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// containsAny reports whether s contains any of the phrases.
func containsAny(s string, phrases ...string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// hasWord reports whether the word list holds w.
func hasWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// numberWords maps spoken digits and small numbers to their values.
var numberWords = map[string]string{
	"zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
	"six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
	"thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
	"eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50",
}

// firstSentence returns the first sentence of s, cut to about maxWords
// words with an ellipsis.
func firstSentence(s string, maxWords int) string {
	s = strings.Join(strings.Fields(s), " ")
	for i, r := range s {
		if (r == '.' || r == '!' || r == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			s = s[:i+1]
			break
		}
	}
	words := strings.Fields(s)
	if len(words) > maxWords {
		s = strings.Join(words[:maxWords], " ")
		s = strings.TrimRight(s, ",;:") + "…"
	}
	return s
}

// joinList joins items as "a, b and c".
func joinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
