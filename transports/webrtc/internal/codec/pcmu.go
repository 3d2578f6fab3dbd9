package codec

import (
	"fmt"

	pion "github.com/pion/webrtc/v4"
)

// PCMU returns G.711 µ-law at 8 kHz, payload type 0.
func PCMU() Codec {
	return Codec{
		Params: pion.RTPCodecParameters{
			RTPCodecCapability: pion.RTPCodecCapability{MimeType: pion.MimeTypePCMU, ClockRate: 8000, Channels: 1},
			PayloadType:        0,
		},
		SampleRate: 8000,
		Rates:      []int{8000},
		Silence:    pcmuSilence[:],
		MaxPayload: 8000 * 120 / 1000,
		NewEncoder: func(rate int, _ EncoderOptions) (Encoder, error) {
			if rate != 8000 {
				return nil, fmt.Errorf("codec: PCMU works at 8000 Hz, not %d", rate)
			}
			return PCMUEncoder{}, nil
		},
		NewDecoder: func(rate int) (Decoder, error) {
			if rate != 8000 {
				return nil, fmt.Errorf("codec: PCMU works at 8000 Hz, not %d", rate)
			}
			return PCMUDecoder{}, nil
		},
	}
}

var pcmuSilence = func() (b [160]byte) {
	for i := range b {
		b[i] = 0xFF // µ-law zero
	}
	return b
}()

// PCMUEncoder encodes G.711 µ-law. It is stateless.
type PCMUEncoder struct{}

// Encode implements [Encoder]: one byte per sample.
func (PCMUEncoder) Encode(pcm []int16, out []byte) (int, error) {
	if len(out) < len(pcm) {
		return 0, fmt.Errorf("codec: PCMU output buffer holds %d bytes, need %d", len(out), len(pcm))
	}
	for i, s := range pcm {
		out[i] = ULaw(s)
	}
	return len(pcm), nil
}

// PCMUDecoder decodes G.711 µ-law. It is stateless.
type PCMUDecoder struct{}

// Decode implements [Decoder]: one sample per byte.
func (PCMUDecoder) Decode(payload []byte, pcm []int16) (int, error) {
	if len(pcm) < len(payload) {
		return 0, fmt.Errorf("codec: PCMU payload of %d bytes does not fit %d samples", len(payload), len(pcm))
	}
	for i, b := range payload {
		pcm[i] = ulawTable[b]
	}
	return len(payload), nil
}

const (
	ulawBias = 0x84
	ulawClip = 32635
)

// ULaw encodes one linear sample as G.711 µ-law.
func ULaw(s int16) byte {
	v := int32(s)
	sign := byte(0)
	if v < 0 {
		v = -v
		sign = 0x80
	}
	if v > ulawClip {
		v = ulawClip
	}
	v += ulawBias
	exp := byte(7)
	for mask := int32(0x4000); v&mask == 0 && exp > 0; mask >>= 1 {
		exp--
	}
	mant := byte(v>>(exp+3)) & 0x0F
	return ^(sign | exp<<4 | mant)
}

// Linear decodes one G.711 µ-law byte.
func Linear(u byte) int16 { return ulawTable[u] }

var ulawTable = func() (t [256]int16) {
	for i := range t {
		u := ^byte(i)
		mag := (int32(u&0x0F)<<3 + ulawBias) << ((u & 0x70) >> 4)
		if u&0x80 != 0 {
			t[i] = int16(ulawBias - mag)
		} else {
			t[i] = int16(mag - ulawBias)
		}
	}
	return t
}()
