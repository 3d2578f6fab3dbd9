package elevenlabs

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/wsfake"
	"github.com/framewire/framewire/processors/tts"
)

func TestDecodeAnAudioChunk(t *testing.T) {
	var m message
	data := `{"audio":"AAECAw==","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[0,40],"charsDurationsMs":[40,40],"chars":["o","k"]},` +
		`"alignment":{"charStartTimesMs":[5,45],"charsDurationsMs":[40,40],"chars":["O","K"]},"contextId":"c-1"}`
	if err := m.decode([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.audio, []byte{0, 1, 2, 3}) || string(m.contextID) != "c-1" || m.final || m.isError() {
		t.Errorf("decoded %+v", m)
	}
	// The alignment of the text as sent wins over the normalised one.
	var wb wordBuilder
	words := wb.flush(wb.add(nil, m.timing(), time.Second))
	if diff := cmp.Diff([]tts.Word{{Text: "OK", Start: time.Second + 5*time.Millisecond}}, words); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
}

func TestDecodeTheOtherMessages(t *testing.T) {
	tests := []struct {
		name, data string
		final      bool
		id         string
		errCode    string
		errText    string
	}{
		{"final", `{"isFinal":true,"contextId":"c-1"}`, true, "c-1", "", ""},
		{"final in snake case", `{"is_final":true,"context_id":"c-2","audio":null}`, true, "c-2", "", ""},
		{"error", `{"message":"Invalid API key","error":"invalid_api_key","code":1008}`, false, "", "invalid_api_key", "Invalid API key"},
		{"unknown members", `{"type":"x","nested":{"a":[1,{"b":"c"}]},"isFinal":false}`, false, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m message
			if err := m.decode([]byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			if m.final != tc.final || string(m.contextID) != tc.id || m.errCode != tc.errCode || m.errText != tc.errText || m.isError() != (tc.errText != "") {
				t.Errorf("decoded %+v", m)
			}
		})
	}
}

func TestDecodeRejectsBadMessages(t *testing.T) {
	for _, data := range []string{
		``, `null`, `[]`, `{"audio":"%%%"}`, `{"audio":"AAA="`, `{"alignment":{"chars":["a","b"],"charStartTimesMs":[1]}}`,
		`{"alignment":{"chars":"ab"}}`, `{"audio":"AA=="} trailing`,
	} {
		var m message
		if err := m.decode([]byte(data)); err == nil {
			t.Errorf("%q: no error", data)
		} else if !strings.HasPrefix(err.Error(), "elevenlabs: ") {
			t.Errorf("%q: error %q does not name the client", data, err)
		}
	}
}

func TestWordsFromCharacters(t *testing.T) {
	al := func(chars string, starts ...int) *alignment {
		a := &alignment{}
		for i, r := range []rune(chars) {
			a.chars = append(a.chars, string(r)...)
			a.ends = append(a.ends, len(a.chars))
			a.starts = append(a.starts, time.Duration(starts[i])*time.Millisecond)
		}
		return a
	}
	var wb wordBuilder
	var words []tts.Word
	// Spaces of any kind separate words; a word may straddle chunks; the
	// offset shifts each chunk's times.
	words = wb.add(words, al("Ça va,  très", 0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110), 0)
	words = wb.add(words, al(" bien\n", 0, 10, 20, 30, 40, 50), time.Second)
	words = wb.add(words, al("merci", 5, 10, 15, 20, 25), 2*time.Second)
	words = wb.flush(words)
	want := []tts.Word{
		{Text: "Ça", Start: 0}, {Text: "va,", Start: 30 * time.Millisecond}, {Text: "très", Start: 80 * time.Millisecond},
		{Text: "bien", Start: time.Second + 10*time.Millisecond}, {Text: "merci", Start: 2*time.Second + 5*time.Millisecond},
	}
	if diff := cmp.Diff(want, words); diff != "" {
		t.Errorf("words (-want +got):\n%s", diff)
	}
	if wb.spoken != countSpoken("Ça va,  très bien\nmerci") {
		t.Errorf("spoken %d, want %d", wb.spoken, countSpoken("Ça va,  très bien\nmerci"))
	}
	// A run without spaces is cut, not grown without bound.
	long := strings.Repeat("a", 3*maxWordBytes)
	starts := make([]int, len(long))
	words = wb.flush(wb.add(nil, al(long, starts...), 0))
	if len(words) != 3 {
		t.Errorf("%d words from a %d-byte run", len(words), len(long))
	}
}

func TestErrorBodies(t *testing.T) {
	tests := []struct {
		status   int
		body     string
		code     string
		message  string
		category frames.ErrorCategory
	}{
		{401, `{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}`, "invalid_api_key", "Invalid API key", frames.ErrorPermanent},
		{401, `{"detail":{"status":"quota_exceeded","message":"This request exceeds your quota."}}`, "quota_exceeded", "This request exceeds your quota.", frames.ErrorPermanent},
		{400, `{"detail":{"type":"validation_error","code":"max_character_limit_exceeded","message":"Too long."}}`, "max_character_limit_exceeded", "Too long.", frames.ErrorPermanent},
		{422, `{"detail":[{"loc":["body","voice_settings","speed"],"msg":"ensure this value is less than or equal to 1.2"}]}`, "", "body.voice_settings.speed: ensure this value is less than or equal to 1.2", frames.ErrorPermanent},
		{429, `{"detail":{"status":"system_busy","message":"Busy."}}`, "system_busy", "Busy.", frames.ErrorTransient},
		{429, `{"detail":"Too many requests"}`, "", "Too many requests", frames.ErrorTransient},
		{502, `<html><body>Bad gateway</body></html>`, "", "", frames.ErrorTransient},
		{409, `{"detail":{"status":"something_new","message":"New."}}`, "something_new", "New.", frames.ErrorUnknown},
	}
	for _, tc := range tests {
		e := parseAPIError(tc.status, []byte(tc.body))
		if e.Code != tc.code || e.Message != tc.message || e.Category() != tc.category || e.Body != tc.body {
			t.Errorf("%d %s: parsed %+v (category %v)", tc.status, tc.body, e, e.Category())
		}
		if strings.Contains(e.Error(), "<html>") {
			t.Errorf("Error() carries the body: %q", e.Error())
		}
	}
	long := &APIError{StatusCode: 400, Message: strings.Repeat("x", 1000)}
	if n := len(long.Error()); n > 300 {
		t.Errorf("Error() is %d bytes long", n)
	}
}

// seeds are the server messages of the scripts and the HTTP fixture, with
// a few samples of audio standing in for the fixture's (small inputs keep
// the fuzzer fast).
func seeds(tb testing.TB) [][]byte {
	short := strings.NewReplacer("$A0", "AAECAw==", "$A1", "BAUGBw==", "$A2", "CAkKCw==", "$CTX", "ctx-1")
	var out [][]byte
	for _, name := range []string{"hello.ws", "interrupted.ws", "invalid_message.ws", "invalid_key.ws"} {
		for _, st := range wsfake.Load(tb, "testdata/"+name).Steps {
			if st.Kind == wsfake.Send {
				out = append(out, []byte(short.Replace(st.Text)))
			}
		}
	}
	b, err := os.ReadFile("testdata/http_hello.ndjson")
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out = append(out, []byte(short.Replace(l)))
	}
	return out
}

// FuzzMessage: any server message decodes to an error or to a sane
// message whose words, route and error never panic.
func FuzzMessage(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"alignment":{"chars":["a","b"],"charStartTimesMs":[1]}}`))
	f.Add([]byte(`{"alignment":{"characters":["a"],"character_start_times_seconds":[1e300]}}`))
	f.Add([]byte(`{"audio":"!!!","contextId":"\u00e9"}`))
	f.Add([]byte(`{"message":null,"error":{"x":1},"code":"1008"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r router
		_, _, rerr := r.route(data)
		var m message
		if err := m.decode(data); err != nil {
			return
		}
		if rerr != nil {
			t.Fatalf("decode accepted what route rejected: %v", rerr)
		}
		var wb wordBuilder
		for _, w := range wb.flush(wb.add(nil, m.timing(), time.Second)) {
			if w.Start < time.Second || w.Start > time.Second+maxTime || w.Text == "" || len(w.Text) > maxWordBytes+4 {
				t.Fatalf("bad word %+v", w)
			}
		}
		if m.isError() {
			if (&APIError{Code: m.errCode, Message: m.errText}).Error() == "" {
				t.Fatal("empty error text")
			}
		}
	})
}

// chunkMessage is the first audio chunk of hello.ws: 12,642 bytes of PCM
// (263 ms at 24 kHz) in base64, with both alignments.
func chunkMessage(b *testing.B) []byte {
	for _, st := range wsfake.Load(b, "testdata/hello.ws").Steps {
		if st.Kind == wsfake.Send && strings.Contains(st.Text, `"audio"`) {
			return []byte(expandScript(b, st.Text))
		}
	}
	b.Fatal("no chunk in hello.ws")
	return nil
}

// BenchmarkParseChunk is the cost of one websocket audio chunk on the
// request's side: decoding its base64 audio and alignment and building
// its words.
func BenchmarkParseChunk(b *testing.B) {
	msg := chunkMessage(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	var m message
	var wb wordBuilder
	var words []tts.Word
	for b.Loop() {
		if err := m.decode(msg); err != nil {
			b.Fatal(err)
		}
		words = wb.flush(wb.add(words[:0], m.timing(), 0))
	}
}

// BenchmarkRouteChunk is the cost of one chunk on the connection's reader:
// finding its context id.
func BenchmarkRouteChunk(b *testing.B) {
	msg := chunkMessage(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	var r router
	for b.Loop() {
		if _, _, err := r.route(msg); err != nil {
			b.Fatal(err)
		}
	}
}
