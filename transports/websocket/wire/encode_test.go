package wire

import (
	"bytes"
	"fmt"
	"testing"
)

// pcmSizes cross every length-prefix width the audio field can have: one,
// two and three bytes of varint, and the bound.
var pcmSizes = []int{0, 2, 126, 128, 640, 960, 16382, 16384, 65534, DefaultMaxAudioBytes, 200_000}

func TestAppendAudioWritesWhatProtobufWrites(t *testing.T) {
	for _, n := range pcmSizes {
		for _, format := range []struct{ rate, channels int }{{16000, 1}, {24000, 1}, {48000, 2}, {8000, 1}, {0, 0}, {1 << 20, 255}} {
			t.Run(fmt.Sprintf("%d bytes at %d Hz × %d", n, format.rate, format.channels), func(t *testing.T) {
				p := pcm(n)
				want := marshal(t, &Frame{Kind: KindAudio, Audio: p, SampleRate: format.rate, Channels: format.channels})
				got := AppendAudio(nil, p, format.rate, format.channels)
				if !bytes.Equal(got, want) {
					t.Fatalf("AppendAudio = %x\nproto.Marshal %x", head(got), head(want))
				}
				if size := AudioSize(n, format.rate, format.channels); size != len(want) {
					t.Errorf("AudioSize = %d, want %d", size, len(want))
				}
			})
		}
	}
}

func TestAppendMessageWritesWhatProtobufWrites(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 127, 128, 16381, 16384, 1 << 20} {
		data := bytes.Repeat([]byte{'x'}, n)
		want := marshal(t, &Frame{Kind: KindMessage, Data: data})
		got := AppendMessage(nil, data)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: AppendMessage = %x\nproto.Marshal  %x", n, head(got), head(want))
		}
		if size := MessageSize(n); size != len(want) {
			t.Errorf("%d bytes: MessageSize = %d, want %d", n, size, len(want))
		}
	}
}

func TestAppendFrameWritesWhatProtobufWrites(t *testing.T) {
	frames := append([]Frame{
		{}, // no payload: nothing at all
		{Kind: KindText},
		{Kind: KindAudio},
		{Kind: KindAudio, HasPTS: true}, // a set pts of 0 is still sent
		{Kind: KindTranscription, Text: []byte("only text")},
		{Kind: KindMessage},
		{Kind: KindInterruption},
		{Kind: KindInterruption, ID: 1<<64 - 1},
	}, everyKind...)
	for _, f := range frames {
		t.Run(fmt.Sprintf("%s %+v", f.Kind, f.ID), func(t *testing.T) {
			want := marshal(t, &f)
			got := AppendFrame(nil, &f)
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendFrame = %x\nproto.Marshal %x", head(got), head(want))
			}
		})
	}
}

func TestAppendFrameWritesOnlyItsKindsFields(t *testing.T) {
	// A message carries data only; other fields of the Frame are not its.
	f := Frame{Kind: KindMessage, Data: []byte("{}"), ID: 5, Name: []byte("x"), Audio: []byte{1, 2}}
	if got, want := AppendFrame(nil, &f), AppendMessage(nil, []byte("{}")); !bytes.Equal(got, want) {
		t.Errorf("AppendFrame = %x, want %x", got, want)
	}
	if got := AppendFrame([]byte("kept"), &Frame{Kind: 6, Data: []byte("{}")}); string(got) != "kept" {
		t.Errorf("an unknown kind appended %q", got[4:])
	}
}

func TestAppendersAppend(t *testing.T) {
	prefix := []byte("earlier frame")
	for name, appendTo := range map[string]func([]byte) []byte{
		"AppendAudio":   func(b []byte) []byte { return AppendAudio(b, pcm(640), 16000, 1) },
		"AppendMessage": func(b []byte) []byte { return AppendMessage(b, []byte(`{"a":1}`)) },
		"AppendFrame":   func(b []byte) []byte { return AppendFrame(b, &everyKind[0]) },
	} {
		alone := appendTo(nil)
		got := appendTo(bytes.Clone(prefix))
		if !bytes.Equal(got, append(bytes.Clone(prefix), alone...)) {
			t.Errorf("%s did not append to what dst held: %x", name, head(got))
		}
	}
}

func TestEveryFrameRoundTrips(t *testing.T) {
	for _, want := range everyKind {
		b := AppendFrame(nil, &want)
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: Decode(AppendFrame): %v", want.Kind, err)
		}
		if d := diffFrames(want, got); d != "" {
			t.Errorf("%s: Decode(AppendFrame) (-want +got):\n%s", want.Kind, d)
		}
	}
	for _, n := range pcmSizes {
		if n > DefaultMaxAudioBytes {
			continue
		}
		p := pcm(n)
		got, err := Decode(AppendAudio(nil, p, 24000, 1))
		if err != nil {
			t.Fatalf("%d bytes: Decode(AppendAudio): %v", n, err)
		}
		want := Frame{Kind: KindAudio, Audio: p, SampleRate: 24000, Channels: 1}
		if d := diffFrames(want, got); d != "" {
			t.Errorf("%d bytes: Decode(AppendAudio) (-want +got):\n%s", n, d)
		}
	}
}

// head is the start of b, enough to show where encodings differ.
func head(b []byte) []byte {
	if len(b) > 48 {
		return b[:48]
	}
	return b
}

func TestAppendAudioSamplesWritesWhatAppendAudioDoes(t *testing.T) {
	samples := []int16{0, 1, -1, 32767, -32768, 1234}
	pcm := make([]byte, 2*len(samples))
	for i, v := range samples {
		pcm[2*i], pcm[2*i+1] = byte(v), byte(uint16(v)>>8)
	}
	for _, rate := range []int{0, 16000, 24000} {
		want := AppendAudio([]byte{9}, pcm, rate, 1)
		if got := AppendAudioSamples([]byte{9}, samples, rate, 1); string(got) != string(want) {
			t.Errorf("at %d Hz: AppendAudioSamples = %x, want %x", rate, got, want)
		}
	}
	buf := make([]byte, 0, 2048)
	frame := make([]int16, 480)
	if n := testing.AllocsPerRun(100, func() { buf = AppendAudioSamples(buf[:0], frame, 24000, 1) }); n != 0 {
		t.Errorf("%v allocations into a roomy buffer, want 0", n)
	}
}
