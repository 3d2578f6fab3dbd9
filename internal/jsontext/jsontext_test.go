package jsontext

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeRef is what encoding/json reads from the string with contents raw.
func decodeRef(raw string) (string, error) {
	var s string
	err := json.Unmarshal([]byte(`"`+raw+`"`), &s)
	return s, err
}

func TestAppendUnescapedDecodesValidStringsAsEncodingJSONDoes(t *testing.T) {
	cases := []struct{ name, raw string }{
		{"no escapes", `plain text`},
		{"empty", ``},
		{"non-ASCII passes through", `héllo 日本 😀`},
		{"quote", `a\"b`},
		{"backslash", `\\`},
		{"solidus", `\/`},
		{"control escapes", `\b\f\n\r\t`},
		{"every escape at once", `\"\\\/\b\f\n\r\t\u0041`},
		{"escape first and last", `\nmiddle\n`},
		{"BMP code point", `\u00e9\u65e5`},
		{"upper-case hex", `\u00E9\uFFFF`},
		{"NUL", `\u0000`},
		{"U+FFFD itself", `\ufffd`},
		{"surrogate pair", `\ud83d\ude00`},
		{"surrogate pair in upper case", `\uD83D\uDE00`},
		{"lone high surrogate at the end", `\ud83d`},
		{"lone high surrogate before text", `\ud83dx`},
		{"lone low surrogate", `\ude00x`},
		{"reversed pair", `\ude00\ud83d`},
		{"high surrogate then a BMP escape", `\ud83d\u0041`},
		{"high surrogate then another high surrogate and its pair", `\ud83d\ud83d\ude00`},
		{"high surrogate then a non-u escape", `\ud83d\n`},
		{"high surrogate then a backslash at the end is no pair", `\ud800\\`},
		{"two pairs", `\ud83d\ude00\ud83d\ude01`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := decodeRef(tc.raw)
			if err != nil {
				t.Fatalf("encoding/json rejects %s: %v", tc.raw, err)
			}
			got, err := AppendUnescaped(nil, []byte(tc.raw))
			if err != nil || string(got) != want {
				t.Errorf("AppendUnescaped(%s) = %q, %v; want %q", tc.raw, got, err, want)
			}
		})
	}
}

func TestAppendUnescapedRejectsMalformedEscapesAsEncodingJSONDoes(t *testing.T) {
	cases := []struct {
		name, raw string
		want      error
	}{
		{"backslash at the end", `abc\`, ErrUnterminatedEscape},
		{"unknown escape letter", `\x`, ErrInvalidEscape},
		{"escaped apostrophe", `\'`, ErrInvalidEscape},
		{"upper-case U", `\U0041`, ErrInvalidEscape},
		{"escaped space", `\ `, ErrInvalidEscape},
		{"\\u without digits", `\u`, ErrInvalidUnicodeEscape},
		{"\\u with too few digits", `\u12`, ErrInvalidUnicodeEscape},
		{"\\u with a non-hex digit", `\u12g4`, ErrInvalidUnicodeEscape},
		{"\\u with a sign", `\u+123`, ErrInvalidUnicodeEscape},
		{"pair whose second half is short", `\ud83d\u12`, ErrInvalidUnicodeEscape},
		{"pair whose second half is not hex", `\ud83d\uzzzz`, ErrInvalidUnicodeEscape},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeRef(tc.raw); err == nil {
				t.Fatalf("encoding/json accepts %s; the case is wrong", tc.raw)
			}
			if _, err := AppendUnescaped(nil, []byte(tc.raw)); !errors.Is(err, tc.want) {
				t.Errorf("AppendUnescaped(%s) error = %v, want %v", tc.raw, err, tc.want)
			}
		})
	}
}

func TestAppendUnescapedCopiesWhatEncodingJSONWouldRejectOrReplace(t *testing.T) {
	// Outside escapes the bytes are the caller's to check: the lenient
	// openai scanner passes them on, the strict rtvi reader rejects them
	// before unescaping.
	for _, raw := range []string{"bad utf8 \xff\xfe", "cut \xe6\x97", "ctrl \x01 tab \t", "\xff\\n\xff"} {
		want := strings.ReplaceAll(raw, `\n`, "\n")
		got, err := AppendUnescaped(nil, []byte(raw))
		if err != nil || string(got) != want {
			t.Errorf("AppendUnescaped(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

func TestAppendUnescapedAppendsToTheCallersBuffer(t *testing.T) {
	buf := make([]byte, 0, 64)
	buf = append(buf, "prefix:"...)
	got, err := AppendUnescaped(buf, []byte(`a\tb`))
	if err != nil || string(got) != "prefix:a\tb" {
		t.Fatalf("got %q, %v", got, err)
	}
	if &got[0] != &buf[:1][0] {
		t.Error("the buffer's capacity was not reused")
	}
	got, err = AppendUnescaped(buf, []byte(`ok\q`))
	if !errors.Is(err, ErrInvalidEscape) || string(got) != "prefix:ok" {
		t.Errorf("on failure got %q, %v; want the text before the bad escape", got, err)
	}
}

func TestAppendEscapeReportsWhereDecodingStopped(t *testing.T) {
	cases := []struct {
		name, in string
		at       int // offset of the backslash
		want     string
		next     int
		err      error
	}{
		{"simple escape", `x\ny`, 1, "\n", 3, nil},
		{"\\u escape", `\u0041z`, 0, "A", 6, nil},
		{"pair is consumed whole", `\ud83d\ude00z`, 0, "😀", 12, nil},
		{"unpaired high surrogate leaves the next escape", `\ud83d\u0041`, 0, "\uFFFD", 6, nil},
		{"backslash is the last byte", `ab\`, 2, "", 2, ErrUnterminatedEscape},
		{"bad letter: just past it", `a\xyz`, 1, "", 3, ErrInvalidEscape},
		{"bad hex: at the digits", `a\u12`, 1, "", 3, ErrInvalidUnicodeEscape},
		{"bad second half: at its digits", `\ud800\u00g0`, 0, "", 8, ErrInvalidUnicodeEscape},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, next, err := AppendEscape([]byte("<"), []byte(tc.in), tc.at)
			if string(got) != "<"+tc.want || next != tc.next || err != tc.err {
				t.Errorf("AppendEscape(%q, %d) = %q, %d, %v; want %q, %d, %v",
					tc.in, tc.at, got, next, err, "<"+tc.want, tc.next, tc.err)
			}
		})
	}
}

func TestSkipSpaceStopsAtTheFirstNonSpace(t *testing.T) {
	cases := []struct {
		in       string
		from, to int
	}{
		{"", 0, 0},
		{"x", 0, 0},
		{" \t\r\n x", 0, 5},
		{"   ", 0, 3},
		{"a  b", 1, 3},
		{"\v\f x", 0, 0}, // vertical tab and form feed are not JSON white space
		{"\x00", 0, 0},
		{" \xa0", 0, 1}, // nor is a no-break space
		{"ab", 2, 2},
	}
	for _, tc := range cases {
		if got := SkipSpace([]byte(tc.in), tc.from); got != tc.to {
			t.Errorf("SkipSpace(%q, %d) = %d, want %d", tc.in, tc.from, got, tc.to)
		}
	}
}

// FuzzAppendUnescaped checks AppendUnescaped against encoding/json: every
// valid UTF-8 string encoding/json reads decodes to the same text, and
// every string it rejects for a bad escape is rejected too.
func FuzzAppendUnescaped(f *testing.F) {
	for _, s := range []string{"plain", `a\"b\\c\/d\b\f\n\r\t`, `\u00e9\ud83d\ude00`, `\ud83d`, `\ude00\ud83d`, `\ud83d\u0041`, `\x`, `\u12`, `\`, "héllo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := AppendUnescaped(nil, []byte(raw))
		if !utf8.ValidString(raw) {
			return // encoding/json replaces invalid UTF-8; AppendUnescaped copies it
		}
		for i := 0; i < len(raw); i++ {
			if raw[i] < 0x20 {
				return // encoding/json rejects raw control characters; AppendUnescaped copies them
			}
		}
		want, refErr := decodeRef(raw)
		if refErr == nil {
			if err != nil || string(got) != want {
				t.Fatalf("AppendUnescaped(%q) = %q, %v; encoding/json read %q", raw, got, err, want)
			}
			return
		}
		// A quote that is not escaped ends the string early for
		// encoding/json; AppendUnescaped gets contents already cut at the
		// closing quote and copies it. Any other rejection is a bad escape.
		if err == nil && !strings.Contains(raw, `"`) {
			t.Fatalf("AppendUnescaped(%q) = %q, encoding/json rejects it: %v", raw, got, refErr)
		}
	})
}

func BenchmarkAppendUnescaped(b *testing.B) {
	raw := []byte(`It's \"21\u00b0C\" in Z\u00fcrich today \ud83d\ude00\nBring a coat.`)
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendUnescaped(buf[:0], raw); err != nil {
			b.Fatal(err)
		}
	}
}
