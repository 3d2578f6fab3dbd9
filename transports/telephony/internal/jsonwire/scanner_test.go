package jsonwire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scanValue reads one value of text and reports whether it is all of it.
func scanValue(text string) bool {
	s := NewScanner([]byte(text))
	_, ok := s.Value()
	return ok && s.End()
}

func TestValueReadsJSONGrammar(t *testing.T) {
	for _, text := range []string{
		`0`, `-0`, `12`, `-1.5e+3`, `2E-2`, `1.0`, `true`, `false`, `null`,
		`""`, `"a b"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD83D\ude00"`, `"é"`,
		`{}`, `[]`, ` { "a" : [ 1 , { "b" : null } ] } `, `[[],{},""]`,
		`{"\u0061":1}`, strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	} {
		if !json.Valid([]byte(text)) {
			t.Fatalf("test bug: %s is not JSON", text)
		}
		if !scanValue(text) {
			t.Errorf("Value refused %s", text)
		}
	}
}

func TestValueRefusesWhatIsNotJSON(t *testing.T) {
	for _, text := range []string{
		``, ` `, `01`, `-`, `1.`, `.5`, `1e`, `+1`, `tru`, `nul`, `True`, `NaN`,
		`"`, `"a`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", `'a'`,
		`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{a:1}`, `{"a":1 "b":2}`, `[1,]`, `[1 2]`, `]`,
		`1 2`, `{}}`,
	} {
		if scanValue(text) {
			t.Errorf("Value read %q", text)
		}
	}
}

func TestValueGivesUpBeyondMaxDepth(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if scanValue(deep) {
		t.Errorf("Value read %d nested arrays, more than MaxDepth (%d)", MaxDepth+1, MaxDepth)
	}
	deep = strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	if scanValue(deep) {
		t.Errorf("Value read %d nested objects, more than MaxDepth (%d)", MaxDepth+1, MaxDepth)
	}
}

func TestValueReturnsTheValuesText(t *testing.T) {
	s := NewScanner([]byte(`  {"a": [1, "x"]}  , 7`))
	v, ok := s.Value()
	if !ok || string(v) != `{"a": [1, "x"]}` {
		t.Errorf("Value = %q, %v; want the object", v, ok)
	}
}

func TestPlainStringTakesOnlyPrintableASCIIWithoutEscapes(t *testing.T) {
	cases := []struct {
		text string
		want string
		ok   bool
	}{
		{` "MZ1" `, "MZ1", true},
		{`""`, "", true},
		{`"a b/c"`, "a b/c", true},
		{`"a\"b"`, "", false},
		{`"\/w=="`, "", false},
		{`"é"`, "", false},
		{"\"a\tb\"", "", false},
		{`"open`, "", false},
		{`12`, "", false},
	}
	for _, c := range cases {
		s := NewScanner([]byte(c.text))
		got, ok := s.PlainString()
		if ok != c.ok || string(got) != c.want {
			t.Errorf("PlainString(%s) = %q, %v; want %q, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}

func TestMembersWalksAnObjectsKeysInOrder(t *testing.T) {
	s := NewScanner([]byte(` { "event" : "media" , "media" : { "payload" : "/w==" , "n" : 3 } , "x" : [1] } `))
	var keys []string
	ok := s.Members(func(key []byte) bool {
		keys = append(keys, string(key))
		if string(key) == "media" {
			return s.Members(func(key []byte) bool {
				keys = append(keys, "media."+string(key))
				_, ok := s.Value()
				return ok
			})
		}
		_, ok := s.Value()
		return ok
	})
	if !ok || !s.End() {
		t.Fatalf("Members = %v, End = %v; want both true", ok, s.End())
	}
	want := []string{"event", "media", "media.payload", "media.n", "x"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestMembersGivesUp(t *testing.T) {
	skip := func(s *Scanner) func([]byte) bool {
		return func([]byte) bool { _, ok := s.Value(); return ok }
	}
	for _, text := range []string{
		`[]`, `"a"`, `{"a":1`, `{"a" 1}`, `{"a":1,}`, `{"\u0061":1}`, `{"é":1}`, `{1:1}`,
	} {
		s := NewScanner([]byte(text))
		if s.Members(skip(&s)) {
			t.Errorf("Members read %s", text)
		}
	}
	s := NewScanner([]byte(`{"a":1,"b":2}`))
	calls := 0
	if s.Members(func([]byte) bool { calls++; return false }) || calls != 1 {
		t.Errorf("Members went on after its member gave up (%d calls)", calls)
	}
	s = NewScanner([]byte(`{}`))
	if !s.Members(func([]byte) bool { t.Error("member called for {}"); return false }) {
		t.Error("Members refused {}")
	}
}

func TestEndAllowsOnlySpace(t *testing.T) {
	for text, want := range map[string]bool{`{} `: true, "{}\r\n\t": true, `{} x`: false, `{}{}`: false} {
		s := NewScanner([]byte(text))
		_, _ = s.Value()
		if got := s.End(); got != want {
			t.Errorf("End after %q = %v, want %v", text, got, want)
		}
	}
}

func TestForeignFindsWhatEncodingJSONWouldMatch(t *testing.T) {
	fields := []string{"event", "streamSid", "media"}
	for key, want := range map[string]bool{
		"event":     true, // the caller matches exact keys before asking
		"EVENT":     true,
		"streamsid": true,
		"Media":     true,
		"extra":     false,
		"even":      false,
		"évent":     true, // non-ASCII: encoding/json folds some of it
		"\u017f":    true, // ſ folds to s
	} {
		if got := Foreign([]byte(key), fields...); got != want {
			t.Errorf("Foreign(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestScannerDoesNotAllocate(t *testing.T) {
	msg := []byte(`{"event":"media","sequenceNumber":"3","media":{"track":"inbound","payload":"/w=="},"x":[1,2.5,true,null,"\u00e9"]}`)
	allocs := testing.AllocsPerRun(200, func() {
		s := NewScanner(msg)
		ok := s.Members(func(key []byte) bool {
			if string(key) == "event" {
				_, ok := s.PlainString()
				return ok
			}
			if Foreign(key, "event", "streamSid") {
				return false
			}
			_, ok := s.Value()
			return ok
		})
		if !ok || !s.End() {
			t.Fatal("the scanner refused the message")
		}
	})
	if allocs != 0 {
		t.Errorf("scanning allocated %v times per run, want 0", allocs)
	}
}
