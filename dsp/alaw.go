package dsp

// LinearToALaw encodes one 16-bit sample as G.711 A-law (ITU-T G.711),
// the byte of a PCMA payload and of the A-law telephony streams (Plivo,
// Exotel and Vonage offer it outside North America): the top 13 bits of
// the sample as a sign, a 3-bit segment and a 4-bit step, with the even
// bits inverted (XOR 0x55) as the standard transmits them.
func LinearToALaw(s int16) byte {
	v := int32(s) >> 3 // A-law carries 13 bits
	mask := byte(0xD5) // sign bit set for non-negative samples
	if v < 0 {
		mask = 0x55
		v = -v - 1
	}
	// The segment is the position of the magnitude's highest bit above
	// the first 5: segment k holds magnitudes below 32<<k.
	seg := byte(0)
	for seg < 8 && v >= int32(0x20)<<seg {
		seg++
	}
	if seg >= 8 {
		return 0x7F ^ mask // clipped
	}
	var step byte
	if seg < 2 {
		step = byte(v>>1) & 0x0F
	} else {
		step = byte(v>>seg) & 0x0F
	}
	return (seg<<4 | step) ^ mask
}

// ALawToLinear decodes one G.711 A-law byte to a 16-bit sample, the middle
// of the step it names.
func ALawToLinear(a byte) int16 { return alawTable[a] }

var alawTable = func() (t [256]int16) {
	for i := range t {
		a := byte(i) ^ 0x55
		seg := (a & 0x70) >> 4
		mag := int32(a&0x0F)<<4 + 8
		if seg > 0 {
			mag = (mag + 0x100) << (seg - 1)
		}
		if a&0x80 != 0 {
			t[i] = int16(mag)
		} else {
			t[i] = int16(-mag)
		}
	}
	return t
}()
