package openairealtime

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/dsp"
)

// scriptEvents returns the server events of every testdata script, with
// $AUDIO_100MS expanded: the fuzz seed corpus and the parse tests' input.
func scriptEvents(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob("testdata/*.ws")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no scripts: %v", err)
	}
	audio := base64.StdEncoding.EncodeToString(tone100ms)
	var out []string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "> "); ok {
				out = append(out, strings.ReplaceAll(line, "$AUDIO_100MS", audio))
			}
		}
		f.Close()
	}
	return out
}

func TestParseEventMatchesEncodingJSON(t *testing.T) {
	for _, msg := range scriptEvents(t) {
		var ev event
		if err := parseEvent([]byte(msg), &ev); err != nil {
			t.Errorf("parseEvent(%.60s...): %v", msg, err)
			continue
		}
		var want struct {
			Type       string `json:"type"`
			ItemID     string `json:"item_id"`
			ResponseID string `json:"response_id"`
			Delta      string `json:"delta"`
			Transcript string `json:"transcript"`
			CallID     string `json:"call_id"`
			Arguments  string `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(msg), &want); err != nil {
			t.Fatalf("fixture is not JSON: %v", err)
		}
		got := struct{ Type, ItemID, ResponseID, Delta, Transcript, CallID, Arguments string }{
			str(ev.typ), str(ev.itemID), str(ev.responseID), str(ev.delta), str(ev.transcript), str(ev.callID), str(ev.arguments),
		}
		if d := cmp.Diff(struct{ Type, ItemID, ResponseID, Delta, Transcript, CallID, Arguments string }(want), got); d != "" {
			t.Errorf("%s (-encoding/json +parseEvent):\n%s", want.Type, d)
		}
		if ev.kind == evOther && knownType(want.Type) {
			t.Errorf("%s parsed as an unknown kind", want.Type)
		}
	}
}

func knownType(t string) bool {
	return strings.HasPrefix(t, "response.output_audio.delta") || t == "response.done" || t == "error" || t == "input_audio_buffer.speech_started"
}

func TestParseEventRejects(t *testing.T) {
	for _, bad := range []string{
		``, `[]`, `"x"`, `{`, `{"type"}`, `{"type":}`, `{"type":"a",}`, `{"type":"a"} x`,
		`{"delta":"x"}`, `{"type":1}`, `{"type":"a","b":"\"}`, `{"type":"a","b":[1,2}`,
		`{"type":"a","b":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		var ev event
		if err := parseEvent([]byte(bad), &ev); err == nil {
			t.Errorf("parseEvent(%q) accepted it", bad)
		}
	}
}

func TestDecodeAudio(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString(tone100ms)
	pcm, _, err := decodeAudio(nil, nil, []byte(b64))
	if err != nil || string(pcm) != string(tone100ms) {
		t.Fatalf("plain: %v", err)
	}
	escaped := strings.ReplaceAll(b64, "/", `\/`)
	pcm, _, err = decodeAudio(nil, nil, []byte(escaped))
	if err != nil || string(pcm) != string(tone100ms) {
		t.Fatalf("with \\/ escapes: %v", err)
	}
	if _, _, err := decodeAudio(nil, nil, []byte("not base64!")); err == nil {
		t.Error("bad base64 accepted")
	}
}

func TestParseAudioDeltaDoesNotAllocate(t *testing.T) {
	msg := []byte(audioDeltaEvent())
	var ev event
	var pcm, scratch []byte
	n := testing.AllocsPerRun(100, func() {
		if err := parseEvent(msg, &ev); err != nil {
			t.Fatal(err)
		}
		pcm, scratch, _ = decodeAudio(pcm, scratch, ev.delta)
	})
	if n != 0 {
		t.Errorf("parse and decode of an audio delta allocate %v times", n)
	}
}

func audioDeltaEvent() string {
	return `{"type":"response.output_audio.delta","event_id":"event_11","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"` +
		base64.StdEncoding.EncodeToString(tone100ms) + `"}`
}

// FuzzParseEvent checks that no server message crashes the parser, and
// that it reads the type of every JSON object that has a string type as
// encoding/json does.
func FuzzParseEvent(f *testing.F) {
	for _, msg := range scriptEvents(f) {
		f.Add([]byte(msg))
	}
	f.Add([]byte(`{"type":"typ\u0065","typ\u0065":"x"}`))
	f.Add([]byte(`{"type":"response.output_audio.delta","delta":"AAEC\/w=="}`))
	f.Add([]byte(`{"type":"response.done","response":null,"audio_end_ms":-1}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		var ev event
		err := parseEvent(msg, &ev)
		if err == nil {
			_, _, _ = decodeAudio(nil, nil, ev.delta)
			_ = str(ev.transcript)
		}
		if !json.Valid(msg) || !utf8.Valid(msg) {
			return
		}
		var m map[string]any
		if json.Unmarshal(msg, &m) != nil {
			return
		}
		typ, ok := m["type"].(string)
		if !ok {
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "nested deeper") {
				return
			}
			t.Fatalf("valid event %q rejected: %v", msg, err)
		}
		if got := str(ev.typ); got != typ {
			t.Fatalf("type %q, encoding/json says %q", got, typ)
		}
	})
}

// BenchmarkParseAudioDelta measures the cost of one 100 ms audio delta
// (6.4 kB of base64): parse and base64 decode.
func BenchmarkParseAudioDelta(b *testing.B) {
	msg := []byte(audioDeltaEvent())
	var ev event
	var pcm, scratch []byte
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if err := parseEvent(msg, &ev); err != nil {
			b.Fatal(err)
		}
		pcm, scratch, _ = decodeAudio(pcm, scratch, ev.delta)
	}
}

// BenchmarkParseTranscriptDelta measures one transcript delta.
func BenchmarkParseTranscriptDelta(b *testing.B) {
	msg := []byte(`{"type":"response.output_audio_transcript.delta","event_id":"event_10","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":" there"}`)
	var ev event
	b.ReportAllocs()
	for b.Loop() {
		if err := parseEvent(msg, &ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAudioAppendEvent measures the cost of sending one 20 ms frame of
// 16 kHz user audio: resampling to 24 kHz and encoding the append event.
func BenchmarkAudioAppendEvent(b *testing.B) {
	rs, err := dsp.NewResampler(16000, apiRate, 1, dsp.ResamplerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	in := tone100ms[:640]
	var out, ev []byte
	b.ReportAllocs()
	for b.Loop() {
		out = rs.Resample(out[:0], in)
		ev = appendAudioEvent(ev[:0], out)
	}
}

// BenchmarkAudioAppendEncode is the encoding part alone: one 20 ms frame
// at 24 kHz into an append event.
func BenchmarkAudioAppendEncode(b *testing.B) {
	in := tone100ms[:960]
	var ev []byte
	b.ReportAllocs()
	for b.Loop() {
		ev = appendAudioEvent(ev[:0], in)
	}
}
