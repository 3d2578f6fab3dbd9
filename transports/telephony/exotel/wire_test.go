package exotel

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/framewire/framewire/transports/telephony/internal/jsonwire/jsonwiretest"
	"github.com/google/go-cmp/cmp"
)

var wireUpdate = flag.Bool("update-wire", false, "rewrite testdata/wire-out-*.json from the encoder")

const wireSID = "MZxxxxxxxxxxxxxxxxxxxxxxxx"

// wirePayload is the golden media message's payload: 100 ms of 16-bit
// little-endian PCM at 8 kHz, sample i being int16(i*37).
func wirePayload() []byte {
	p := make([]byte, 3200)
	for i := range 1600 {
		binary.LittleEndian.PutUint16(p[2*i:], uint16(int16(i*37)))
	}
	return p
}

func wireRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeGolden(t *testing.T) {
	const (
		call    = "CAxxxxxxxxxxxxxxxxxxxxxxxx"
		account = "ACxxxxxxxxxxxxxxxxxxxxxxxx"
	)
	cases := []struct {
		file string
		want Event
	}{
		{"wire-in-connected.json", Event{Kind: KindConnected, Name: "connected"}},
		{"wire-in-start.json", Event{Kind: KindStart, Name: "start", Sequence: 1, StreamSID: wireSID,
			Start: Start{
				StreamSID: wireSID, CallSID: call, AccountSID: account, From: "+919876543210", To: "+918047491899",
				CustomParameters: map[string]string{"key1": "value1"},
				Format:           Format{Encoding: EncodingRaw, SampleRate: 8000, BitRate: 16},
			}}},
		{"wire-in-media.json", Event{Kind: KindMedia, Name: "media", Sequence: 3, StreamSID: wireSID,
			Media: Media{Chunk: 2, Timestamp: 200, Payload: wirePayload()}}},
		{"wire-in-dtmf.json", Event{Kind: KindDTMF, Name: "dtmf", Sequence: 7, StreamSID: wireSID,
			DTMF: DTMF{Digit: "5", Duration: 100}}},
		{"wire-in-mark.json", Event{Kind: KindMark, Name: "mark", Sequence: 15, StreamSID: wireSID, Mark: Mark{Name: "answer-1/3"}}},
		{"wire-in-stop.json", Event{Kind: KindStop, Name: "stop", Sequence: 20, StreamSID: wireSID,
			Stop: Stop{CallSID: call, AccountSID: account, Reason: "callended"}}},
	}
	var d Decoder
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := d.Decode(wireRead(t, c.file), make([]byte, 0, DefaultMaxPayload))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeMediaFillsTheCallersBuffer(t *testing.T) {
	buf := make([]byte, 0, 4096)
	ev, err := (&Decoder{}).Decode(wireRead(t, "wire-in-media.json"), buf)
	if err != nil {
		t.Fatal(err)
	}
	if &ev.Media.Payload[0] != &buf[:1][0] {
		t.Error("the payload was not decoded into the caller's buffer")
	}
}

func TestDecodeTakesNumbersAsNumbersOrStrings(t *testing.T) {
	msg := `{"event":"media","sequence_number":7,"stream_sid":"MZ1","media":{"chunk":2,"timestamp":"40","payload":"/w=="}}`
	ev, err := (&Decoder{}).Decode([]byte(msg), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Kind: KindMedia, Name: "media", Sequence: 7, StreamSID: "MZ1",
		Media: Media{Chunk: 2, Timestamp: 40, Payload: []byte{0xFF}}}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func TestDecodeReadsAnEscapedPayload(t *testing.T) {
	// A JSON encoder may write base64's slash as \/.
	msg := `{"event":"media","stream_sid":"MZ1","media":{"payload":"\/w=="}}`
	ev, err := (&Decoder{}).Decode([]byte(msg), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]byte{0xFF}, ev.Media.Payload); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
}

func TestDecodeReportsAnUnknownEventWithoutFailing(t *testing.T) {
	long := strings.Repeat("x", 100)
	ev, err := (&Decoder{}).Decode([]byte(`{"event":"`+long+`","sequence_number":"9","stream_sid":"MZ1"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Kind: KindUnknown, Name: long[:64], Sequence: 9, StreamSID: "MZ1"}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func TestDecodeRefusals(t *testing.T) {
	big := base64.StdEncoding.EncodeToString(make([]byte, 101))
	cases := []struct {
		name   string
		limits Limits
		msg    string
		want   error
		kind   Kind
		sid    string
		text   string
	}{
		{name: "not JSON", msg: `{"event":`, want: ErrBadMessage},
		{name: "not an object", msg: `[1,2]`, want: ErrBadMessage},
		{name: "no event", msg: `{"stream_sid":"MZ1"}`, want: ErrBadMessage, sid: "MZ1"},
		{name: "bad base64", msg: `{"event":"media","stream_sid":"MZ1","media":{"payload":"!!!"}}`,
			want: ErrBadPayload, kind: KindMedia, sid: "MZ1", text: `media of stream "MZ1"`},
		{name: "payload not a string", msg: `{"event":"media","stream_sid":"MZ1","media":{"payload":12}}`,
			want: ErrBadMessage, kind: KindMedia, sid: "MZ1"},
		{name: "media without payload", msg: `{"event":"media","stream_sid":"MZ1","media":{"chunk":"1"}}`,
			want: ErrBadMessage, kind: KindMedia, sid: "MZ1"},
		{name: "payload over the limit", limits: Limits{MaxPayload: 100},
			msg:  `{"event":"media","stream_sid":"MZ1","media":{"payload":"` + big + `"}}`,
			want: ErrTooLarge, kind: KindMedia, sid: "MZ1"},
		{name: "message over the limit", limits: Limits{MaxMessage: 10}, msg: `{"event":"connected"}`, want: ErrTooLarge},
		{name: "start without a stream", msg: `{"event":"start","start":{"call_sid":"CA1"}}`, want: ErrBadMessage, kind: KindStart},
		{name: "too many parameters", limits: Limits{MaxParameters: 1},
			msg:  `{"event":"start","stream_sid":"MZ1","start":{"stream_sid":"MZ1","custom_parameters":{"a":"1","b":"2"}}}`,
			want: ErrTooLarge, kind: KindStart, sid: "MZ1"},
		{name: "dtmf without a digit", msg: `{"event":"dtmf","stream_sid":"MZ1","dtmf":{"duration":"100"}}`,
			want: ErrBadMessage, kind: KindDTMF, sid: "MZ1"},
		{name: "dtmf of two digits", msg: `{"event":"dtmf","stream_sid":"MZ1","dtmf":{"digit":"12"}}`,
			want: ErrBadMessage, kind: KindDTMF, sid: "MZ1"},
		{name: "mark without a mark", msg: `{"event":"mark","stream_sid":"MZ1"}`, want: ErrBadMessage, kind: KindMark, sid: "MZ1"},
		{name: "sequence not a number", msg: `{"event":"stop","sequence_number":"x"}`, want: ErrBadMessage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decoder{Limits: c.limits}
			ev, err := d.Decode([]byte(c.msg), nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("Decode error = %v, want %v", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "exotel: ") || !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q does not say exotel and %q", err, c.text)
			}
			if ev.Kind != c.kind || ev.StreamSID != c.sid || ev.Media.Payload != nil || ev.Sequence != 0 {
				t.Errorf("refused event = %+v, want only kind %v and stream %q", ev, c.kind, c.sid)
			}
		})
	}
}

func TestAppendGolden(t *testing.T) {
	cases := []struct {
		file  string
		got   []byte
		shape map[string]any
	}{
		{"wire-out-media.json", AppendMedia(nil, wireSID, wirePayload()), map[string]any{
			"event": "media", "stream_sid": wireSID,
			"media": map[string]any{"payload": base64.StdEncoding.EncodeToString(wirePayload())}}},
		{"wire-out-mark.json", AppendMark(nil, wireSID, "answer-1/3"), map[string]any{
			"event": "mark", "stream_sid": wireSID, "mark": map[string]any{"name": "answer-1/3"}}},
		{"wire-out-clear.json", AppendClear(nil, wireSID), map[string]any{
			"event": "clear", "stream_sid": wireSID}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			jsonwiretest.Golden(t, filepath.Join("testdata", c.file), c.got, c.shape, *wireUpdate)
		})
	}
}

func TestAppendEscapesNamesAsJSON(t *testing.T) {
	name := "a\"b\\c\n\x01é"
	var m struct {
		StreamSid string `json:"stream_sid"`
		Mark      struct {
			Name string `json:"name"`
		} `json:"mark"`
	}
	if err := json.Unmarshal(AppendMark(nil, "MZ\t1", name), &m); err != nil {
		t.Fatal(err)
	}
	if m.Mark.Name != name || m.StreamSid != "MZ\t1" {
		t.Errorf("round trip gave %q and %q", m.StreamSid, m.Mark.Name)
	}
}

func TestAppendMediaPathsDoNotAllocate(t *testing.T) {
	payload := wirePayload()
	dst := make([]byte, 0, 8192)
	allocs := testing.AllocsPerRun(200, func() {
		dst = AppendMedia(dst[:0], wireSID, payload)
		dst = AppendMark(dst[:0], wireSID, "answer-1/3")
		dst = AppendClear(dst[:0], wireSID)
	})
	if allocs != 0 {
		t.Errorf("appending allocated %v times per run, want 0", allocs)
	}
}

func TestDecodeMediaDoesNotAllocate(t *testing.T) {
	msg := wireRead(t, "wire-in-media.json")
	buf := make([]byte, 0, DefaultMaxPayload)
	var d Decoder
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := d.Decode(msg, buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("decoding a media message allocated %v times per run, want 0", allocs)
	}
}

func BenchmarkDecodeMedia(b *testing.B) {
	msg := wireRead(b, "wire-in-media.json")
	buf := make([]byte, 0, DefaultMaxPayload)
	var d Decoder
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(msg, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendMedia(b *testing.B) {
	payload := wirePayload()
	dst := make([]byte, 0, 8192)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendMedia(dst[:0], wireSID, payload)
	}
}

// wireFastPathSeeds are media messages at the edges of the fast path:
// some it reads, some it leaves to encoding/json.
var wireFastPathSeeds = jsonwiretest.FastPathSeeds(jsonwiretest.Keys{
	Stream: "stream_sid", Sequence: "sequence_number", Other: "stop", Member: `"chunk" : "7"`})

// wirePaths are the Decoder's fast path and its encoding/json path, each
// on a Decoder of its own and a payload buffer of capacity room.
func wirePaths(lim Limits, room int) jsonwiretest.Paths[Event] {
	return jsonwiretest.Paths[Event]{
		Fast: func(msg []byte) (Event, bool) {
			var d Decoder
			return d.decodeMedia(msg, make([]byte, 0, room), lim)
		},
		JSON: func(msg []byte) (Event, error) {
			var d Decoder
			return d.decodeJSON(msg, make([]byte, 0, room), lim)
		},
	}
}

func TestFastPathAgreesWithEncodingJSON(t *testing.T) {
	wirePaths(Limits{}.withDefaults(), 0).Agree(t, wireFastPathSeeds)
}

func TestDecodeReusesTheStreamID(t *testing.T) {
	var d Decoder
	msg := wireRead(t, "wire-in-media.json")
	a, _ := d.Decode(msg, nil)
	b, _ := d.Decode(msg, nil)
	if a.StreamSID != wireSID || unsafe.StringData(a.StreamSID) != unsafe.StringData(b.StreamSID) {
		t.Error("the stream id of consecutive media messages is not the same string")
	}
}

func TestDecodeTakesBase64WithoutPadding(t *testing.T) {
	for _, b64 := range []string{"AP8=", "AP8"} {
		msg := `{"event":"media","stream_sid":"S1","media":{"payload":"` + b64 + `"}}`
		ev, err := (&Decoder{}).Decode([]byte(msg), nil)
		if err != nil {
			t.Fatalf("%s: %v", b64, err)
		}
		if diff := cmp.Diff([]byte{0x00, 0xFF}, ev.Media.Payload); diff != "" {
			t.Errorf("%s: payload (-want +got):\n%s", b64, diff)
		}
	}
	if _, err := (&Decoder{}).Decode([]byte(`{"event":"media","media":{"payload":"AP8=="}}`), nil); !errors.Is(err, ErrBadPayload) {
		t.Errorf("too much padding: error %v, want %v", err, ErrBadPayload)
	}
}
