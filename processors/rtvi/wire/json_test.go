package wire

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

var tricky = []string{
	"", "plain", `quote " backslash \ slash /`, "tab\tnewline\nreturn\rbell\a\x00\x1f\x7f",
	"héllo wörld", "日本語", "emoji 😀", "line sep \u2028 para sep \u2029",
	"bad utf8 \xff\xfe end", "truncated \xe6\x97", "<script>&amp;</script>",
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range tricky {
		checkAppendString(t, s)
	}
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	got := appendString(nil, s)
	if len(got) != quotedLen(s) {
		t.Errorf("quotedLen(%q) = %d, appendString wrote %d bytes", s, quotedLen(s), len(got))
	}
	var back, want string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("appendString(%q) = %s is not a JSON string: %v", s, got, err)
	}
	ref, _ := json.Marshal(s)
	_ = json.Unmarshal(ref, &want)
	if back != want {
		t.Errorf("appendString(%q) decodes to %q, encoding/json gives %q", s, back, want)
	}
}

// FuzzAppendString checks the string encoder against encoding/json.
func FuzzAppendString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	for _, v := range []float64{0, 1, -1, 0.2, 0.05, 1.5, 1e-7, 123456789, 1e21, 1e20, -3.25e-9, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		want, _ := json.Marshal(v)
		if got := appendFloat(nil, v); string(got) != string(want) {
			t.Errorf("appendFloat(%v) = %s, want %s", v, got, want)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := appendFloat(nil, v); string(got) != "null" {
			t.Errorf("appendFloat(%v) = %s, want null", v, got)
		}
	}
}

func TestReaderStrings(t *testing.T) {
	for _, in := range []string{
		`"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u65e5"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d x"`,
		`"\ud83d\u0041"`, `"plain ascii"`, `"héllo"`,
	} {
		r := reader{b: []byte(in)}
		got, err := r.str()
		var want string
		if jerr := json.Unmarshal([]byte(in), &want); jerr != nil || err != nil {
			t.Fatalf("%s: reader %v, encoding/json %v", in, err, jerr)
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{`"unterminated`, `"bad \x escape"`, "\"ctrl \x01\"", "\"bad utf8 \xff\"", `"\u12"`} {
		r := reader{b: []byte(in)}
		if _, err := r.str(); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("%q: err = %v, want ErrInvalidJSON", in, err)
		}
	}
}

func TestReaderStringErrorsNameTheFaultAndItsOffset(t *testing.T) {
	for in, want := range map[string]string{
		`"unterminated`:     "unterminated string at offset 13",
		`"bad \x escape"`:   "invalid escape at offset 7",
		"\"ctrl \x01\"":     "control character in string at offset 6",
		"\"bad utf8 \xff\"": "invalid UTF-8 in string at offset 10",
		`"\u12"`:            `invalid \u escape at offset 3`,
		`"ab\`:              "unterminated escape at offset 3",
		`"\ud800\uzzzz"`:    `invalid \u escape at offset 9`,
		"\"\\n\x01\"":       "control character in string at offset 3",
	} {
		r := reader{b: []byte(in)}
		_, err := r.str()
		if err == nil || err.Error() != "rtvi: invalid JSON: "+want {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
	}
}

func TestReaderIntegers(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "42": 42, "-7": -7, "1.0": 1, "2e3": 2000, "9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64} {
		r := reader{b: []byte(in)}
		if got, err := r.integer(); err != nil || got != want {
			t.Errorf("%s: got %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1.5", "9223372036854775808", "1e300", "-9223372036854775809"} {
		r := reader{b: []byte(in)}
		if _, err := r.integer(); err == nil {
			t.Errorf("%s: accepted as an integer", in)
		}
	}
}

func TestValidJSON(t *testing.T) {
	for _, in := range []string{`{}`, ` [1, "a", null, true, false, {"k": -0.5e+3}] `, `"x"`, `0`} {
		if err := validJSON([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `nul`, `{} {}`, `{'a':1}`,
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)} {
		if err := validJSON([]byte(in)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("%q: err = %v, want ErrInvalidJSON", in, err)
		}
	}
}

func TestFieldErrorPaths(t *testing.T) {
	_, err := Decode([]byte(`{"label":"rtvi-ai","type":"ui-snapshot","id":"1","data":{"tree":{"root":{"ref":"e1","role":"generic","children":[{"ref":"e2","role":"x"},{"role":"y"}]},"captured_at":1}}}`))
	var de *DataError
	if !errors.As(err, &de) || de.Error() != "Invalid message: tree.root.children[1].ref: field required" {
		t.Errorf("err = %v", err)
	}
	_, err = Decode([]byte(`{"label":"rtvi-ai","type":"dtmf","id":"1","data":{"buttons":["1",2]}}`))
	if !errors.As(err, &de) || de.Error() != "Invalid message: buttons[1]: expected string, got number" {
		t.Errorf("err = %v", err)
	}
}

func TestDecodeSnapshotReportsBadJSONFirst(t *testing.T) {
	// A field error early and a syntax error later: the input is not JSON.
	if _, err := DecodeSnapshot([]byte(`{"root":{"ref":1},"captured_at":1,}`)); !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("err = %v, want ErrInvalidJSON", err)
	}
	if _, err := DecodeSnapshot([]byte(`{"root":{"ref":"e1","role":"r"},"captured_at":1} x`)); !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("trailing data: err = %v, want ErrInvalidJSON", err)
	}
	if _, err := DecodeSnapshot([]byte(`{"root":{"ref":"e1","role":"r"}}`)); err == nil || errors.Is(err, ErrInvalidJSON) {
		t.Errorf("missing captured_at: err = %v, want a field error", err)
	}
}

func TestRawJSONAndJSONPayloads(t *testing.T) {
	if got := string(RawJSON(`{"a":`).AppendJSON(nil)); got != "null" {
		t.Errorf("invalid raw JSON encodes as %s", got)
	}
	if got := string(JSON(map[string]any{"b": 1, "a": []int{2}}).AppendJSON(nil)); got != `{"a":[2],"b":1}` {
		t.Errorf("JSON payload = %s", got)
	}
	if got := string(JSON(make(chan int)).AppendJSON(nil)); got != "null" {
		t.Errorf("unencodable value = %s", got)
	}
	m := Message{Type: TypeServerMessage, Data: RawJSON(nil)}
	if got := string(m.Encode()); got != `{"label":"rtvi-ai","type":"server-message"}` {
		t.Errorf("empty raw data = %s", got)
	}
	b, err := json.Marshal(struct{ M Message }{Message{Type: TypeBotLLMText, Data: Text{Text: "x"}}})
	if err != nil || string(b) != `{"M":{"label":"rtvi-ai","type":"bot-llm-text","data":{"text":"x"}}}` {
		t.Errorf("MarshalJSON = %s, %v", b, err)
	}
}

func TestEncodeTextMessageHasExactCapacity(t *testing.T) {
	for _, s := range tricky {
		b := EncodeTextMessage(TypeBotLLMText, s)
		if len(b) != cap(b) {
			t.Errorf("%q: len %d cap %d", s, len(b), cap(b))
		}
		if want := (Message{Type: TypeBotLLMText, Data: Text{Text: s}}).Encode(); string(b) != string(want) {
			t.Errorf("%q: %s, want %s", s, b, want)
		}
	}
}
