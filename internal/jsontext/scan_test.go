package jsontext

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestScannerReadsWhatItIsAskedAndSkipsTheRest(t *testing.T) {
	var s Scanner
	s.Prefix = "x"
	s.Reset([]byte(` {"skip":[1,{"a":"]}"},true,null,-2.5e3],"s":"a\"b\u00e9","n":-42,"raw":{"k":[1]},"b":true,"f":null} `))
	var str string
	var n int
	var raw []byte
	b, f := false, true
	if s.Open('{') {
		for first := true; s.More('}', &first); {
			switch string(s.Key()) {
			case "s":
				str = s.String()
			case "n":
				n = s.Int()
			case "raw":
				raw = s.Raw()
			case "b":
				b = s.Bool()
			case "f":
				f = s.Bool()
			default:
				s.Skip()
			}
		}
	}
	s.End()
	if s.Err() != nil || str != "a\"bé" || n != -42 || string(raw) != `{"k":[1]}` || !b || f {
		t.Errorf("str %q n %d raw %s b %v f %v err %v", str, n, raw, b, f, s.Err())
	}
	for _, bad := range []string{`{"a":}`, `{"a":"x"`, `{"a":1]`, `[`, `{} x`, `{"a":tru}`} {
		s.Reset([]byte(bad))
		if s.Open('{') {
			for first := true; s.More('}', &first); {
				s.Key()
				s.Skip()
			}
		}
		s.End()
		if s.Err() == nil || !strings.HasPrefix(s.Err().Error(), "x: invalid stream event JSON") {
			t.Errorf("%s: err = %v", bad, s.Err())
		}
	}
}

func TestScannerBoolRejectsOtherValues(t *testing.T) {
	for _, in := range []string{`"true"`, `1`, `tru`, `{}`} {
		var s Scanner
		s.Reset([]byte(in))
		if s.Bool() || s.Err() == nil {
			t.Errorf("Bool(%s) = true or no error (%v)", in, s.Err())
		}
	}
}

// By default a scanner takes names raw and passes control characters on;
// a Strict one decodes and checks strings as encoding/json does.
func TestScannerStrictReadsStringsAsEncodingJSONDoes(t *testing.T) {
	read := func(strict bool, in string) (key, val string, err error) {
		s := Scanner{Strict: strict}
		s.Reset([]byte(in))
		if s.Open('{') {
			for first := true; s.More('}', &first); {
				key = string(s.Key())
				val = string(s.AppendString(nil))
			}
		}
		s.End()
		return key, val, s.Err()
	}
	cases := []struct {
		in              string
		lenient, strict string // key=value, or "error"
	}{
		{`{"te\u0078t":"a"}`, `te\u0078t=a`, `text=a`},
		{"{\"t\":\"a\x01b\"}", "t=a\x01b", "error"},
		{"{\"t\":\"a\\nb\tc\"}", "t=a\nb\tc", "error"},
		{"{\"t\\n\x01\":\"a\"}", "t\\n\x01=a", "error"},
		{`{"t":"a\nb"}`, "t=a\nb", "t=a\nb"},
	}
	for _, tc := range cases {
		for _, strict := range []bool{false, true} {
			want := tc.lenient
			if strict {
				want = tc.strict
			}
			k, v, err := read(strict, tc.in)
			got := k + "=" + v
			if err != nil {
				got = "error"
			}
			if got != want {
				t.Errorf("strict %v, %q: got %q (%v), want %q", strict, tc.in, got, err, want)
			}
		}
	}
	s := Scanner{Strict: true}
	s.Reset([]byte("\"a\x7fb\""))
	if got := s.String(); got != "a\x7fb" || s.Err() != nil {
		t.Errorf("DEL is not a control character for JSON: %q, %v", got, s.Err())
	}
	s.Reset([]byte("\"a\x1fb\""))
	if got := s.String(); got != "" || s.Err() == nil {
		t.Errorf("String read a raw control character: %q, %v", got, s.Err())
	}
}

// decodeAny reads one value of any kind with the scanner, as encoding/json
// reads it into an any (numbers as float64, the last of repeated names
// winning).
func decodeAny(s *Scanner, depth int) any {
	if depth > 100 {
		s.Fail("too deep")
		return nil
	}
	switch c := s.Peek(); {
	case c == '{':
		m := map[string]any{}
		s.Open('{')
		for first := true; s.More('}', &first); {
			k := string(s.Key())
			m[k] = decodeAny(s, depth+1)
		}
		return m
	case c == '[':
		a := []any{}
		s.Open('[')
		for first := true; s.More(']', &first); {
			a = append(a, decodeAny(s, depth+1))
		}
		return a
	case c == '"':
		return s.String()
	case c == 't' || c == 'f':
		return s.Bool()
	case c == 'n':
		s.Null()
		return nil
	default:
		f, err := strconv.ParseFloat(string(s.Raw()), 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			s.Fail("bad number")
		}
		return f
	}
}

// FuzzScanner: a Strict scanner reads every JSON text encoding/json reads
// to the same value, and never panics or loops on any input. (It may
// accept texts encoding/json rejects: values it skips are checked only
// loosely, and numbers are checked only by ParseFloat.)
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{
		` {"skip":[1,{"a":"]}"},true,null,-2.5e3],"s":"a\"b\u00e9","n":-42,"raw":{"k":[1]}} `,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}]}`,
		`{"type":"Turn","words":[{"text":""},null,{"text":"a","text":"b"}]}`,
		`{"type":"Tu\u0072n","transcript":"caf\u00e9 \ud83d\ude00","end_of_turn":true,"end_of_turn":false}`,
		` {"type" : "Turn" , "words" : [ { "start" : -1.5e3 , "text" : "x\"y" } ] } `,
		`{"audio":"AAAA","isFinal":null,"alignment":{"chars":["a"],"charStartTimesMs":[0]}}`,
		`{"a":}`, `{"a":"x"`, `{"a":1]`, `[`, `{} x`, `{"a":tru}`, "\"\x01\"", `{"\u0000":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{Strict: true}
		s.Reset(data)
		got := decodeAny(&s, 0)
		s.End()
		var want any
		if !utf8.Valid(data) || json.Unmarshal(data, &want) != nil {
			return // encoding/json rejects it or rewrites invalid UTF-8
		}
		if s.Err() != nil {
			t.Fatalf("encoding/json reads %q, the scanner fails: %v", data, s.Err())
		}
		if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool {
			return a == b || (math.IsInf(a, 0) && math.IsInf(b, 0))
		})); d != "" {
			t.Fatalf("%q (-encoding/json +scanner):\n%s", data, d)
		}
	})
}

func BenchmarkScannerTextDelta(b *testing.B) {
	data := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello, how can I help you today?"}}`)
	var s Scanner
	var text []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s.Reset(data)
		text = text[:0]
		if s.Open('{') {
			for first := true; s.More('}', &first); {
				switch string(s.Key()) {
				case "delta":
					if s.Open('{') {
						for f := true; s.More('}', &f); {
							if string(s.Key()) == "text" {
								text = s.AppendString(text)
							} else {
								s.Skip()
							}
						}
					}
				default:
					s.Skip()
				}
			}
		}
		s.End()
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
	}
}
