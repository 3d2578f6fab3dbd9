package jsonwire

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

func TestNumberReadsStringsAndNumbers(t *testing.T) {
	for text, want := range map[string]Number{
		`3`: 3, `"3"`: 3, `-40`: -40, `"-40"`: -40, `0`: 0, `null`: 0, `""`: 0,
		`"999999999999999999"`: 999999999999999999,
	} {
		var n Number = 7
		if err := n.UnmarshalJSON([]byte(text)); err != nil || n != want {
			t.Errorf("Number(%s) = %d, %v; want %d", text, n, err, want)
		}
	}
}

func TestNumberRefusesWhatIsNotAnInteger(t *testing.T) {
	for _, text := range []string{
		`1.5`, `"1.5"`, `1e3`, `"x"`, `-`, `"-"`, `"+1"`, `" 1"`, `true`, `"9999999999999999999"`,
	} {
		var n Number = 7
		if err := n.UnmarshalJSON([]byte(text)); err == nil {
			t.Errorf("Number(%s) = %d, want an error", text, n)
		} else if n != 0 {
			t.Errorf("Number(%s) refused but left %d, want 0", text, n)
		}
	}
}

func TestNumberThroughEncodingJSON(t *testing.T) {
	var v struct {
		A, B, C Number
	}
	if err := json.Unmarshal([]byte(`{"A":"12","B":-3,"C":null}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.A != 12 || v.B != -3 || v.C != 0 {
		t.Errorf("decoded %+v, want A 12, B -3, C 0", v)
	}
}

func TestPayloadDecodesIntoTheBuffer(t *testing.T) {
	buf := make([]byte, 0, 16)
	p := Payload{Buf: buf, Limit: 16}
	if err := p.UnmarshalJSON([]byte(`"AP8="`)); err != nil {
		t.Fatal(err)
	}
	if !p.Set || p.Err != nil {
		t.Errorf("Set = %v, Err = %v; want true, nil", p.Set, p.Err)
	}
	if diff := cmp.Diff([]byte{0x00, 0xFF}, p.Out); diff != "" {
		t.Errorf("Out (-want +got):\n%s", diff)
	}
	if unsafe.SliceData(p.Out) != unsafe.SliceData(buf) {
		t.Error("the payload was not decoded into Buf")
	}
}

func TestPayloadUnquotesAnEscapedString(t *testing.T) {
	// A JSON encoder may write base64's slash as \/.
	p := Payload{Limit: 16}
	if err := p.UnmarshalJSON([]byte(`"\/w\u003d="`)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]byte{0xFF}, p.Out); diff != "" {
		t.Errorf("Out (-want +got):\n%s", diff)
	}
}

func TestPayloadRefusals(t *testing.T) {
	for _, c := range []struct {
		text string
		want error
	}{
		{`12`, ErrBadMessage},
		{`null`, ErrBadMessage},
		{`"\x"`, ErrBadMessage},
		{`"!!!!"`, ErrBadPayload},
		{`"` + base64.StdEncoding.EncodeToString(make([]byte, 17)) + `"`, ErrTooLarge},
	} {
		p := Payload{Limit: 16}
		err := p.UnmarshalJSON([]byte(c.text))
		if !errors.Is(err, c.want) || p.Err != err || !p.Set {
			t.Errorf("Payload(%.20s): error %v (kept %v, set %v), want %v kept and set", c.text, err, p.Err, p.Set, c.want)
		}
		if p.Out != nil {
			t.Errorf("Payload(%.20s) refused but gave %d bytes", c.text, len(p.Out))
		}
	}
}

func TestPayloadThroughEncodingJSON(t *testing.T) {
	var v struct {
		Payload Payload `json:"payload"`
	}
	v.Payload = Payload{Buf: make([]byte, 0, 4), Limit: 4}
	if err := json.Unmarshal([]byte(`{"payload":"/w=="}`), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Payload.Set || string(v.Payload.Out) != "\xff" {
		t.Errorf("decoded %+v, want the byte 0xFF", v.Payload)
	}
	v.Payload = Payload{Limit: 4}
	if err := json.Unmarshal([]byte(`{}`), &v); err != nil || v.Payload.Set {
		t.Errorf("an absent payload: error %v, Set %v; want nil, false", err, v.Payload.Set)
	}
}

func TestDecodeBase64TakesPaddingOrNone(t *testing.T) {
	for _, b64 := range []string{"AP8=", "AP8"} {
		got, err := DecodeBase64([]byte(b64), nil, 2)
		if err != nil {
			t.Fatalf("%s: %v", b64, err)
		}
		if diff := cmp.Diff([]byte{0x00, 0xFF}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", b64, diff)
		}
	}
	for _, b64 := range []string{"AP8==", "AP8=A", "A", "-_8=", "AP 8"} {
		if _, err := DecodeBase64([]byte(b64), nil, 16); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%q: error %v, want %v", b64, err, ErrBadPayload)
		}
	}
}

func TestDecodeBase64EnforcesTheLimit(t *testing.T) {
	for n := 0; n <= 8; n++ {
		b64 := []byte(base64.StdEncoding.EncodeToString(make([]byte, n)))
		raw := []byte(base64.RawStdEncoding.EncodeToString(make([]byte, n)))
		for _, in := range [][]byte{b64, raw} {
			got, err := DecodeBase64(in, nil, 4)
			switch {
			case n <= 4 && (err != nil || len(got) != n):
				t.Errorf("%d bytes as %q: %d bytes, %v; want them under a limit of 4", n, in, len(got), err)
			case n > 4 && !errors.Is(err, ErrTooLarge):
				t.Errorf("%d bytes as %q: error %v, want %v", n, in, err, ErrTooLarge)
			}
		}
	}
	// Refused before decoding: a huge text costs no buffer, only the
	// error (its text and boxed figures).
	huge := []byte(strings.Repeat("A", 1<<20))
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	_, err := DecodeBase64(huge, nil, 16)
	runtime.ReadMemStats(&ms1)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a huge payload: error %v, want %v", err, ErrTooLarge)
	}
	if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > 4<<10 {
		t.Errorf("refusing a huge payload allocated %d bytes, want no buffer", grew)
	}
}

func TestDecodeBase64GrowsOnlyWhenItMust(t *testing.T) {
	buf := make([]byte, 0, 1)
	got, err := DecodeBase64([]byte("AP8="), buf, 16)
	if err != nil || len(got) != 2 {
		t.Fatalf("got %v, %v", got, err)
	}
	if unsafe.SliceData(got) == unsafe.SliceData(buf) {
		t.Error("a payload larger than the buffer was written into it")
	}
}

func TestValidDigit(t *testing.T) {
	valid := "0123456789*#ABCD"
	for c := range 256 {
		d := string(rune(c))
		if c >= 0x80 {
			d = string([]byte{byte(c)})
		}
		want := strings.Contains(valid, d)
		if got := ValidDigit(d); got != want {
			t.Errorf("ValidDigit(%q) = %v, want %v", d, got, want)
		}
	}
	for _, d := range []string{"", "12", "a", "E"} {
		if ValidDigit(d) {
			t.Errorf("ValidDigit(%q) = true", d)
		}
	}
}

func TestInternReturnsTheSameStringForTheSameBytes(t *testing.T) {
	var last string
	a := Intern(&last, []byte("MZ1"))
	b := Intern(&last, []byte("MZ1"))
	if a != "MZ1" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("the same bytes gave two strings")
	}
	if c := Intern(&last, []byte("MZ2")); c != "MZ2" || last != "MZ2" {
		t.Errorf("new bytes gave %q (last %q), want MZ2", c, last)
	}
	id := []byte("MZ2")
	if allocs := testing.AllocsPerRun(100, func() { _ = Intern(&last, id) }); allocs != 0 {
		t.Errorf("interning the last string allocated %v times, want 0", allocs)
	}
}

func TestAppendStringRoundTrips(t *testing.T) {
	for _, s := range []string{"", "MZ1", "answer-1/3", "a\"b\\c\n\r\t\x01\x1fé", "<&>"} {
		got := AppendString([]byte("x"), s)
		if got[0] != 'x' {
			t.Fatalf("AppendString(%q) did not append", s)
		}
		var back string
		if err := json.Unmarshal(got[1:], &back); err != nil || back != s {
			t.Errorf("AppendString(%q) = %s, read back as %q, %v", s, got[1:], back, err)
		}
	}
	if got := string(AppendString(nil, "a\x01")); got != `"a\u0001"` {
		t.Errorf("a control character: %s, want \"a\\u0001\"", got)
	}
	dst := make([]byte, 0, 64)
	if allocs := testing.AllocsPerRun(100, func() { dst = AppendString(dst[:0], "MZ\"1") }); allocs != 0 {
		t.Errorf("appending into room allocated %v times, want 0", allocs)
	}
}
