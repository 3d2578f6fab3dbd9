//go:build opus

package codec

import (
	"fmt"

	pion "github.com/pion/webrtc/v4"
	"gopkg.in/hraban/opus.v2"
)

// opusSilence is the 3-byte Opus packet for 20 ms of silence (CELT, full
// band, mono), which every decoder accepts.
var opusSilence = []byte{0xF8, 0xFF, 0xFE}

func opusCodec() (Codec, bool) {
	return Codec{
		Params: pion.RTPCodecParameters{
			// Channels must be 2: browsers offer opus/48000/2 and pion
			// would not bind a track declared with 1.
			RTPCodecCapability: pion.RTPCodecCapability{
				MimeType: pion.MimeTypeOpus, ClockRate: 48000, Channels: 2,
				SDPFmtpLine: "minptime=10;useinbandfec=1",
			},
			PayloadType: 111,
		},
		SampleRate: 48000,
		Rates:      []int{48000, 24000, 16000, 12000, 8000},
		Silence:    opusSilence,
		MaxPayload: 1500,
		NewEncoder: newOpusEncoder,
		NewDecoder: newOpusDecoder,
	}, true
}

type opusEncoder struct{ enc *opus.Encoder }

func newOpusEncoder(rate int, opts EncoderOptions) (Encoder, error) {
	app := opus.AppVoIP
	if opts.Application == Playback {
		app = opus.AppAudio
	}
	enc, err := opus.NewEncoder(rate, 1, app)
	if err != nil {
		return nil, fmt.Errorf("codec: opus encoder at %d Hz: %w", rate, err)
	}
	if opts.Bitrate != 0 {
		if err := enc.SetBitrate(opts.Bitrate); err != nil {
			return nil, fmt.Errorf("codec: opus bitrate %d: %w", opts.Bitrate, err)
		}
	}
	return opusEncoder{enc}, nil
}

// SetComplexity implements [ComplexitySetter]: 0 (cheapest) to 10.
func (e opusEncoder) SetComplexity(c int) error {
	if err := e.enc.SetComplexity(c); err != nil {
		return fmt.Errorf("codec: opus complexity %d: %w", c, err)
	}
	return nil
}

func (e opusEncoder) Encode(pcm []int16, out []byte) (int, error) {
	n, err := e.enc.Encode(pcm, out)
	if err != nil {
		return 0, fmt.Errorf("codec: opus encode of %d samples: %w", len(pcm), err)
	}
	return n, nil
}

type opusDecoder struct{ dec *opus.Decoder }

// newOpusDecoder decodes to mono at rate: libopus downmixes stereo
// streams and converts the rate itself.
func newOpusDecoder(rate int) (Decoder, error) {
	dec, err := opus.NewDecoder(rate, 1)
	if err != nil {
		return nil, fmt.Errorf("codec: opus decoder at %d Hz: %w", rate, err)
	}
	return opusDecoder{dec}, nil
}

func (d opusDecoder) Decode(payload []byte, pcm []int16) (int, error) {
	n, err := d.dec.Decode(payload, pcm)
	if err != nil {
		return 0, fmt.Errorf("codec: opus decode of %d bytes: %w", len(payload), err)
	}
	return n, nil
}
