package jsonwire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"unicode/utf8"
)

// FuzzScanner holds the scanner to encoding/json's grammar: whatever Value
// reads as the whole text is JSON, and the text it returns is the value;
// whatever Members reads, key by key, encoding/json reads as an object
// with those keys. It never panics.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `0`, `-0.5e+7`, `01`, `"\u00e9"`, `"\ud800"`, `"é"`, "\"\xff\"",
		`{"event":"media","media":{"payload":"/w=="},"x":[1,2.5e3,true,null,"\u00e9"]}`,
		`{"a":1,"a":2}`, `{"a":{"b":[{}]}}`, `{"a" : 1 , }`, `[1,,2]`, `{"a":tru}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		s := NewScanner(text)
		v, ok := s.Value()
		if ok && s.End() {
			if !json.Valid(text) {
				t.Fatalf("Value read %q, which is not JSON", text)
			}
			if !bytes.Equal(bytes.TrimSpace(text), v) {
				t.Fatalf("Value of %q returned %q", text, v)
			}
		}

		s = NewScanner(text)
		var keys []string
		ok = s.Members(func(key []byte) bool {
			keys = append(keys, string(key))
			_, ok := s.Value()
			return ok
		})
		if !ok || !s.End() {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(text, &m); err != nil {
			t.Fatalf("Members read %q, encoding/json refused it: %v", text, err)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Fatalf("Members read key %q of %q, encoding/json did not", k, text)
			}
		}
	})
}

// FuzzNumber holds Number to strconv: what it reads, as a number or as a
// string holding one, is the integer strconv.ParseInt reads.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{`0`, `"12"`, `-7`, `""`, `null`, `1.5`, `"-"`, `999999999999999999`, `"9999999999999999999"`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		var n Number
		if n.UnmarshalJSON(text) != nil {
			if n != 0 {
				t.Fatalf("Number refused %q but left %d", text, n)
			}
			return
		}
		digits := text
		if len(digits) >= 2 && digits[0] == '"' && digits[len(digits)-1] == '"' {
			digits = digits[1 : len(digits)-1]
		}
		if len(digits) == 0 || string(digits) == "null" {
			if n != 0 {
				t.Fatalf("Number(%q) = %d, want 0", text, n)
			}
			return
		}
		want, err := strconv.ParseInt(string(digits), 10, 64)
		if err != nil || digits[0] == '+' || int64(n) != want {
			t.Fatalf("Number(%q) = %d; strconv says %d, %v", text, n, want, err)
		}
	})
}

// FuzzDecodeBase64 holds DecodeBase64 to encoding/base64: what it decodes
// within the limit, base64 (padded, or raw when the length says so)
// decodes to the same bytes; what it refuses is too large or bad base64.
func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"", "AP8=", "AP8", "AP8==", "/w", "A", "!!!!", "AAAAAAAA", "AAAAAAAAAAA="} {
		f.Add([]byte(s), 4)
	}
	f.Fuzz(func(t *testing.T, b64 []byte, limit int) {
		if limit < 0 || limit > 1<<16 {
			return
		}
		got, err := DecodeBase64(b64, make([]byte, 0, 8), limit)
		enc := base64.StdEncoding
		if len(b64)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		want, werr := enc.DecodeString(string(b64))
		switch {
		case err == nil && (werr != nil || !bytes.Equal(got, want)):
			t.Fatalf("DecodeBase64(%q) = %x; encoding/base64 gives %x, %v", b64, got, want, werr)
		case err == nil && len(got) > limit:
			t.Fatalf("DecodeBase64(%q) gave %d bytes, over the limit of %d", b64, len(got), limit)
		case err != nil && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrBadPayload):
			t.Fatalf("DecodeBase64(%q): error %v wraps neither cause", b64, err)
		case errors.Is(err, ErrBadPayload) && werr == nil:
			t.Fatalf("DecodeBase64(%q) called good base64 bad: %v", b64, err)
		case errors.Is(err, ErrTooLarge) && werr == nil && len(want) <= limit:
			t.Fatalf("DecodeBase64(%q) refused %d bytes under a limit of %d", b64, len(want), limit)
		}
	})
}

// FuzzAppendString holds AppendString to encoding/json: valid UTF-8 reads
// back as itself.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "MZ1", "a\"b\\c\n\x01é", "\x7f", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s, not a JSON string: %v", s, out, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("AppendString(%q) read back as %q", s, back)
		}
	})
}
