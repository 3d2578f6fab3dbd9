package vonage

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var wireUpdate = flag.Bool("update-wire", false, "rewrite testdata/wire-out-* from the encoder")

// wireSamples is the golden audio: n samples, sample i being int16(i*37).
func wireSamples(n int) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(i * 37)
	}
	return s
}

func wireRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFrameBytesIsTwentyMilliseconds(t *testing.T) {
	for rate, want := range map[int]int{8000: 320, 16000: 640, 24000: 960} {
		if got := FrameBytes(rate); got != want {
			t.Errorf("FrameBytes(%d) = %d, want %d", rate, got, want)
		}
	}
}

func TestDecodeAudioGolden(t *testing.T) {
	var d Decoder
	for file, n := range map[string]int{"wire-in-audio-16k.bin": 320, "wire-in-audio-8k.bin": 160} {
		got, err := d.DecodeAudio(wireRead(t, file), nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if diff := cmp.Diff(wireSamples(n), got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
	}
}

func TestDecodeAudioAppendsToTheCallersSlice(t *testing.T) {
	dst := make([]int16, 1, 400)
	dst[0] = 9
	got, err := (&Decoder{}).DecodeAudio([]byte{1, 0, 0xFF, 0xFF}, dst)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int16{9, 1, -1}, got); diff != "" {
		t.Errorf("DecodeAudio (-want +got):\n%s", diff)
	}
	if &got[0] != &dst[0] {
		t.Error("DecodeAudio reallocated a slice with room")
	}
}

func TestDecodeAudioRefusals(t *testing.T) {
	d := Decoder{Limits: Limits{MaxAudio: 640}}
	for name, c := range map[string]struct {
		frame []byte
		want  error
	}{
		"empty":        {nil, ErrBadAudio},
		"half sample":  {make([]byte, 321), ErrBadAudio},
		"over the cap": {make([]byte, 642), ErrTooLarge},
	} {
		got, err := d.DecodeAudio(c.frame, nil)
		if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "vonage: ") {
			t.Errorf("%s: error = %v, want vonage: ... %v", name, err, c.want)
		}
		if got != nil {
			t.Errorf("%s: refused but returned %d samples", name, len(got))
		}
	}
}

func TestDecodeTextGolden(t *testing.T) {
	cases := []struct {
		file string
		want Event
	}{
		{"wire-in-connected.json", Event{Kind: KindConnected, Name: "websocket:connected", Connected: Connected{
			ContentType: "audio/l16;rate=16000", SampleRate: 16000,
			Headers: map[string]string{"caller": "447700900000", "token": "t-123"}}}},
		{"wire-in-dtmf.json", Event{Kind: KindDTMF, Name: "websocket:dtmf", DTMF: DTMF{Digit: "5", Duration: 260}}},
		{"wire-in-notify.json", Event{Kind: KindNotify, Name: "websocket:notify",
			Notify: Notify{Name: "answer-1/3", Payload: json.RawMessage(`{"name": "answer-1/3"}`)}}},
		{"wire-in-cleared.json", Event{Kind: KindCleared, Name: "websocket:cleared"}},
	}
	var d Decoder
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := d.DecodeText(wireRead(t, c.file))
			if err != nil {
				t.Fatalf("DecodeText: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("DecodeText (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeTextVariants(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		want Event
	}{
		{"8 kHz", `{"event":"websocket:connected","content-type":"audio/l16;rate=8000"}`,
			Event{Kind: KindConnected, Name: "websocket:connected", Connected: Connected{ContentType: "audio/l16;rate=8000", SampleRate: 8000}}},
		{"a header that is not a string is left out", `{"event":"websocket:connected","content-type":"audio/l16","n":3}`,
			Event{Kind: KindConnected, Name: "websocket:connected", Connected: Connected{ContentType: "audio/l16"}}},
		{"a nested dtmf object", `{"event":"websocket:dtmf","dtmf":{"digit":"#","duration":"100"}}`,
			Event{Kind: KindDTMF, Name: "websocket:dtmf", DTMF: DTMF{Digit: "#", Duration: 100}}},
		{"a notify of someone else's payload", `{"event":"websocket:notify","payload":{"id":7}}`,
			Event{Kind: KindNotify, Name: "websocket:notify", Notify: Notify{Payload: json.RawMessage(`{"id":7}`)}}},
		{"an unknown event", `{"event":"websocket:media:update","x":1}`,
			Event{Kind: KindUnknown, Name: "websocket:media:update"}},
	}
	var d Decoder
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := d.DecodeText([]byte(c.msg))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("DecodeText (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeTextRefusals(t *testing.T) {
	cases := []struct {
		name   string
		limits Limits
		msg    string
		want   error
		kind   Kind
	}{
		{name: "not JSON", msg: `{"event"`, want: ErrBadMessage},
		{name: "no event", msg: `{"digit":"1"}`, want: ErrBadMessage},
		{name: "dtmf without a digit", msg: `{"event":"websocket:dtmf"}`, want: ErrBadMessage, kind: KindDTMF},
		{name: "dtmf of a letter", msg: `{"event":"websocket:dtmf","digit":"x"}`, want: ErrBadMessage, kind: KindDTMF},
		{name: "duration not a number", msg: `{"event":"websocket:dtmf","digit":"1","duration":"NaN"}`, want: ErrBadMessage},
		{name: "message over the limit", limits: Limits{MaxText: 8}, msg: `{"event":"websocket:cleared"}`, want: ErrTooLarge},
		{name: "too many headers", limits: Limits{MaxHeaders: 1},
			msg: `{"event":"websocket:connected","content-type":"audio/l16;rate=8000","a":"1","b":"2"}`, want: ErrTooLarge, kind: KindConnected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decoder{Limits: c.limits}
			ev, err := d.DecodeText([]byte(c.msg))
			if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "vonage: ") {
				t.Fatalf("DecodeText error = %v, want vonage: ... %v", err, c.want)
			}
			if ev.Kind != c.kind || ev.Connected.Headers != nil || ev.DTMF.Digit != "" {
				t.Errorf("refused event = %+v, want only kind %v", ev, c.kind)
			}
		})
	}
}

func TestAppendGolden(t *testing.T) {
	cases := []struct {
		file  string
		got   []byte
		shape map[string]any // nil for the binary audio
	}{
		{"wire-out-audio-16k.bin", AppendAudio(nil, wireSamples(320)), nil},
		{"wire-out-notify.json", AppendNotify(nil, "answer-1/3"), map[string]any{
			"action": "notify", "payload": map[string]any{"name": "answer-1/3"}}},
		{"wire-out-clear.json", AppendClear(nil), map[string]any{"action": "clear"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", c.file)
			want := c.got
			if c.shape != nil {
				want = append(bytes.Clone(c.got), '\n')
			}
			if *wireUpdate {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if file := wireRead(t, c.file); !bytes.Equal(want, file) {
				t.Errorf("encoded\n%q\nwant (%s)\n%q", want, c.file, file)
			}
			if c.shape == nil {
				if len(c.got) != FrameBytes(16000) {
					t.Errorf("20 ms at 16 kHz is %d bytes, want %d", len(c.got), FrameBytes(16000))
				}
				return
			}
			var shape map[string]any
			if err := json.Unmarshal(c.got, &shape); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if diff := cmp.Diff(c.shape, shape); diff != "" {
				t.Errorf("shape (-documented +encoded):\n%s", diff)
			}
		})
	}
}

func TestAudioRoundTrips(t *testing.T) {
	in := wireSamples(160)
	out, err := (&Decoder{}).DecodeAudio(AppendAudio(nil, in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestNotifyNamesRoundTrip(t *testing.T) {
	name := "a\"b\\c\n\x01é"
	ev, err := (&Decoder{}).DecodeText(bytes.Replace(AppendNotify(nil, name), []byte(`"action":"notify"`), []byte(`"event":"websocket:notify"`), 1))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Notify.Name != name {
		t.Errorf("round trip gave %q, want %q", ev.Notify.Name, name)
	}
}

func TestMediaPathsDoNotAllocate(t *testing.T) {
	samples := wireSamples(320)
	frame := AppendAudio(nil, samples)
	dst := make([]byte, 0, 1024)
	pcm := make([]int16, 0, 320)
	var d Decoder
	allocs := testing.AllocsPerRun(200, func() {
		dst = AppendAudio(dst[:0], samples)
		dst = AppendNotify(dst[:0], "answer-1/3")
		dst = AppendClear(dst[:0])
		var err error
		if pcm, err = d.DecodeAudio(frame, pcm[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("the media paths allocated %v times per run, want 0", allocs)
	}
}

func BenchmarkDecodeAudio(b *testing.B) {
	frame := AppendAudio(nil, wireSamples(320))
	pcm := make([]int16, 0, 320)
	var d Decoder
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if pcm, err = d.DecodeAudio(frame, pcm[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendAudio(b *testing.B) {
	samples := wireSamples(320)
	dst := make([]byte, 0, 640)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendAudio(dst[:0], samples)
	}
}
