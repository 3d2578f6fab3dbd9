package tts

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// sentencesOf streams text through an aggregator in pieces of at most
// chunk bytes (0: all at once) and returns the sentences released while
// streaming and the rest flushed at the end.
func sentencesOf(text string, chunk int) (got []string, rest string) {
	var a SentenceAggregator
	if chunk <= 0 {
		chunk = len(text) + 1
	}
	for len(text) > 0 {
		n := min(chunk, len(text))
		a.Add(text[:n])
		text = text[n:]
		for {
			s, ok := a.Next()
			if !ok {
				break
			}
			got = append(got, s)
		}
	}
	return got, a.Flush()
}

func TestSentenceAggregator(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // released sentences, the flushed rest last
	}{
		{"two sentences", "Hello there. How are you? ", []string{"Hello there.", "How are you?"}},
		{"exclamation and rest", "Wow! That is great", []string{"Wow!", "That is great"}},
		{"a decimal number", "Pi is 3.14 or so. Next.", []string{"Pi is 3.14 or so.", "Next."}},
		{"a price", "It costs $4.99 today. Buy it.", []string{"It costs $4.99 today.", "Buy it."}},
		{"a version", "Use Go 1.26.8 please. Thanks.", []string{"Use Go 1.26.8 please.", "Thanks."}},
		{"title abbreviation", "Dr. Smith is here. She waits.", []string{"Dr. Smith is here.", "She waits."}},
		{"Mr and Mrs", "Mr. and Mrs. Jones came. Good.", []string{"Mr. and Mrs. Jones came.", "Good."}},
		{"e.g.", "Fruit, e.g. apples, is good. Eat it.", []string{"Fruit, e.g. apples, is good.", "Eat it."}},
		{"i.e.", "The core, i.e. the runtime, works. Yes.", []string{"The core, i.e. the runtime, works.", "Yes."}},
		{"vs.", "Cats vs. dogs is old. Move on.", []string{"Cats vs. dogs is old.", "Move on."}},
		{"initials", "J. R. R. Tolkien wrote it. Read it.", []string{"J. R. R. Tolkien wrote it.", "Read it."}},
		{"dotted acronym", "The U.S. economy grew. Good news.", []string{"The U.S. economy grew.", "Good news."}},
		{"a URL", "See https://example.com/a.b?c=d for more. Bye.", []string{"See https://example.com/a.b?c=d for more.", "Bye."}},
		{"a URL ending a sentence", "Go to example.com. Then click.", []string{"Go to example.com.", "Then click."}},
		{"a file name", "Open main.go now. Done.", []string{"Open main.go now.", "Done."}},
		{"an email", "Mail bob@mail.example.org today. Thanks.", []string{"Mail bob@mail.example.org today.", "Thanks."}},
		{"a year ends a sentence", "I was born in 1990. Then I grew.", []string{"I was born in 1990.", "Then I grew."}},
		{"list numbers", "1. Apples are red.\n2. Pears are green.\n", []string{"1. Apples are red.", "2. Pears are green."}},
		{"a newline ends a line", "First line\nSecond line", []string{"First line", "Second line"}},
		{"blank lines", "\n\nHello.\n\n\nBye.", []string{"Hello.", "Bye."}},
		{"quotes close the sentence", `He said "Stop." Then he left.`, []string{`He said "Stop."`, "Then he left."}},
		{"brackets close the sentence", "It works (mostly.) Try it.", []string{"It works (mostly.)", "Try it."}},
		{"markdown bold", "**Done.** Next step.", []string{"**Done.**", "Next step."}},
		{"an ellipsis", "Well... I think so. Yes.", []string{"Well...", "I think so.", "Yes."}},
		{"unicode ellipsis", "Hmm… maybe. Ok.", []string{"Hmm…", "maybe.", "Ok."}},
		{"interrobang run", "Really?! No way. Ok.", []string{"Really?!", "No way.", "Ok."}},
		{"CJK full stops", "你好。我很好！谢谢", []string{"你好。", "我很好！", "谢谢"}},
		{"no sentence end", "just some words", []string{"just some words"}},
		{"empty", "", nil},
		{"only spaces", "   \n  ", nil},
		{"a time", "Meet at 3:30 p.m. Monday. Ok.", []string{"Meet at 3:30 p.m. Monday.", "Ok."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Whole, token-sized and byte-by-byte streaming must agree.
			for _, chunk := range []int{0, 4, 1} {
				got, rest := sentencesOf(tc.in, chunk)
				if rest != "" {
					got = append(got, rest)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("chunk %d: sentences (-want +got):\n%s", chunk, diff)
				}
			}
		})
	}
}

func TestSentenceAggregatorWaitsForTheCharacterAfterAPeriod(t *testing.T) {
	var a SentenceAggregator
	a.Add("The value is 3.")
	if s, ok := a.Next(); ok {
		t.Fatalf("released %q before knowing whether the period ends the sentence", s)
	}
	a.Add("5 exactly. ")
	s, ok := a.Next()
	if !ok || s != "The value is 3.5 exactly." {
		t.Fatalf("Next() = %q, %v; want the whole sentence with its decimal", s, ok)
	}
}

func TestSentenceAggregatorCutsRunOnText(t *testing.T) {
	a := SentenceAggregator{MaxBytes: 40}
	a.Add("this answer has no punctuation at all, it just goes on and on and on forever")
	s, ok := a.Next()
	if !ok {
		t.Fatal("a run-on text past MaxBytes was not cut")
	}
	if s != "this answer has no punctuation at all," {
		t.Errorf("cut at %q; want at the comma", s)
	}
	if len(s) > 40 {
		t.Errorf("cut sentence is %d bytes, past MaxBytes 40", len(s))
	}
	a = SentenceAggregator{MaxBytes: -1}
	a.Add(strings.Repeat("word ", 200))
	if _, ok := a.Next(); ok {
		t.Error("negative MaxBytes still cut")
	}
}

func TestSentenceAggregatorCutKeepsRunesWhole(t *testing.T) {
	a := SentenceAggregator{MaxBytes: 10}
	a.Add(strings.Repeat("é", 20)) // no spaces: cut on a rune boundary
	s, ok := a.Next()
	if !ok || !utf8.ValidString(s) {
		t.Fatalf("Next() = %q, %v; want a valid UTF-8 piece", s, ok)
	}
	if rest := a.Flush(); !utf8.ValidString(rest) {
		t.Fatalf("rest %q is not valid UTF-8", rest)
	}
}

func TestSentenceAggregatorReset(t *testing.T) {
	var a SentenceAggregator
	a.Add("Half a sent")
	a.Reset()
	if a.Len() != 0 || a.Flush() != "" {
		t.Fatal("Reset kept text")
	}
	a.Add("New one. ")
	if s, _ := a.Next(); s != "New one." {
		t.Fatalf("after Reset, Next() = %q", s)
	}
}

// FuzzSentenceAggregator checks that no text is lost or invented, whatever
// the input and however it is streamed.
func FuzzSentenceAggregator(f *testing.F) {
	for _, s := range []string{"Hello there. How are you? ", "Pi is 3.14. Dr. Who!", "1. a\n2. b", "你好。谢谢", "x... y…", `"Hi." (ok.)`} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, chunk uint8) {
		got, rest := sentencesOf(text, int(chunk))
		joined := strings.Join(append(got, rest), "")
		if strip(joined) != strip(text) {
			t.Fatalf("text changed: in %q, out %q", text, joined)
		}
		for _, s := range got {
			if s == "" || s != strings.TrimSpace(s) {
				t.Fatalf("released an empty or untrimmed sentence %q", s)
			}
		}
	})
}

// strip removes white space, keeping every other byte (invalid UTF-8
// included) as it is.
func strip(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !(r != utf8.RuneError && unicode.IsSpace(r)) {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func BenchmarkSentenceAggregator(b *testing.B) {
	tokens := strings.Fields("Sure! The answer is 3.14, as Dr. Smith said. See example.com/docs for more. It is simple, e.g. like this. Bye now.")
	b.ReportAllocs()
	var a SentenceAggregator
	for b.Loop() {
		for _, tok := range tokens {
			a.Add(tok)
			a.Add(" ")
			for {
				if _, ok := a.Next(); !ok {
					break
				}
			}
		}
		a.Flush()
	}
}
