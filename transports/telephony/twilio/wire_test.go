package twilio

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/transports/telephony/internal/jsonwire/jsonwiretest"
)

var wireUpdate = flag.Bool("update-wire", false, "rewrite testdata/wire-out-*.json from the encoder")

const wireSID = "MZXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"

// wirePayload is the golden media message's payload: (i*37) & 0xFF.
func wirePayload() []byte {
	p := make([]byte, 160)
	for i := range p {
		p[i] = byte(i * 37)
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
	cases := []struct {
		file string
		want Event
	}{
		{"wire-in-connected.json", Event{Kind: KindConnected, Name: "connected",
			Connected: Connected{Protocol: "Call", Version: "1.0.0"}}},
		{"wire-in-start.json", Event{Kind: KindStart, Name: "start", Sequence: 1, StreamSID: wireSID,
			Start: Start{
				StreamSID: wireSID, AccountSID: "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", CallSID: "CAXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
				Tracks:           []string{"inbound"},
				CustomParameters: map[string]string{"FirstName": "Jane", "LastName": "Doe", "RemoteParty": "Bob"},
				Format:           Format{Encoding: EncodingMuLaw, SampleRate: 8000, Channels: 1},
			}}},
		{"wire-in-media.json", Event{Kind: KindMedia, Name: "media", Sequence: 3, StreamSID: wireSID,
			Media: Media{Track: "inbound", Chunk: 1, Timestamp: 5, Payload: wirePayload()}}},
		{"wire-in-dtmf.json", Event{Kind: KindDTMF, Name: "dtmf", Sequence: 5, StreamSID: wireSID,
			DTMF: DTMF{Track: "inbound_track", Digit: "1"}}},
		{"wire-in-mark.json", Event{Kind: KindMark, Name: "mark", Sequence: 4, StreamSID: wireSID,
			Mark: Mark{Name: "my label"}}},
		{"wire-in-stop.json", Event{Kind: KindStop, Name: "stop", Sequence: 5, StreamSID: wireSID,
			Stop: Stop{AccountSID: "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", CallSID: "CAXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"}}},
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
	buf := make([]byte, 0, 1024)
	ev, err := (&Decoder{}).Decode(wireRead(t, "wire-in-media.json"), buf)
	if err != nil {
		t.Fatal(err)
	}
	if &ev.Media.Payload[0] != &buf[:1][0] {
		t.Error("the payload was not decoded into the caller's buffer")
	}
}

func TestDecodeTakesNumbersAsNumbersOrStrings(t *testing.T) {
	msg := `{"event":"media","sequenceNumber":7,"streamSid":"MZ1","media":{"track":"inbound","chunk":2,"timestamp":"40","payload":"/w=="}}`
	ev, err := (&Decoder{}).Decode([]byte(msg), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Kind: KindMedia, Name: "media", Sequence: 7, StreamSID: "MZ1",
		Media: Media{Track: "inbound", Chunk: 2, Timestamp: 40, Payload: []byte{0xFF}}}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func TestDecodeReadsAnEscapedPayload(t *testing.T) {
	// A JSON encoder may write base64's slash as \/.
	msg := `{"event":"media","streamSid":"MZ1","media":{"payload":"\/w=="}}`
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
	ev, err := (&Decoder{}).Decode([]byte(`{"event":"`+long+`","sequenceNumber":"9","streamSid":"MZ1"}`), nil)
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
		{name: "no event", msg: `{"streamSid":"MZ1"}`, want: ErrBadMessage, sid: "MZ1"},
		{name: "bad base64", msg: `{"event":"media","streamSid":"MZ1","media":{"payload":"!!!"}}`,
			want: ErrBadPayload, kind: KindMedia, sid: "MZ1", text: `media of stream "MZ1"`},
		{name: "payload not a string", msg: `{"event":"media","streamSid":"MZ1","media":{"payload":12}}`,
			want: ErrBadMessage, kind: KindMedia, sid: "MZ1"},
		{name: "media without payload", msg: `{"event":"media","streamSid":"MZ1","media":{"track":"inbound"}}`,
			want: ErrBadMessage, kind: KindMedia, sid: "MZ1"},
		{name: "payload over the limit", limits: Limits{MaxPayload: 100},
			msg:  `{"event":"media","streamSid":"MZ1","media":{"payload":"` + big + `"}}`,
			want: ErrTooLarge, kind: KindMedia, sid: "MZ1"},
		{name: "message over the limit", limits: Limits{MaxMessage: 10}, msg: `{"event":"connected"}`, want: ErrTooLarge},
		{name: "start without a stream", msg: `{"event":"start","start":{"callSid":"CA1"}}`, want: ErrBadMessage, kind: KindStart},
		{name: "too many parameters", limits: Limits{MaxParameters: 1},
			msg:  `{"event":"start","streamSid":"MZ1","start":{"streamSid":"MZ1","customParameters":{"a":"1","b":"2"}}}`,
			want: ErrTooLarge, kind: KindStart, sid: "MZ1"},
		{name: "dtmf without a digit", msg: `{"event":"dtmf","streamSid":"MZ1","dtmf":{"track":"inbound_track"}}`,
			want: ErrBadMessage, kind: KindDTMF, sid: "MZ1"},
		{name: "dtmf of two digits", msg: `{"event":"dtmf","streamSid":"MZ1","dtmf":{"digit":"12"}}`,
			want: ErrBadMessage, kind: KindDTMF, sid: "MZ1"},
		{name: "mark without a mark", msg: `{"event":"mark","streamSid":"MZ1"}`, want: ErrBadMessage, kind: KindMark, sid: "MZ1"},
		{name: "sequence not a number", msg: `{"event":"stop","sequenceNumber":"x"}`, want: ErrBadMessage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decoder{Limits: c.limits}
			ev, err := d.Decode([]byte(c.msg), nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("Decode error = %v, want %v", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "twilio: ") || !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q does not say twilio and %q", err, c.text)
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
			"event": "media", "streamSid": wireSID,
			"media": map[string]any{"payload": base64.StdEncoding.EncodeToString(wirePayload())}}},
		{"wire-out-mark.json", AppendMark(nil, wireSID, "answer-1/3"), map[string]any{
			"event": "mark", "streamSid": wireSID, "mark": map[string]any{"name": "answer-1/3"}}},
		{"wire-out-clear.json", AppendClear(nil, wireSID), map[string]any{
			"event": "clear", "streamSid": wireSID}},
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
		StreamSid string `json:"streamSid"`
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
	dst := make([]byte, 0, 1024)
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
	dst := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendMedia(dst[:0], wireSID, payload)
	}
}

// wireFastPathSeeds are media messages at the edges of the fast path:
// some it reads, some it leaves to encoding/json.
var wireFastPathSeeds = jsonwiretest.FastPathSeeds(jsonwiretest.Keys{
	Stream: "streamSid", Sequence: "sequenceNumber", Other: "start", Member: `"track" : "outbound"`})

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

func TestDecodeReusesTheStreamSID(t *testing.T) {
	var d Decoder
	msg := wireRead(t, "wire-in-media.json")
	a, _ := d.Decode(msg, nil)
	b, _ := d.Decode(msg, nil)
	if a.StreamSID != wireSID || unsafe.StringData(a.StreamSID) != unsafe.StringData(b.StreamSID) {
		t.Error("the stream SID of consecutive media messages is not the same string")
	}
}

func TestDecodeTakesBase64WithoutPadding(t *testing.T) {
	for _, b64 := range []string{"AP8=", "AP8"} {
		msg := `{"event":"media","streamSid":"S1","media":{"payload":"` + b64 + `"}}`
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

// A transport's read loop: one Decoder and two reused buffers per call.
func ExampleDecoder_Decode() {
	var (
		d       Decoder
		payload = make([]byte, 0, DefaultMaxPayload)
		pcm     = make([]int16, 0, DefaultMaxPayload)
	)
	msg := []byte(`{"event":"media","sequenceNumber":"3","streamSid":"MZ1",` +
		`"media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"/39/fw=="}}`)
	ev, err := d.Decode(msg, payload[:0])
	if err != nil {
		fmt.Println(err)
		return
	}
	pcm = dsp.AppendULawSamples(pcm[:0], ev.Media.Payload)
	fmt.Println(ev.Kind, ev.StreamSID, ev.Media.Timestamp, pcm)

	// The answer: one text message each, from one reused buffer.
	out := make([]byte, 0, 1024)
	out = AppendMedia(out[:0], ev.StreamSID, ev.Media.Payload)
	fmt.Println(string(out))
	out = AppendMark(out[:0], ev.StreamSID, "p160")
	fmt.Println(string(out))
	// Output:
	// media MZ1 5 [0 0 0 0]
	// {"event":"media","streamSid":"MZ1","media":{"payload":"/39/fw=="}}
	// {"event":"mark","streamSid":"MZ1","mark":{"name":"p160"}}
}
