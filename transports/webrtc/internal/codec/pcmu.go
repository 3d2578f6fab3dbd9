package codec

import (
	"fmt"

	pion "github.com/pion/webrtc/v4"

	"github.com/framewire/framewire/dsp"
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
		out[i] = dsp.LinearToULaw(s)
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
		pcm[i] = dsp.ULawToLinear(b)
	}
	return len(payload), nil
}
