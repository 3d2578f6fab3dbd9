package telephony

import (
	"fmt"

	"github.com/framewire/framewire/dsp"
)

// Codec is the audio encoding of a call's media: what a provider's
// stream decodes the caller's payloads from and encodes the bot's into.
type Codec uint8

// The codecs the telephony streams carry.
const (
	// CodecULaw is G.711 μ-law (PCMU), a byte a sample.
	CodecULaw Codec = iota + 1
	// CodecALaw is G.711 A-law (PCMA), a byte a sample.
	CodecALaw
	// CodecL16BE is 16-bit linear PCM in network (big-endian) order, as
	// RTP's L16 is (RFC 3551).
	CodecL16BE
	// CodecL16LE is 16-bit linear PCM, little-endian.
	CodecL16LE
)

// String names the codec.
func (c Codec) String() string {
	switch c {
	case CodecULaw:
		return "PCMU"
	case CodecALaw:
		return "PCMA"
	case CodecL16BE:
		return "L16 (big-endian)"
	case CodecL16LE:
		return "L16 (little-endian)"
	}
	return fmt.Sprintf("Codec(%d)", uint8(c))
}

// AppendSamples decodes payload into linear samples appended to dst.
func (c Codec) AppendSamples(dst []int16, payload []byte) []int16 {
	switch c {
	case CodecULaw:
		return dsp.AppendULawSamples(dst, payload)
	case CodecALaw:
		return dsp.AppendALawSamples(dst, payload)
	case CodecL16BE:
		return dsp.AppendSamplesBE(dst, payload)
	case CodecL16LE:
		return dsp.AppendSamples(dst, payload)
	}
	return dst
}

// AppendPayload encodes samples appended to dst.
func (c Codec) AppendPayload(dst []byte, samples []int16) []byte {
	switch c {
	case CodecULaw:
		return dsp.AppendULaw(dst, samples)
	case CodecALaw:
		return dsp.AppendALaw(dst, samples)
	case CodecL16BE:
		return dsp.AppendPCMBE(dst, samples)
	case CodecL16LE:
		return dsp.AppendPCM(dst, samples)
	}
	return dst
}
