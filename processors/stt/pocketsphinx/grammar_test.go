package pocketsphinx

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"iPhone 17 Pro!", []string{"iphone", "seventeen", "pro"}},
		{"Galaxy S25", []string{"galaxy", "s", "twenty", "five"}},
		{"Model 2025", []string{"model", "two", "thousand", "twenty", "five"}},
		{"Agent 007", []string{"agent", "zero", "zero", "seven"}},
		{"100", []string{"one", "hundred"}},
		{"0", []string{"zero"}},
		{"Tom & Jerry", []string{"tom", "and", "jerry"}},
		{"C++", []string{"c", "plus", "plus"}},
		{"50% off", []string{"fifty", "percent", "off"}},
		{"Don’t stop", []string{"don't", "stop"}},
		{"'quoted'", []string{"quoted"}},
		{"Café Crème", []string{"cafe", "creme"}},
		{"e-mail address:", []string{"e", "mail", "address"}},
		{"<item> | public = ; * + ( ) [ ] { } / \\ \"x\"", []string{"item", "public", "plus", "x"}},
		{"東京 tower", []string{"tower"}},
		{"", nil},
		{"   ...   ", nil},
		{strings.Repeat("word ", 50), strings.Fields(strings.Repeat("word ", MaxWords))},
	} {
		if diff := cmp.Diff(tc.want, Words(tc.text)); diff != "" {
			t.Errorf("Words(%q) (-want +got):\n%s", tc.text, diff)
		}
	}
}

func TestNewGrammarJSGF(t *testing.T) {
	g, err := NewGrammar(
		[]string{"Where is the {item}?", "Explain this", "explain this", "fill in my {item}", ""},
		[]string{"iPhone 17", "Name", "E-mail", "iphone 17", "!!!"},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := "#JSGF V1.0;\ngrammar framewire;\n" +
		"<item> = iphone seventeen | name | e mail;\n" +
		"public <utterance> = where is the <item> | explain this | fill in my <item>;\n"
	if diff := cmp.Diff(want, g.JSGF()); diff != "" {
		t.Errorf("JSGF (-want +got):\n%s", diff)
	}
	if g.Dropped() != 0 {
		t.Errorf("Dropped = %d, want 0", g.Dropped())
	}
}

func TestNewGrammarShapes(t *testing.T) {
	t.Run("items alone are the phrases", func(t *testing.T) {
		g, err := NewGrammar(nil, []string{"Pixel 9"})
		if err != nil {
			t.Fatal(err)
		}
		want := "#JSGF V1.0;\ngrammar framewire;\n<item> = pixel nine;\npublic <utterance> = <item>;\n"
		if diff := cmp.Diff(want, g.JSGF()); diff != "" {
			t.Errorf("JSGF (-want +got):\n%s", diff)
		}
	})
	t.Run("without items a slot phrasing is left out", func(t *testing.T) {
		g, err := NewGrammar([]string{"where is the {item}", "scroll down"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := "#JSGF V1.0;\ngrammar framewire;\npublic <utterance> = scroll down;\n"
		if diff := cmp.Diff(want, g.JSGF()); diff != "" {
			t.Errorf("JSGF (-want +got):\n%s", diff)
		}
	})
	t.Run("items no phrasing uses are left out", func(t *testing.T) {
		g, err := NewGrammar([]string{"scroll down"}, []string{"Pixel 9"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(g.JSGF(), "pixel") {
			t.Errorf("JSGF has the unused items:\n%s", g.JSGF())
		}
	})
	t.Run("nothing to listen for is an error", func(t *testing.T) {
		if _, err := NewGrammar([]string{"", "?!"}, []string{"..."}); err == nil {
			t.Error("NewGrammar of empty texts: no error")
		}
	})
}

func TestNewGrammarBounds(t *testing.T) {
	items := make([]string, 3*MaxItems)
	for i := range items {
		items[i] = "item number " + strings.Repeat("x", i%7+1) + " " + itoa(i)
	}
	g, err := NewGrammar([]string{"open {item}"}, items)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.items); n > MaxItems {
		t.Errorf("%d items, want at most %d", n, MaxItems)
	}
	if got := len(g.JSGF()); got > MaxGrammarBytes {
		t.Errorf("JSGF of %d bytes, want at most %d", got, MaxGrammarBytes)
	}
	if g.Dropped() != len(items)-len(g.items) {
		t.Errorf("Dropped = %d, want %d", g.Dropped(), len(items)-len(g.items))
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

func TestRestrict(t *testing.T) {
	dict := map[string]bool{"where": true, "is": true, "the": true, "iphone": true, "seventeen": true,
		"u": true, "s": true, "b": true, "cable": true, "explain": true, "this": true}
	g, err := NewGrammar([]string{"where is the {item}", "explain this", "frobnicate this"},
		[]string{"iPhone 17", "USB cable", "Zyxxy widget"})
	if err != nil {
		t.Fatal(err)
	}
	r, missing := g.restrict(func(w string) bool { return dict[w] }, false)
	want := "#JSGF V1.0;\ngrammar framewire;\n" +
		"<item> = iphone seventeen | u s b cable;\n" +
		"public <utterance> = where is the <item> | explain this;\n"
	if diff := cmp.Diff(want, r.JSGF()); diff != "" {
		t.Errorf("JSGF (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"zyxxy", "widget", "frobnicate"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	t.Run("without spelling, an item with an unknown word is left out", func(t *testing.T) {
		r, missing := g.restrict(func(w string) bool { return dict[w] }, true)
		want := "#JSGF V1.0;\ngrammar framewire;\n" +
			"<item> = iphone seventeen;\n" +
			"public <utterance> = where is the <item> | explain this;\n"
		if diff := cmp.Diff(want, r.JSGF()); diff != "" {
			t.Errorf("JSGF (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"usb", "zyxxy", "widget", "frobnicate"}, missing); diff != "" {
			t.Errorf("missing (-want +got):\n%s", diff)
		}
	})
	t.Run("nothing known leaves an empty grammar", func(t *testing.T) {
		r, _ := g.restrict(func(string) bool { return false }, false)
		if !r.empty() {
			t.Errorf("restricted to no word, the grammar is not empty:\n%s", r.JSGF())
		}
	})
}

func TestParseJSGF(t *testing.T) {
	src := "#JSGF V1.0;\ngrammar cmd;\npublic <cmd> = (turn | switch) (on | off);\n"
	g, err := ParseJSGF(src)
	if err != nil {
		t.Fatal(err)
	}
	if g.JSGF() != src {
		t.Errorf("JSGF = %q, want the source %q", g.JSGF(), src)
	}
	for name, bad := range map[string]string{
		"no header":      "grammar x; public <a> = b;",
		"no public rule": "#JSGF V1.0; grammar x; <a> = b;",
		"too long":       "#JSGF V1.0; public <a> = " + strings.Repeat("b ", MaxGrammarBytes) + ";",
		"NUL":            "#JSGF V1.0; public <a> = b\x00;",
		"not UTF-8":      "#JSGF V1.0; public <a> = \xff;",
	} {
		if _, err := ParseJSGF(bad); err == nil {
			t.Errorf("%s: ParseJSGF accepted %.40q", name, bad)
		}
	}
}

// jsgfLine is the shape of every line NewGrammar writes: the header, or a
// rule whose tokens are lower-case words and rule references.
var (
	ruleLine = regexp.MustCompile(`^(public )?<(item|utterance)> = (<item>|[a-z']+)(( \| | )(<item>|[a-z']+))*;$`)
	wordRe   = regexp.MustCompile(`^[a-z]+('[a-z]+)*$`)
)

// checkGrammar fails unless g's JSGF is well formed and bounded.
func checkGrammar(t *testing.T, g *Grammar) {
	t.Helper()
	src := g.JSGF()
	if len(src) > MaxGrammarBytes || !utf8.ValidString(src) {
		t.Fatalf("JSGF of %d bytes, valid UTF-8 %v", len(src), utf8.ValidString(src))
	}
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	if len(lines) < 3 || lines[0] != "#JSGF V1.0;" || lines[1] != "grammar framewire;" {
		t.Fatalf("bad header:\n%s", src)
	}
	for _, l := range lines[2:] {
		if !ruleLine.MatchString(l) {
			t.Fatalf("bad rule line %q in\n%s", l, src)
		}
	}
	for _, alts := range [][][]string{g.items, g.phrasings} {
		for _, words := range alts {
			if len(words) == 0 || len(words) > MaxWords {
				t.Fatalf("alternative of %d words: %q", len(words), words)
			}
			for _, w := range words {
				if w != itemRule && !wordRe.MatchString(w) {
					t.Fatalf("token %q is not a plain word", w)
				}
			}
		}
	}
}

func FuzzNewGrammar(f *testing.F) {
	f.Add("where is the {item}", "iPhone 17 Pro")
	f.Add("{item}{item}", "<item> = | ;")
	f.Add("explain this", "Café & Crème 2025 'x'")
	f.Add("\xff\x00{item", "public <utterance> = \"quoted\" /1.0/ {tag};")
	f.Add("fill in {item}", strings.Repeat("9", 40))
	f.Fuzz(func(t *testing.T, phrasing, item string) {
		g, err := NewGrammar([]string{phrasing, "fixed " + phrasing}, []string{item, item + " 2"})
		if err != nil {
			if len(Words(phrasing)) > 0 || (len(Words(item)) > 0 && strings.Contains(phrasing, Slot)) {
				t.Fatalf("NewGrammar(%q, %q): %v, though the texts have words", phrasing, item, err)
			}
			return
		}
		checkGrammar(t, g)
		r, _ := g.restrict(func(w string) bool { return len(w)%2 == 0 }, false)
		if !r.empty() {
			checkGrammar(t, r)
		}
	})
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"iPhone 17", "s25", "007", "Don’t", "東京", "\xff", "1234567", "a'b'c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		words := Words(text)
		if len(words) > MaxWords {
			t.Fatalf("%d words", len(words))
		}
		for _, w := range words {
			if !wordRe.MatchString(w) {
				t.Fatalf("Words(%q) has %q", text, w)
			}
		}
	})
}
