package codec

import (
	"math/rand/v2"
	"time"

	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"
)

// Track is a local audio track that sends each encoded frame as one RTP
// packet. pion's TrackLocalStaticSample packetizes every sample into newly
// allocated packets; a Track reuses one packet, so sending a frame
// allocates nothing, and a 20 ms sender that never allocates is never made
// to help the garbage collector mid-frame.
//
// A Track has one writer: WriteFrame and Skip must not be called
// concurrently. It is bound to peer connections like any pion track.
type Track struct {
	*pion.TrackLocalStaticRTP
	step  uint32 // RTP timestamp units per frame
	pkt   rtp.Packet
	first bool
}

// NewTrack returns a track with the given capability, id and stream id
// whose frames each last frame (usually [FrameDuration]). Its sequence
// numbers and timestamps start at random values, as RFC 3550 asks.
func NewTrack(c pion.RTPCodecCapability, id, streamID string, frame time.Duration) (*Track, error) {
	rt, err := pion.NewTrackLocalStaticRTP(c, id, streamID)
	if err != nil {
		return nil, err
	}
	t := &Track{TrackLocalStaticRTP: rt, step: uint32(int64(c.ClockRate) * int64(frame) / int64(time.Second)), first: true}
	t.pkt.Version = 2
	t.pkt.SequenceNumber = uint16(rand.Uint32())
	t.pkt.Timestamp = rand.Uint32()
	return t, nil
}

// WriteFrame sends one encoded frame. The first packet carries the marker
// bit that starts a talkspurt. pion drops packets while the track is not
// bound to a connected peer; the sequence still advances, as time does.
func (t *Track) WriteFrame(payload []byte) error {
	t.pkt.Payload = payload
	t.pkt.Marker = t.first
	t.first = false
	err := t.WriteRTP(&t.pkt)
	t.pkt.Payload = nil
	t.pkt.SequenceNumber++
	t.pkt.Timestamp += t.step
	return err
}

// Skip advances the media clock by n frames that are not sent, after a
// stall the sender did not make up: the receiver sees the time pass (the
// timestamps jump) without a run of lost sequence numbers, and the next
// packet starts a talkspurt.
func (t *Track) Skip(n int) {
	if n <= 0 {
		return
	}
	t.pkt.Timestamp += uint32(n) * t.step
	t.first = true
}
