package codec

import (
	"fmt"
	"strings"

	pion "github.com/pion/webrtc/v4"

	"github.com/framewire/framewire/transports"
)

// FrameDuration is the packet duration the transport sends and expects:
// browsers default to 20 ms Opus frames (ptime 20), the base output's
// clock.
const FrameDuration = transports.FrameDuration

// Encoder turns one frame of mono PCM at its sample rate into an RTP payload.
// An Encoder is owned by one goroutine.
type Encoder interface {
	// Encode encodes pcm (exactly [Codec.FrameSamples] samples) into out and
	// returns the payload length.
	Encode(pcm []int16, out []byte) (int, error)
}

// Application is the kind of audio an encoder is tuned for.
type Application int

const (
	// Voice tunes the encoder for a microphone, as browsers do: Opus's
	// speech coder (SILK, or hybrid above 16 kHz), libopus's VoIP
	// application.
	Voice Application = iota
	// Playback tunes the encoder for audio made to be listened to, such as
	// a bot's synthesized speech: Opus's transform coder (CELT) from about
	// 24 kbps (below that libopus still picks the speech coder), libopus's
	// audio application. At complexity 10 libopus also classifies the
	// signal and may keep speech on the speech coder up to about 50 kbps.
	// Reference servers send bot audio this way (aiortc, which Pipecat's
	// SmallWebRTC transport uses, encodes with libopus's default audio
	// application). At the same complexity it costs less than half of the
	// speech coder's CPU (measured on a tone).
	Playback
)

// EncoderOptions choose how an encoder spends bits and CPU. The zero value
// encodes a microphone at the codec's default bitrate.
type EncoderOptions struct {
	Application Application
	// Bitrate is the target in bits per second; 0 leaves the codec's
	// default. Codecs with a fixed rate (PCMU) ignore it.
	Bitrate int
}

// ComplexitySetter is implemented by encoders whose CPU cost can be traded
// for quality (Opus: 0 to 10).
type ComplexitySetter interface {
	SetComplexity(c int) error
}

// Decoder turns an RTP payload into mono PCM at its codec's sample rate.
// A Decoder is owned by one goroutine.
type Decoder interface {
	// Decode decodes payload into pcm and returns the number of samples.
	Decode(payload []byte, pcm []int16) (int, error)
}

// Codec describes one negotiable audio codec and makes its coders.
type Codec struct {
	// Params is what the media engine registers and the answer offers.
	Params pion.RTPCodecParameters
	// SampleRate is the codec's own PCM rate (also the RTP clock).
	SampleRate int
	// Rates are the PCM rates the coders accept natively, SampleRate first:
	// libopus encodes from and decodes to 8, 12, 16, 24 or 48 kHz itself,
	// which is cheaper and cleaner than resampling around it.
	Rates []int
	// Silence is the payload of one frame of silence, sent while idle
	// without running the encoder.
	Silence []byte
	// MaxPayload bounds the size of one encoded frame.
	MaxPayload int
	// NewEncoder returns a fresh encoder for mono PCM at rate, one of Rates.
	NewEncoder func(rate int, opts EncoderOptions) (Encoder, error)
	// NewDecoder returns a fresh decoder to mono PCM at rate, one of Rates.
	NewDecoder func(rate int) (Decoder, error)
}

// NativeRate returns want if the coders accept it, else SampleRate: the
// rate to run them at so that as little resampling as possible is left.
func (c Codec) NativeRate(want int) int {
	for _, r := range c.Rates {
		if r == want {
			return want
		}
	}
	return c.SampleRate
}

// FrameSamples is the number of samples in one [FrameDuration] frame at rate.
func FrameSamples(rate int) int { return transports.FrameSamples(rate) }

// MaxDecodedSamples bounds what one payload decodes to at rate (120 ms,
// Opus's longest packet), for sizing decode buffers.
func MaxDecodedSamples(rate int) int { return rate * 120 / 1000 }

// Default returns the codec this build negotiates: Opus when built with the
// "opus" tag, PCMU otherwise.
func Default() Codec {
	if c, ok := opusCodec(); ok {
		return c
	}
	return PCMU()
}

// HasOpus reports whether this build includes the Opus codec.
func HasOpus() bool {
	_, ok := opusCodec()
	return ok
}

// ForMime returns the codec for a negotiated MIME type such as "audio/opus".
func ForMime(mime string) (Codec, error) {
	switch {
	case strings.EqualFold(mime, pion.MimeTypePCMU):
		return PCMU(), nil
	case strings.EqualFold(mime, pion.MimeTypeOpus):
		if c, ok := opusCodec(); ok {
			return c, nil
		}
		return Codec{}, fmt.Errorf("codec: %s needs a build with the opus tag", mime)
	}
	return Codec{}, fmt.Errorf("codec: unsupported audio codec %q", mime)
}

// Capability returns the track capability matching the codec.
func (c Codec) Capability() pion.RTPCodecCapability { return c.Params.RTPCodecCapability }
