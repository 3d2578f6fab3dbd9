package vonage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func wireSeeds(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
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
}

// FuzzDecodeText holds DecodeText to its promises on any input: no panic;
// an error wraps one of the package's causes and comes with no content;
// what it accepts is within the limits.
func FuzzDecodeText(f *testing.F) {
	wireSeeds(f, "wire-*.json")
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"event":null}`,
		`{"event":"websocket:connected","content-type":"audio/l16;rate=x"}`,
		`{"event":"websocket:connected","content-type":"audio/l16;rate=-8000;rate=16000"}`,
		`{"event":"websocket:dtmf","digit":"1","duration":1e300}`,
		`{"event":"websocket:notify","payload":null}`,
		`{"event":"websocket:notify","payload":"x"}`,
	} {
		f.Add([]byte(s))
	}
	d := Decoder{Limits: Limits{MaxText: 2048, MaxHeaders: 8}}
	f.Fuzz(func(t *testing.T, msg []byte) {
		ev, err := d.DecodeText(msg)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error %v wraps none of the package's causes", err)
			}
			if ev.Connected.Headers != nil || ev.Notify.Payload != nil || ev.DTMF.Digit != "" {
				t.Fatalf("refused with %v but returned %+v", err, ev)
			}
			return
		}
		if len(ev.Connected.Headers) > 8 {
			t.Fatalf("%d headers passed a limit of 8", len(ev.Connected.Headers))
		}
		if ev.Connected.SampleRate < 0 || len(ev.Name) > 2048 {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

// FuzzDecodeAudio holds DecodeAudio to its promises on any binary
// message: no panic; whole samples within the limit, or an error.
func FuzzDecodeAudio(f *testing.F) {
	wireSeeds(f, "wire-*.bin")
	f.Add([]byte{})
	f.Add([]byte{1})
	d := Decoder{Limits: Limits{MaxAudio: 1024}}
	f.Fuzz(func(t *testing.T, frame []byte) {
		pcm, err := d.DecodeAudio(frame, nil)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrBadAudio) || pcm != nil {
				t.Fatalf("refused with %v, returned %d samples", err, len(pcm))
			}
			return
		}
		if len(pcm)*2 != len(frame) || len(frame) > 1024 {
			t.Fatalf("%d bytes gave %d samples", len(frame), len(pcm))
		}
	})
}
