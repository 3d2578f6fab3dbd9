package codec

import (
	"bytes"
	"testing"

	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"
)

// binding is the peer connection side of a bound track: it records the
// packets written to it.
type binding struct {
	codec   pion.RTPCodecParameters
	packets []rtp.Packet
}

func (b *binding) CodecParameters() []pion.RTPCodecParameters {
	return []pion.RTPCodecParameters{b.codec}
}
func (b *binding) HeaderExtensions() []pion.RTPHeaderExtensionParameter {
	return nil
}
func (b *binding) SSRC() pion.SSRC                       { return 1234 }
func (b *binding) SSRCRetransmission() pion.SSRC         { return 0 }
func (b *binding) SSRCForwardErrorCorrection() pion.SSRC { return 0 }
func (b *binding) WriteStream() pion.TrackLocalWriter    { return b }
func (b *binding) ID() string                            { return "binding" }
func (b *binding) RTCPReader() interceptor.RTCPReader    { return nil }
func (b *binding) Write(p []byte) (int, error)           { return len(p), nil }

func (b *binding) WriteRTP(h *rtp.Header, payload []byte) (int, error) {
	b.packets = append(b.packets, rtp.Packet{Header: h.Clone(), Payload: bytes.Clone(payload)})
	return len(payload), nil
}

func boundTrack(t *testing.T, c Codec) (*Track, *binding) {
	t.Helper()
	tr, err := NewTrack(c.Capability(), "audio", "bot", FrameDuration)
	if err != nil {
		t.Fatal(err)
	}
	b := &binding{codec: c.Params}
	if _, err := tr.Bind(b); err != nil {
		t.Fatal(err)
	}
	return tr, b
}

func TestTrackSendsOneRTPPacketPerFrameOnTheMediaClock(t *testing.T) {
	c := PCMU()
	tr, b := boundTrack(t, c)
	for _, p := range []string{"a", "bb", "ccc"} {
		if err := tr.WriteFrame([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	tr.Skip(4)
	if err := tr.WriteFrame([]byte("d")); err != nil {
		t.Fatal(err)
	}
	if len(b.packets) != 4 {
		t.Fatalf("%d packets, want 4", len(b.packets))
	}
	first := b.packets[0].Header
	// 20 ms at PCMU's 8 kHz clock is 160 timestamp units.
	want := []struct {
		payload string
		seq     uint16
		ts      uint32
		marker  bool
	}{
		{"a", 0, 0, true},
		{"bb", 1, 160, false},
		{"ccc", 2, 320, false},
		{"d", 3, 320 + 5*160, true}, // four frames skipped: time jumps, sequence does not
	}
	for i, w := range want {
		p := b.packets[i]
		if string(p.Payload) != w.payload || p.SequenceNumber != first.SequenceNumber+w.seq ||
			p.Timestamp != first.Timestamp+w.ts || p.Marker != w.marker {
			t.Errorf("packet %d: payload %q seq +%d ts +%d marker %v; want %q +%d +%d %v", i, p.Payload,
				p.SequenceNumber-first.SequenceNumber, p.Timestamp-first.Timestamp, p.Marker, w.payload, w.seq, w.ts, w.marker)
		}
		if p.SSRC != 1234 || p.PayloadType != uint8(c.Params.PayloadType) || p.Version != 2 {
			t.Errorf("packet %d: SSRC %d, payload type %d, version %d; want the binding's", i, p.SSRC, p.PayloadType, p.Version)
		}
	}
}

func TestTrackStartsItsClocksAtRandom(t *testing.T) {
	a, _ := NewTrack(PCMU().Capability(), "audio", "bot", FrameDuration)
	b, _ := NewTrack(PCMU().Capability(), "audio", "bot", FrameDuration)
	if a.pkt.SequenceNumber == b.pkt.SequenceNumber && a.pkt.Timestamp == b.pkt.Timestamp {
		t.Errorf("two tracks start at sequence %d, timestamp %d: want random starts", a.pkt.SequenceNumber, a.pkt.Timestamp)
	}
}

func TestTrackWritesWithoutAllocating(t *testing.T) {
	tr, err := NewTrack(PCMU().Capability(), "audio", "bot", FrameDuration)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Bind(discard{&binding{codec: PCMU().Params}}); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 160)
	if n := testing.AllocsPerRun(100, func() { _ = tr.WriteFrame(payload) }); n != 0 {
		t.Errorf("WriteFrame allocates %.1f times per frame, want 0", n)
	}
}

// discard is a binding whose stream keeps nothing.
type discard struct{ *binding }

func (d discard) WriteStream() pion.TrackLocalWriter { return d }
func (discard) WriteRTP(_ *rtp.Header, payload []byte) (int, error) {
	return len(payload), nil
}
