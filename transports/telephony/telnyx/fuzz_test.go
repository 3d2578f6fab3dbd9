package telnyx

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/framewire/framewire/transports/telephony/internal/jsonwire/jsonwiretest"
)

// FuzzDecode holds Decode to its promises on any input: no panic; an error
// wraps one of the package's causes and comes with no payload; a decoded
// media payload is within the limit and in the caller's buffer when it
// fits; a known kind is never reported as unknown with an error.
func FuzzDecode(f *testing.F) {
	for _, b := range jsonwiretest.Files(f, filepath.Join("testdata", "wire-*.json")) {
		f.Add(b)
	}
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"event":null}`, `{"event":"media"}`,
		`{"event":"media","media":{"payload":"\u0041AAA"}}`,
		`{"event":"media","media":{"payload":"AAA"}}`,
		`{"event":"start","stream_id":"S","start":{"custom_parameters":{"a":1}}}`,
		`{"event":"dtmf","dtmf":{"digit":"#"}}`,
		`{"event":"mark","mark":{"name":null}}`,
		`{"event":"error","payload":{"code":"x"}}`,
		`{"event":"stop","sequence_number":"99999999999999999999"}`,
	} {
		f.Add([]byte(s))
	}
	d := Decoder{Limits: Limits{MaxMessage: 4096, MaxPayload: 256, MaxParameters: 8}}
	f.Fuzz(func(t *testing.T, msg []byte) {
		buf := make([]byte, 0, 256)
		ev, err := d.Decode(msg, buf)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrBadMessage) && !errors.Is(err, ErrBadPayload) {
				t.Fatalf("error %v wraps none of the package's causes", err)
			}
			if ev.Media.Payload != nil || ev.Start.CustomParameters != nil {
				t.Fatalf("refused with %v but returned %+v", err, ev)
			}
			return
		}
		if len(ev.Media.Payload) > 256 {
			t.Fatalf("payload of %d bytes passed a limit of 256", len(ev.Media.Payload))
		}
		if ev.Kind == KindMedia && len(ev.Media.Payload) > 0 && &ev.Media.Payload[0] != &buf[:1][0] {
			t.Fatal("a payload that fits was not decoded into the caller's buffer")
		}
		if len(ev.Start.CustomParameters) > 8 {
			t.Fatalf("%d custom parameters passed a limit of 8", len(ev.Start.CustomParameters))
		}
	})
}

// FuzzDecodeFastPath holds the media fast path to encoding/json's: what
// the fast path reads, encoding/json reads to the same Event.
func FuzzDecodeFastPath(f *testing.F) {
	seeds := jsonwiretest.Files(f, filepath.Join("testdata", "wire-in-*.json"))
	for _, s := range wireFastPathSeeds {
		seeds = append(seeds, []byte(s))
	}
	wirePaths(Limits{MaxPayload: 256}.withDefaults(), 256).Fuzz(f, seeds...)
}
