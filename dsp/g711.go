package dsp

import "encoding/binary"

// AppendULaw encodes samples as G.711 µ-law bytes appended to dst and returns
// the extended slice: the payload of an 8 kHz PCMU telephony stream (Twilio,
// Telnyx, Plivo and Exotel media messages). Pass dst[:0] of a reused slice to
// encode without allocating.
func AppendULaw(dst []byte, samples []int16) []byte {
	dst = growBytes(dst, len(samples))
	out := dst[len(dst)-len(samples):]
	for i, s := range samples {
		out[i] = LinearToULaw(s)
	}
	return dst
}

// AppendULawSamples decodes G.711 µ-law bytes into samples appended to dst
// and returns the extended slice, one sample per byte. Pass dst[:0] of a
// reused slice to decode without allocating.
func AppendULawSamples(dst []int16, ulaw []byte) []int16 {
	dst = grow16(dst, len(ulaw))
	out := dst[len(dst)-len(ulaw):]
	for i, u := range ulaw {
		out[i] = ulawTable[u]
	}
	return dst
}

// AppendALaw encodes samples as G.711 A-law bytes appended to dst and returns
// the extended slice (PCMA, offered by Telnyx and outside North America).
// Pass dst[:0] of a reused slice to encode without allocating.
func AppendALaw(dst []byte, samples []int16) []byte {
	dst = growBytes(dst, len(samples))
	out := dst[len(dst)-len(samples):]
	for i, s := range samples {
		out[i] = LinearToALaw(s)
	}
	return dst
}

// AppendALawSamples decodes G.711 A-law bytes into samples appended to dst
// and returns the extended slice, one sample per byte. Pass dst[:0] of a
// reused slice to decode without allocating.
func AppendALawSamples(dst []int16, alaw []byte) []int16 {
	dst = grow16(dst, len(alaw))
	out := dst[len(dst)-len(alaw):]
	for i, a := range alaw {
		out[i] = alawTable[a]
	}
	return dst
}

// AppendSamplesBE decodes big-endian (network order) 16-bit PCM into samples
// appended to dst and returns the extended slice: L16 as RFC 3551 defines it
// for RTP. A trailing odd byte is ignored. Little-endian PCM, the project's
// own, is [AppendSamples].
func AppendSamplesBE(dst []int16, pcm []byte) []int16 {
	n := len(pcm) / 2
	dst = grow16(dst, n)
	out := dst[len(dst)-n:]
	for i := range out {
		out[i] = int16(binary.BigEndian.Uint16(pcm[2*i:]))
	}
	return dst
}

// AppendPCMBE encodes samples as big-endian (network order) 16-bit PCM
// appended to dst and returns the extended slice. Little-endian PCM is
// [AppendPCM].
func AppendPCMBE(dst []byte, samples []int16) []byte {
	dst = growBytes(dst, 2*len(samples))
	out := dst[len(dst)-2*len(samples):]
	for i, s := range samples {
		binary.BigEndian.PutUint16(out[2*i:], uint16(s))
	}
	return dst
}

// SwapPCMEndian reverses the byte order of each 16-bit sample of pcm in
// place, turning little-endian PCM into big-endian and back. A trailing odd
// byte is left as it is.
func SwapPCMEndian(pcm []byte) {
	for i := 0; i+1 < len(pcm); i += 2 {
		pcm[i], pcm[i+1] = pcm[i+1], pcm[i]
	}
}
