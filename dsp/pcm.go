package dsp

import (
	"encoding/binary"
	"math"
	"time"
)

// AppendSamples decodes little-endian 16-bit PCM into samples appended to
// dst and returns the extended slice. A trailing odd byte is ignored. Pass
// dst[:0] of a reused slice to decode without allocating.
func AppendSamples(dst []int16, pcm []byte) []int16 {
	n := len(pcm) / 2
	dst = grow16(dst, n)
	out := dst[len(dst)-n:]
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(pcm[2*i:]))
	}
	return dst
}

// AppendPCM encodes samples as little-endian 16-bit PCM appended to dst and
// returns the extended slice. Pass dst[:0] of a reused slice to encode
// without allocating.
func AppendPCM(dst []byte, samples []int16) []byte {
	dst = growBytes(dst, 2*len(samples))
	out := dst[len(dst)-2*len(samples):]
	for i, s := range samples {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(s))
	}
	return dst
}

// SampleAt returns the i-th 16-bit sample of pcm (interleaved samples count
// one by one, whatever the number of channels).
func SampleAt(pcm []byte, i int) int16 {
	return int16(binary.LittleEndian.Uint16(pcm[2*i:]))
}

// FrameBytes returns the size in bytes of d of audio at sampleRate with
// channels channels, rounded down to whole sample frames. Transports use it
// to size their 10 or 20 ms chunks.
func FrameBytes(sampleRate, channels int, d time.Duration) int {
	frames := int(int64(sampleRate) * int64(d) / int64(time.Second))
	return frames * 2 * channels
}

// Duration returns how long len(pcm) bytes last at sampleRate with channels
// channels. It returns 0 for a non-positive rate or channel count.
func Duration(pcm []byte, sampleRate, channels int) time.Duration {
	if sampleRate <= 0 || channels <= 0 {
		return 0
	}
	frames := len(pcm) / (2 * channels)
	return time.Duration(int64(frames) * int64(time.Second) / int64(sampleRate))
}

// AppendSilence appends d of digital silence (zero samples) at sampleRate
// with channels channels to dst. Output transports use it to keep a track
// alive when there is nothing to play.
func AppendSilence(dst []byte, sampleRate, channels int, d time.Duration) []byte {
	n := FrameBytes(sampleRate, channels, d)
	dst = growBytes(dst, n)
	clear(dst[len(dst)-n:])
	return dst
}

// SilenceThreshold is the largest absolute sample value [IsSilence] treats
// as silence by default. Speech usually peaks between ±500 and ±5000, so 20
// (Pipecat's value) sits well below it while ignoring dither.
const SilenceThreshold = 20

// IsSilence reports whether no sample of pcm exceeds threshold in absolute
// value. Empty audio is silence. Use [SilenceThreshold] unless the source
// has a known noise floor.
func IsSilence(pcm []byte, threshold int) bool {
	for i := 0; i+1 < len(pcm); i += 2 {
		s := int(int16(binary.LittleEndian.Uint16(pcm[i:])))
		if s > threshold || s < -threshold {
			return false
		}
	}
	return true
}

// Peak returns the largest absolute sample value of pcm (0 to 32768).
func Peak(pcm []byte) int {
	peak := 0
	for i := 0; i+1 < len(pcm); i += 2 {
		s := int(int16(binary.LittleEndian.Uint16(pcm[i:])))
		if s < 0 {
			s = -s
		}
		if s > peak {
			peak = s
		}
	}
	return peak
}

// RMS returns the root mean square of pcm relative to full scale, from 0
// (silence) to 1 (a full-scale square wave). A full-scale sine is about
// 0.707. Empty audio has an RMS of 0.
func RMS(pcm []byte) float64 {
	n := len(pcm) / 2
	if n == 0 {
		return 0
	}
	var sum float64
	for i := 0; i < n; i++ {
		s := float64(int16(binary.LittleEndian.Uint16(pcm[2*i:])))
		sum += s * s
	}
	return math.Sqrt(sum/float64(n)) / 32768
}

// MinDBFS is the level reported for digital silence, instead of minus
// infinity, so that levels can be compared and printed.
const MinDBFS = -120.0

// DBFS returns the RMS level of pcm in decibels relative to full scale: 0
// for a full-scale square wave, about -3 for a full-scale sine, and
// [MinDBFS] at most for silence.
func DBFS(pcm []byte) float64 {
	return ToDBFS(RMS(pcm))
}

// ToDBFS converts a linear level relative to full scale into decibels,
// clamped below at [MinDBFS].
func ToDBFS(level float64) float64 {
	if level <= 0 {
		return MinDBFS
	}
	return max(MinDBFS, 20*math.Log10(level))
}

// FromDBFS converts decibels relative to full scale into a linear level:
// FromDBFS(-6) is about 0.5.
func FromDBFS(db float64) float64 { return math.Pow(10, db/20) }

// Mix appends to dst the sum of a and b, sample by sample, saturating at the
// 16-bit limits instead of wrapping. The shorter input is treated as padded
// with silence, so the result is as long as the longer one. Both inputs must
// have the same format (rate and channels).
func Mix(dst, a, b []byte) []byte {
	if len(b) > len(a) {
		a, b = b, a
	}
	n := len(a) &^ 1
	m := len(b) &^ 1
	dst = growBytes(dst, n)
	out := dst[len(dst)-n:]
	for i := 0; i < m; i += 2 {
		s := int32(int16(binary.LittleEndian.Uint16(a[i:]))) + int32(int16(binary.LittleEndian.Uint16(b[i:])))
		binary.LittleEndian.PutUint16(out[i:], uint16(saturate(s)))
	}
	copy(out[m:], a[m:n])
	return dst
}

// MixInto adds src into dst in place, saturating, over the length of the
// shorter of the two. Output transports use it to lay a sound over the
// audio being played without a second buffer.
func MixInto(dst, src []byte) {
	n := min(len(dst), len(src)) &^ 1
	for i := 0; i < n; i += 2 {
		s := int32(int16(binary.LittleEndian.Uint16(dst[i:]))) + int32(int16(binary.LittleEndian.Uint16(src[i:])))
		binary.LittleEndian.PutUint16(dst[i:], uint16(saturate(s)))
	}
}

// ApplyGain multiplies every sample of pcm by gain in place, saturating.
// A gain of 0.5 lowers the level by about 6 dB.
func ApplyGain(pcm []byte, gain float64) {
	for i := 0; i+1 < len(pcm); i += 2 {
		s := float64(int16(binary.LittleEndian.Uint16(pcm[i:]))) * gain
		binary.LittleEndian.PutUint16(pcm[i:], uint16(saturateFloat(s)))
	}
}

// AppendMono appends to dst the average of the channels of interleaved pcm,
// one sample per frame. With one channel it copies. Input transports use it
// to turn a stereo decoder's output into the mono audio a pipeline expects.
func AppendMono(dst, pcm []byte, channels int) []byte {
	if channels <= 1 {
		return append(dst, pcm[:len(pcm)&^1]...)
	}
	frames := len(pcm) / (2 * channels)
	dst = growBytes(dst, 2*frames)
	out := dst[len(dst)-2*frames:]
	for f := 0; f < frames; f++ {
		var sum int32
		base := 2 * channels * f
		for c := 0; c < channels; c++ {
			sum += int32(int16(binary.LittleEndian.Uint16(pcm[base+2*c:])))
		}
		binary.LittleEndian.PutUint16(out[2*f:], uint16(int16(sum/int32(channels))))
	}
	return dst
}

// AppendInterleaved appends to dst mono pcm copied onto every one of
// channels channels: the inverse of [AppendMono] for a mono source.
func AppendInterleaved(dst, mono []byte, channels int) []byte {
	if channels <= 1 {
		return append(dst, mono[:len(mono)&^1]...)
	}
	n := len(mono) / 2
	dst = growBytes(dst, 2*n*channels)
	out := dst[len(dst)-2*n*channels:]
	for i := 0; i < n; i++ {
		lo, hi := mono[2*i], mono[2*i+1]
		for c := 0; c < channels; c++ {
			out[2*(i*channels+c)] = lo
			out[2*(i*channels+c)+1] = hi
		}
	}
	return dst
}

func saturate(s int32) int16 {
	if s > math.MaxInt16 {
		return math.MaxInt16
	}
	if s < math.MinInt16 {
		return math.MinInt16
	}
	return int16(s)
}

func saturateFloat(s float64) int16 {
	if s >= math.MaxInt16 {
		return math.MaxInt16
	}
	if s <= math.MinInt16 {
		return math.MinInt16
	}
	return int16(math.RoundToEven(s))
}

// growBytes extends b by n bytes, reallocating only when its capacity is
// too small; the new bytes are not cleared.
func growBytes(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func grow16(b []int16, n int) []int16 {
	if cap(b)-len(b) < n {
		nb := make([]int16, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}
