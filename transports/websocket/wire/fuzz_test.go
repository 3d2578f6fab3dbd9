package wire

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode holds Decode to its promises on any input: no panic; what it
// accepts, proto.Unmarshal reads the same; a decoded frame re-encodes to
// a message that decodes to the same frame; what it refuses, it refuses
// with an error and a zero Frame.
func FuzzDecode(f *testing.F) {
	for _, fr := range everyKind {
		f.Add(AppendFrame(nil, &fr))
	}
	f.Add(AppendAudio(nil, pcm(512), 16000, 1))
	f.Add(AppendMessage(nil, []byte(`{"label":"rtvi-ai","type":"client-ready","id":"1","data":{}}`)))
	f.Add([]byte{})
	f.Add([]byte{0x12, 0x00})             // audio with nothing in it
	f.Add([]byte{0x22, 0x00, 0x22, 0x00}) // two payloads
	f.Add([]byte{0x32, 0x02, 0x08, 0x01}) // a newer schema's payload
	f.Add([]byte{0x12, 0x03, 0x20, 0x80}) // a truncated rate
	files, err := filepath.Glob(filepath.Join("testdata", "*.bin"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b)
		if err != nil {
			if d := diffFrames(Frame{}, got); d != "" {
				t.Fatalf("Decode refused %x (%v) but returned a frame:\n%s", b, err, d)
			}
			return
		}
		checkAgreesWithProto(t, b, got)
		again, err := Decode(AppendFrame(nil, &got))
		if err != nil {
			t.Fatalf("the re-encoding of %+v does not decode: %v", got, err)
		}
		if d := diffFrames(got, again); d != "" {
			t.Fatalf("re-encoded and decoded again (-first +again):\n%s", d)
		}
	})
}
