package dsp

const (
	ulawBias = 0x84
	ulawClip = 32635
)

// LinearToULaw encodes one 16-bit sample as G.711 µ-law (ITU-T G.711),
// the byte of a PCMU payload and of 8 kHz telephony streams: a sign, a
// 3-bit segment and a 4-bit step within it, inverted, with the magnitude
// clipped at 32635.
func LinearToULaw(s int16) byte {
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

// ULawToLinear decodes one G.711 µ-law byte to a 16-bit sample.
func ULawToLinear(u byte) int16 { return ulawTable[u] }

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
