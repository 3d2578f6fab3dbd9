package webrtctest

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/transports/webrtc/internal/codec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEncodeToneGivesOnePayloadPer20ms(t *testing.T) {
	p, err := EncodeTone(440, 8000, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 50 {
		t.Fatalf("%d payloads for 1 s, want 50", len(p))
	}
	dec, _ := codec.Default().NewDecoder(codec.Default().SampleRate)
	pcm := make([]int16, codec.MaxDecodedSamples(codec.Default().SampleRate))
	for i, b := range p {
		if n, err := dec.Decode(b, pcm); err != nil || n != codec.FrameSamples(codec.Default().SampleRate) {
			t.Fatalf("payload %d decodes to %d samples: %v", i, n, err)
		}
	}
}
