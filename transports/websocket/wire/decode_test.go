package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/framewire/framewire/transports/websocket/wire/internal/framespb"
)

// everyKind is a frame of each payload with every field set.
var everyKind = []Frame{
	{Kind: KindText, ID: 7, Name: []byte("TextFrame#7"), Text: []byte("Hello, wörld")},
	{Kind: KindAudio, ID: 1 << 40, Name: []byte("audio"), Audio: pcm(640), SampleRate: 16000, Channels: 1, PTS: 123456789, HasPTS: true},
	{Kind: KindAudio, Audio: pcm(3840), SampleRate: 48000, Channels: 2},
	{Kind: KindTranscription, ID: 3, Name: []byte("TranscriptionFrame#3"), Text: []byte("what time is it"),
		UserID: []byte("user-1"), Timestamp: []byte("2026-12-02T13:00:00.000+00:00")},
	{Kind: KindMessage, Data: []byte(`{"label":"rtvi-ai","type":"client-ready","id":"1","data":{}}`)},
	{Kind: KindInterruption, ID: 9, Name: []byte("InterruptionFrame#9")},
}

func TestDecodeReadsWhatProtobufWrites(t *testing.T) {
	for _, want := range everyKind {
		t.Run(want.Kind.String(), func(t *testing.T) {
			got, err := Decode(marshal(t, &want))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if d := diffFrames(want, got); d != "" {
				t.Errorf("Decode (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodedBytesAreSubslicesOfTheMessage(t *testing.T) {
	want := Frame{Kind: KindTranscription, Name: []byte("n"), Text: []byte("t"), UserID: []byte("u"), Timestamp: []byte("ts")}
	for _, in := range []Frame{everyKind[1], everyKind[4], want} {
		b := marshal(t, &in)
		f, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range [][]byte{f.Name, f.Text, f.UserID, f.Timestamp, f.Audio, f.Data} {
			if len(field) == 0 {
				continue
			}
			if i := bytes.Index(b, field); i < 0 || &b[i] != &field[0] {
				t.Errorf("%s: field %q is a copy, not a subslice of the message", f.Kind, field)
			}
		}
	}
}

func TestDecodeSkipsUnknownFields(t *testing.T) {
	// A newer schema's fields, inside the payload and beside it, of every
	// wire type: skipped, as protobuf skips them.
	var payload []byte
	payload = protowire.AppendTag(payload, 3, protowire.BytesType)
	payload = protowire.AppendBytes(payload, []byte{1, 0, 2, 0})
	payload = protowire.AppendTag(payload, 4, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 16000)
	payload = protowire.AppendTag(payload, 5, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 1)
	payload = protowire.AppendTag(payload, 7, protowire.Fixed32Type)
	payload = protowire.AppendFixed32(payload, 1)
	payload = protowire.AppendTag(payload, 8, protowire.Fixed64Type)
	payload = protowire.AppendFixed64(payload, 1)
	payload = protowire.AppendTag(payload, 9, protowire.StartGroupType)
	payload = protowire.AppendTag(payload, 1, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 5)
	payload = protowire.AppendTag(payload, 9, protowire.EndGroupType)
	payload = protowire.AppendTag(payload, 10, protowire.BytesType)
	payload = protowire.AppendString(payload, "later")

	var b []byte
	b = protowire.AppendTag(b, 6, protowire.BytesType)
	b = protowire.AppendString(b, "a payload this schema does not have")
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, payload)
	b = protowire.AppendTag(b, 100, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)

	want := Frame{Kind: KindAudio, Audio: []byte{1, 0, 2, 0}, SampleRate: 16000, Channels: 1}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if d := diffFrames(want, got); d != "" {
		t.Errorf("Decode (-want +got):\n%s", d)
	}
	checkAgreesWithProto(t, b, got)
}

func TestDecodeKeepsTheLastOfARepeatedField(t *testing.T) {
	// Protobuf's rule for a scalar field sent twice: the last one counts.
	var payload []byte
	payload = protowire.AppendTag(payload, 4, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 8000)
	payload = protowire.AppendTag(payload, 3, protowire.BytesType)
	payload = protowire.AppendBytes(payload, []byte{9, 9})
	payload = protowire.AppendTag(payload, 5, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 1)
	payload = protowire.AppendTag(payload, 4, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 24000)
	payload = protowire.AppendTag(payload, 3, protowire.BytesType)
	payload = protowire.AppendBytes(payload, []byte{1, 2, 3, 4})
	b := protowire.AppendTag(nil, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, payload)

	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := Frame{Kind: KindAudio, Audio: []byte{1, 2, 3, 4}, SampleRate: 24000, Channels: 1}
	if d := diffFrames(want, got); d != "" {
		t.Errorf("Decode (-want +got):\n%s", d)
	}
	checkAgreesWithProto(t, b, got)
}

func TestDecodeKeepsTheLow32BitsOfAUint32(t *testing.T) {
	// sample_rate is a uint32: a larger varint is cut to 32 bits, as
	// protobuf cuts it, before the rate is checked.
	var payload []byte
	payload = protowire.AppendTag(payload, 4, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 1<<32|16000)
	payload = protowire.AppendTag(payload, 5, protowire.VarintType)
	payload = protowire.AppendVarint(payload, 1)
	b := protowire.AppendTag(nil, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, payload)

	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got.SampleRate != 16000 {
		t.Errorf("SampleRate = %d, want 16000", got.SampleRate)
	}
	checkAgreesWithProto(t, b, got)
}

// checkAgreesWithProto fails t unless proto.Unmarshal reads b as got.
func checkAgreesWithProto(t testing.TB, b []byte, got Frame) {
	t.Helper()
	var pb framespb.Frame
	if err := proto.Unmarshal(b, &pb); err != nil {
		t.Fatalf("Decode accepted what proto.Unmarshal refuses (%v): %x", err, b)
	}
	if d := diffFrames(fromProto(&pb), got); d != "" {
		t.Fatalf("Decode and proto.Unmarshal differ (-proto +Decode) on %x:\n%s", b, d)
	}
}

// frame is the Frame message with one field: num, as a bytes field
// holding payload.
func frame(num protowire.Number, payload []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, payload)
}

// audioPayload is an AudioRawFrame's fields: pcm, rate, channels.
func audioPayload(pcm []byte, rate, channels uint64) []byte {
	var p []byte
	p = protowire.AppendTag(p, 3, protowire.BytesType)
	p = protowire.AppendBytes(p, pcm)
	p = protowire.AppendTag(p, 4, protowire.VarintType)
	p = protowire.AppendVarint(p, rate)
	p = protowire.AppendTag(p, 5, protowire.VarintType)
	return protowire.AppendVarint(p, channels)
}

func TestDecodeRefuses(t *testing.T) {
	small := Decoder{MaxMessageBytes: 100, MaxAudioBytes: 8, MinSampleRate: 16000, MaxSampleRate: 24000}
	tests := []struct {
		name    string
		dec     Decoder
		in      []byte
		is      error
		message string
	}{
		{"an empty message", Decoder{}, nil, ErrNoPayload,
			"wire: frame has no known payload: empty frame"},
		{"a frame with only a newer schema's payload", Decoder{}, frame(6, []byte{8, 1}), ErrNoPayload,
			"wire: frame has no known payload: only unknown fields (first: 6)"},
		{"a message over the bound", small, frame(4, bytes.Repeat([]byte{'x'}, 100)), ErrTooLarge,
			"wire: frame too large: message of 102 bytes, over 100"},
		{"a message over the default bound", Decoder{}, make([]byte, DefaultMaxMessageBytes+1), ErrTooLarge,
			"wire: frame too large: message of 1048641 bytes, over 1048640"},
		{"audio over the bound", small, frame(2, audioPayload(make([]byte, 10), 16000, 1)), ErrTooLarge,
			"wire: frame too large: audio of 10 bytes, over 8"},
		{"audio over the default bound", Decoder{}, frame(2, audioPayload(make([]byte, DefaultMaxAudioBytes+2), 16000, 1)), ErrTooLarge,
			"wire: frame too large: audio of 65538 bytes, over 65536"},
		{"audio without a rate", Decoder{}, frame(2, audioPayload([]byte{0, 0}, 0, 1)), ErrAudioFormat,
			"wire: unsupported audio format: audio.sample_rate 0 Hz, want 8000 to 48000"},
		{"audio under the lowest rate", Decoder{}, frame(2, audioPayload([]byte{0, 0}, 7999, 1)), ErrAudioFormat,
			"wire: unsupported audio format: audio.sample_rate 7999 Hz, want 8000 to 48000"},
		{"audio over the highest rate", Decoder{}, frame(2, audioPayload([]byte{0, 0}, 48001, 1)), ErrAudioFormat,
			"wire: unsupported audio format: audio.sample_rate 48001 Hz, want 8000 to 48000"},
		{"audio outside a decoder's own rates", small, frame(2, audioPayload([]byte{0, 0}, 8000, 1)), ErrAudioFormat,
			"wire: unsupported audio format: audio.sample_rate 8000 Hz, want 16000 to 24000"},
		{"audio without channels", Decoder{}, frame(2, audioPayload([]byte{0, 0}, 16000, 0)), ErrAudioFormat,
			"wire: unsupported audio format: audio.num_channels 0, want 1 or 2"},
		{"audio of three channels", Decoder{}, frame(2, audioPayload(make([]byte, 6), 16000, 3)), ErrAudioFormat,
			"wire: unsupported audio format: audio.num_channels 3, want 1 or 2"},
		{"audio of half a sample", Decoder{}, frame(2, audioPayload([]byte{1, 2, 3}, 16000, 1)), ErrAudioFormat,
			"wire: unsupported audio format: audio of 3 bytes is not a whole number of 1-channel 16-bit frames"},
		{"stereo audio of one channel's sample", Decoder{}, frame(2, audioPayload([]byte{1, 2, 3, 4, 5, 6}, 16000, 2)), ErrAudioFormat,
			"wire: unsupported audio format: audio of 6 bytes is not a whole number of 2-channel 16-bit frames"},
		{"two payloads", Decoder{}, append(frame(4, nil), frame(2, audioPayload([]byte{0, 0}, 16000, 1))...), ErrMalformed,
			"wire: malformed frame: frame has a second payload (audio after message)"},
		{"the same payload twice", Decoder{}, append(frame(4, nil), frame(4, nil)...), ErrMalformed,
			"wire: malformed frame: frame has a second payload (message after message)"},
		{"a payload of a wire type no protobuf has", Decoder{}, []byte{0x16}, ErrMalformed,
			"wire: malformed frame: frame field 2 (audio) has wire type 6, want bytes"},
		{"a payload as a fixed32", Decoder{}, []byte{0x15, 0, 0, 0, 0}, ErrMalformed,
			"wire: malformed frame: frame field 2 (audio) has wire type fixed32, want bytes"},
		{"a pts as a fixed64", Decoder{}, frame(2, []byte{0x31, 0, 0, 0, 0, 0, 0, 0, 0}), ErrMalformed,
			"wire: malformed frame: audio.pts has wire type fixed64, want varint"},
		{"an id as a group", Decoder{}, frame(1, []byte{0x0b, 0x0c}), ErrMalformed,
			"wire: malformed frame: text.id has wire type group start, want varint"},
		{"a name as a group end", Decoder{}, frame(5, []byte{0x14}), ErrMalformed,
			"wire: malformed frame: interruption.name has wire type group end, want bytes"},
		{"a payload that is not a message", Decoder{}, []byte{0x10, 0x01}, ErrMalformed,
			"wire: malformed frame: frame field 2 (audio) has wire type varint, want bytes"},
		{"a truncated tag", Decoder{}, []byte{0x80}, ErrMalformed,
			"wire: malformed frame: frame: truncated"},
		{"field number zero", Decoder{}, []byte{0x02, 0x00}, ErrMalformed,
			"wire: malformed frame: frame: invalid field number"},
		{"a field number past protobuf's", Decoder{}, protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType), ErrMalformed,
			"wire: malformed frame: frame field number 536870912 over 536870911"},
		{"a payload longer than the message", Decoder{}, []byte{0x22, 0x05, 0x0a}, ErrMalformed,
			"wire: malformed frame: frame field 4 (message): truncated"},
		{"a truncated unknown field", Decoder{}, []byte{0x3a, 0x05, 0x0a}, ErrMalformed,
			"wire: malformed frame: frame field 7: truncated"},
		{"a stray end of group", Decoder{}, protowire.AppendTag(nil, 7, protowire.EndGroupType), ErrMalformed,
			"wire: malformed frame: frame field 7: mismatching end group marker"},
		{"a varint of eleven bytes", Decoder{}, frame(2, append([]byte{0x20}, bytes.Repeat([]byte{0xff}, 10)...)), ErrMalformed,
			"wire: malformed frame: audio.sample_rate: variable length integer overflow"},
		{"a string field as a varint", Decoder{}, frame(4, []byte{0x08, 0x01}), ErrMalformed,
			"wire: malformed frame: message.data has wire type varint, want bytes"},
		{"a varint field as bytes", Decoder{}, frame(2, []byte{0x22, 0x00}), ErrMalformed,
			"wire: malformed frame: audio.sample_rate has wire type bytes, want varint"},
		{"a truncated payload field", Decoder{}, frame(1, []byte{0x1a, 0x04, 'h'}), ErrMalformed,
			"wire: malformed frame: text.text: truncated"},
		{"a truncated payload tag", Decoder{}, frame(5, []byte{0x88}), ErrMalformed,
			"wire: malformed frame: interruption: truncated"},
		{"a truncated unknown payload field", Decoder{}, frame(3, []byte{0x32, 0x09}), ErrMalformed,
			"wire: malformed frame: transcription field 6: truncated"},
		{"a payload field number past protobuf's", Decoder{}, frame(3, protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType)), ErrMalformed,
			"wire: malformed frame: transcription field number 536870912 over 536870911"},
		{"message data that is not UTF-8", Decoder{}, frame(4, []byte{0x0a, 0x02, 0xc3, 0x28}), ErrMalformed,
			"wire: malformed frame: message.data is not UTF-8"},
		{"a name that is not UTF-8", Decoder{}, frame(2, []byte{0x12, 0x01, 0xff}), ErrMalformed,
			"wire: malformed frame: audio.name is not UTF-8"},
		{"a user id that is not UTF-8", Decoder{}, frame(3, []byte{0x22, 0x01, 0x80}), ErrMalformed,
			"wire: malformed frame: transcription.user_id is not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.dec.Decode(tt.in)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Decode(%x) = %+v, %v; want an error wrapping %v", tt.in, got, err, tt.is)
			}
			if err.Error() != tt.message {
				t.Errorf("error = %q\nwant    %q", err, tt.message)
			}
			if !strings.HasPrefix(err.Error(), "wire: ") {
				t.Errorf("error %q does not start with the package name", err)
			}
			if d := diffFrames(Frame{}, got); d != "" {
				t.Errorf("a refused message returned a frame:\n%s", d)
			}
		})
	}
}

func TestDecodeAcceptsTheBounds(t *testing.T) {
	// Each bound is inclusive.
	tests := []struct {
		name string
		dec  Decoder
		in   []byte
	}{
		{"the lowest rate", Decoder{}, frame(2, audioPayload([]byte{0, 0}, DefaultMinSampleRate, 1))},
		{"the highest rate", Decoder{}, frame(2, audioPayload([]byte{0, 0}, DefaultMaxSampleRate, 1))},
		{"stereo", Decoder{}, frame(2, audioPayload([]byte{0, 0, 0, 0}, 16000, 2))},
		{"no PCM at all", Decoder{}, frame(2, audioPayload(nil, 16000, 1))},
		{"the largest audio", Decoder{}, frame(2, audioPayload(make([]byte, DefaultMaxAudioBytes), 48000, 2))},
		{"the largest message", Decoder{MaxMessageBytes: 100}, frame(4, bytes.Repeat([]byte{'x'}, 98))},
		{"the largest message by default", Decoder{}, AppendMessage(nil, bytes.Repeat([]byte{'x'}, 1<<20))},
		{"a negative bound, which means the default", Decoder{MaxAudioBytes: -1}, frame(2, audioPayload(make([]byte, 1000), 16000, 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.dec.Decode(tt.in); err != nil {
				t.Errorf("Decode: %v", err)
			}
		})
	}
}

func TestKindNamesItsField(t *testing.T) {
	for k, want := range map[Kind]string{
		0: "kind(0)", KindText: "text", KindAudio: "audio", KindTranscription: "transcription",
		KindMessage: "message", KindInterruption: "interruption", 6: "kind(6)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
