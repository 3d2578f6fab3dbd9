package telephony

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEveryCodecRoundTripsSamplesItCanCarry(t *testing.T) {
	samples := []int16{0, 8, -8, 1016, -1016, 8031, -8031, 32124, -32124, 12345}
	for _, c := range []Codec{CodecL16BE, CodecL16LE} {
		got := c.AppendSamples(nil, c.AppendPayload(nil, samples))
		if diff := cmp.Diff(samples, got); diff != "" {
			t.Errorf("%v round trip (-want +got):\n%s", c, diff)
		}
	}
	// G.711 quantises: a decoded sample encodes to itself again.
	for _, c := range []Codec{CodecULaw, CodecALaw} {
		once := c.AppendSamples(nil, c.AppendPayload(nil, samples))
		twice := c.AppendSamples(nil, c.AppendPayload(nil, once))
		if diff := cmp.Diff(once, twice); diff != "" || len(once) != len(samples) {
			t.Errorf("%v re-encoding changed samples (-once +twice):\n%s", c, diff)
		}
	}
	if b := CodecL16BE.AppendPayload(nil, []int16{0x0102}); b[0] != 1 || b[1] != 2 {
		t.Errorf("L16BE wrote %x, want network order 0102", b)
	}
}
