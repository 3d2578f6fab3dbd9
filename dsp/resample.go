package dsp

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"
)

// ResamplerOptions tune the filter of a [Resampler]. The zero value gives the
// defaults, which keep 60 dB of signal-to-noise in the passband and reject
// everything above the lower Nyquist frequency by at least 60 dB.
type ResamplerOptions struct {
	// Attenuation is the stopband attenuation of the anti-aliasing filter,
	// in dB. Higher is cleaner and costs more taps. Default: 80.
	Attenuation float64
	// Passband is the part of the lower of the two Nyquist frequencies that
	// is kept flat, from 0.5 to 0.99; the transition band above it ends at
	// that Nyquist frequency. Higher keeps more treble and costs more taps.
	// Default: 0.9 (7.2 kHz of a 16 kHz stream).
	Passband float64
}

const (
	// maxExactPhases is the largest number of filter phases stored exactly;
	// ratios that need more (44.1 kHz to 11.025 kHz is fine, 48000 to 44101
	// is not) interpolate between interpPhases stored phases.
	maxExactPhases = 1024
	interpPhases   = 512
	maxRate        = 1_000_000
	maxChannels    = 64
	// MaxResampleRatio bounds how far apart the two rates of a [Resampler]
	// may be, either way: the filter's length grows with the ratio when
	// down-sampling, and the output's with it when up-sampling, so a rate
	// of 1 Hz (a client's claim) must not reach either. 8 kHz to 48 kHz
	// is 6.
	MaxResampleRatio = 16
)

// Resampler converts 16-bit PCM from one sample rate to another, chunk by
// chunk. It is a polyphase windowed-sinc filter (Kaiser window) for the
// exact rational ratio of the two rates, so 48 kHz to 16 kHz, 24 kHz to 48
// kHz, 8 kHz to 48 kHz, 16 kHz to 24 kHz and 44.1 kHz to 48 kHz are all
// exact, and any other pair of rates works too.
//
// It keeps its state between calls: cutting the input into chunks of any
// size, even inside a sample, gives the same output bytes as resampling it
// in one piece. After n input frames in total, exactly ceil(n*out/in) output
// frames have been produced, so 20 ms in gives 20 ms out whenever 20 ms is
// a whole number of frames at both rates.
//
// The price is a fixed delay of [Resampler.Latency] (about 3 ms for 48 kHz
// to 16 kHz, 2 ms for 24 kHz to 48 kHz): the output is the input delayed by
// that much, and the last Latency of input comes out only with
// [Resampler.Flush].
//
// A Resampler is not safe for concurrent use; give each stream its own. It
// does not allocate once its buffers have grown to the largest chunk.
type Resampler struct {
	inRate, outRate, channels int
	l, m                      int // out/in = l/m, reduced
	half                      int // taps on each side of the centre
	taps                      int // 2*half
	interp                    bool
	coeffs                    []float32 // rows of taps: l rows, or interpPhases+1 rows; shared, read only

	hist    [][]float32 // per channel: past input, from the first tap of the next output
	pos     int         // index in hist of the next output's first tap
	phase   int         // numerator of the next output's fractional position, over l
	acc     int64       // (input frames so far * l) mod m, for OutputFrames
	pending []byte      // bytes of an incomplete input frame
	out     []int16     // scratch for interleaved output
	in      []int16     // scratch: the silence Flush feeds in
}

// NewResampler returns a resampler from inRate to outRate (in Hz) for
// interleaved audio with channels channels. Equal rates give a resampler
// that only copies. The rates must be at most [MaxResampleRatio] apart.
//
// Resamplers of the same ratio and options share one filter design, kept
// in a bounded process-wide cache, so a stream that switches between a few
// rates, or many streams at the same rates, design each filter once (a
// design takes up to several milliseconds).
func NewResampler(inRate, outRate, channels int, opts ResamplerOptions) (*Resampler, error) {
	if inRate <= 0 || inRate > maxRate || outRate <= 0 || outRate > maxRate {
		return nil, fmt.Errorf("dsp: resampler rates must be between 1 and %d Hz, got %d to %d", maxRate, inRate, outRate)
	}
	if hi, lo := max(inRate, outRate), min(inRate, outRate); hi > MaxResampleRatio*lo {
		return nil, fmt.Errorf("dsp: resampler rates %d Hz and %d Hz are more than %d times apart", inRate, outRate, MaxResampleRatio)
	}
	if channels <= 0 || channels > maxChannels {
		return nil, fmt.Errorf("dsp: resampler channel count must be between 1 and %d, got %d", maxChannels, channels)
	}
	if opts.Attenuation == 0 {
		opts.Attenuation = 80
	}
	if opts.Passband == 0 {
		opts.Passband = 0.9
	}
	if opts.Attenuation < 20 || opts.Attenuation > 200 {
		return nil, fmt.Errorf("dsp: resampler attenuation must be between 20 and 200 dB, got %g", opts.Attenuation)
	}
	if opts.Passband < 0.5 || opts.Passband > 0.99 {
		return nil, fmt.Errorf("dsp: resampler passband must be between 0.5 and 0.99, got %g", opts.Passband)
	}
	g := gcd(inRate, outRate)
	r := &Resampler{
		inRate: inRate, outRate: outRate, channels: channels,
		l: outRate / g, m: inRate / g,
		hist: make([][]float32, channels),
	}
	if r.l != 1 || r.m != 1 {
		f := filters.get(filterKey{l: r.l, m: r.m, attenuation: opts.Attenuation, passband: opts.Passband})
		r.half, r.taps, r.interp, r.coeffs = f.half, f.taps, f.interp, f.coeffs
	}
	r.Reset()
	return r, nil
}

// filter is one polyphase filter bank, shared by every resampler of its
// key; nothing writes to it once designed.
type filter struct {
	half, taps int
	interp     bool
	coeffs     []float32
}

// filterKey is what a design depends on: the reduced ratio (the design is
// the same for 48 kHz to 16 kHz and 24 kHz to 8 kHz) and the options.
type filterKey struct {
	l, m                  int
	attenuation, passband float64
}

// Bounds of the filter cache. The largest design the ratio bound allows
// (16:1 down with interpolated phases) holds about 0.8 M coefficients.
const (
	maxCachedFilters = 64
	maxCachedCoeffs  = 4 << 20 // 16 MiB of float32
)

// filterCache keeps the most recently used designs, within
// maxCachedFilters and maxCachedCoeffs.
type filterCache struct {
	mu      sync.Mutex
	entries map[filterKey]*cachedFilter
	coeffs  int    // total held
	clock   uint64 // of the last use
}

type cachedFilter struct {
	f       *filter
	lastUse uint64
}

var filters filterCache

// get returns the design for k, designing it (outside the lock) when the
// cache does not hold it. Two streams that miss at once both design it;
// the cache keeps one.
func (c *filterCache) get(k filterKey) *filter {
	c.mu.Lock()
	c.clock++
	if e, ok := c.entries[k]; ok {
		e.lastUse = c.clock
		c.mu.Unlock()
		return e.f
	}
	c.mu.Unlock()
	f := design(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		return e.f
	}
	if len(f.coeffs) > maxCachedCoeffs {
		return f
	}
	for len(c.entries) >= maxCachedFilters || c.coeffs+len(f.coeffs) > maxCachedCoeffs {
		c.evictOldestLocked()
	}
	if c.entries == nil {
		c.entries = make(map[filterKey]*cachedFilter)
	}
	c.entries[k] = &cachedFilter{f: f, lastUse: c.clock}
	c.coeffs += len(f.coeffs)
	return f
}

func (c *filterCache) evictOldestLocked() {
	var (
		oldest filterKey
		e      *cachedFilter
	)
	for k, v := range c.entries {
		if e == nil || v.lastUse < e.lastUse {
			oldest, e = k, v
		}
	}
	c.coeffs -= len(e.f.coeffs)
	delete(c.entries, oldest)
}

// size returns the number of designs held (for tests).
func (c *filterCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// design computes the polyphase filter bank for k. Rates enter only as
// their ratio: frequencies are relative to the input rate, which is m
// units when the output rate is l.
func design(key filterKey) *filter {
	in := float64(key.m)
	low := float64(min(key.l, key.m))
	opts := ResamplerOptions{Attenuation: key.attenuation, Passband: key.passband}
	r := &filter{}
	stop := low / 2
	pass := opts.Passband * stop
	cutoff := (pass + stop) / 2 / in * 2 // relative to the input Nyquist frequency
	width := 2 * math.Pi * (stop - pass) / in
	a := opts.Attenuation
	var beta float64
	switch {
	case a > 50:
		beta = 0.1102 * (a - 8.7)
	case a >= 21:
		beta = 0.5842*math.Pow(a-21, 0.4) + 0.07886*(a-21)
	}
	n := int(math.Ceil((a-7.95)/(2.285*width))) + 1
	half := (n + 1) / 2
	half += half & 1 // an even half makes the tap count a multiple of 4
	r.half, r.taps = half, 2*half

	rows := key.l
	if rows > maxExactPhases {
		r.interp = true
		rows = interpPhases + 1
	}
	r.coeffs = make([]float32, rows*r.taps)
	i0b := besselI0(beta)
	vals := make([]float64, r.taps)
	for p := 0; p < rows; p++ {
		var frac float64
		if r.interp {
			frac = float64(p) / interpPhases
		} else {
			frac = float64(p) / float64(key.l)
		}
		row := r.coeffs[p*r.taps : (p+1)*r.taps]
		var sum float64
		clear(vals)
		for k := range vals {
			t := float64(half-1) + frac - float64(k) // distance from the output instant, in input samples
			x := t / float64(half)
			if x <= -1 || x >= 1 {
				continue
			}
			v := cutoff * sinc(cutoff*t) * besselI0(beta*math.Sqrt(1-x*x)) / i0b
			vals[k] = v
			sum += v
		}
		for k, v := range vals {
			row[k] = float32(v / sum) // unity gain at DC for every phase
		}
	}
	return r
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the modified Bessel function of the first kind, order 0.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 500; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// InRate returns the input sample rate in Hz.
func (r *Resampler) InRate() int { return r.inRate }

// OutRate returns the output sample rate in Hz.
func (r *Resampler) OutRate() int { return r.outRate }

// Channels returns the number of interleaved channels.
func (r *Resampler) Channels() int { return r.channels }

// Latency returns the delay the filter adds: output at time t is the input
// at t - Latency. It is zero when the rates are equal.
func (r *Resampler) Latency() time.Duration {
	return time.Duration(int64(r.half) * int64(time.Second) / int64(r.inRate))
}

// Taps returns the number of input samples per channel that each output
// sample is computed from (0 when the rates are equal); cost grows with it.
func (r *Resampler) Taps() int { return r.taps }

// OutputFrames returns exactly how many output frames the next call will
// produce for inFrames more whole input frames, so a caller can size dst.
func (r *Resampler) OutputFrames(inFrames int) int {
	if inFrames <= 0 {
		return 0
	}
	l, m := int64(r.l), int64(r.m)
	next := r.acc + int64(inFrames)*l
	return int(ceilDiv(next, m) - ceilDiv(r.acc, m))
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// Reset forgets all past input, as if the resampler were new.
func (r *Resampler) Reset() {
	for c := range r.hist {
		h := r.hist[c][:0]
		for i := 0; i < r.taps-1; i++ {
			h = append(h, 0)
		}
		r.hist[c] = h
	}
	r.pos, r.phase, r.acc = 0, 0, 0
	r.pending = r.pending[:0]
}

// Resample appends to dst the output for src, both interleaved 16-bit
// little-endian PCM, and returns the extended slice. src may end inside a
// sample frame: the rest is kept for the next call. Pass dst[:0] of a
// reused buffer to resample without allocating.
func (r *Resampler) Resample(dst, src []byte) []byte {
	fb := 2 * r.channels
	if len(r.pending) > 0 {
		need := fb - len(r.pending)
		if len(src) < need {
			r.pending = append(r.pending, src...)
			return dst
		}
		r.pending = append(r.pending, src[:need]...)
		src = src[need:]
		dst = r.resampleBytes(dst, r.pending)
		r.pending = r.pending[:0]
	}
	whole := len(src) - len(src)%fb
	dst = r.resampleBytes(dst, src[:whole])
	r.pending = append(r.pending, src[whole:]...)
	return dst
}

// ResampleSamples is [Resampler.Resample] for audio held as samples: it
// appends to dst the output for src (interleaved) and returns the extended
// slice. A trailing incomplete frame of src is kept for the next call. Use
// one of the two methods per stream: half a sample left by Resample is
// dropped here.
func (r *Resampler) ResampleSamples(dst, src []int16) []int16 {
	if len(r.pending)%2 == 1 {
		r.pending = r.pending[:len(r.pending)-1]
	}
	var tmp [2]byte
	for len(r.pending) > 0 && len(src) > 0 {
		binary.LittleEndian.PutUint16(tmp[:], uint16(src[0]))
		src = src[1:]
		r.pending = append(r.pending, tmp[:]...)
		if len(r.pending) == 2*r.channels {
			r.out = r.process(r.out[:0], r.pending, nil)
			dst = append(dst, r.out...)
			r.pending = r.pending[:0]
		}
	}
	whole := len(src) - len(src)%r.channels
	r.out = r.process(r.out[:0], nil, src[:whole])
	dst = append(dst, r.out...)
	for _, s := range src[whole:] {
		binary.LittleEndian.PutUint16(tmp[:], uint16(s))
		r.pending = append(r.pending, tmp[:]...)
	}
	return dst
}

func (r *Resampler) resampleBytes(dst, src []byte) []byte {
	if r.l == 1 && r.m == 1 {
		r.acc = 0
		return append(dst, src...)
	}
	r.out = r.process(r.out[:0], src, nil)
	return AppendPCM(dst, r.out)
}

// process takes whole frames from either srcBytes or srcSamples and appends
// the interleaved output samples to out.
func (r *Resampler) process(out []int16, srcBytes []byte, srcSamples []int16) []int16 {
	ch := r.channels
	var frames int
	if srcBytes != nil {
		frames = len(srcBytes) / (2 * ch)
	} else {
		frames = len(srcSamples) / ch
	}
	if frames == 0 {
		return out
	}
	if r.l == 1 && r.m == 1 {
		if srcBytes != nil {
			return AppendSamples(out, srcBytes)
		}
		return append(out, srcSamples...)
	}
	// Append the new input to each channel's history.
	for c := 0; c < ch; c++ {
		h := r.hist[c]
		n := len(h)
		h = growF32(h, frames)
		dst := h[n:]
		if srcBytes != nil {
			for i := range dst {
				dst[i] = float32(int16(binary.LittleEndian.Uint16(srcBytes[2*(i*ch+c):])))
			}
		} else {
			for i := range dst {
				dst[i] = float32(srcSamples[i*ch+c])
			}
		}
		r.hist[c] = h
	}
	nOut := r.OutputFrames(frames)
	r.acc = (r.acc + int64(frames)*int64(r.l)) % int64(r.m)

	base := len(out)
	out = grow16(out, nOut*ch)
	o := out[base:]
	taps, l := r.taps, r.l
	step, rem := r.m/l, r.m%l
	pos, phase := r.pos, r.phase
	avail := len(r.hist[0])
	k := 0
	if ch == 1 && !r.interp {
		// The common case (mono, exact phases) without the general loop's
		// per-sample branches.
		h, coeffs := r.hist[0], r.coeffs
		for ; pos+taps <= avail; k++ {
			row := coeffs[phase*taps : phase*taps+taps]
			o[k] = saturateFloat(float64(dot(h[pos:pos+taps], row)))
			pos += step
			phase += rem
			if phase >= l {
				phase -= l
				pos++
			}
		}
	}
	for ; pos+taps <= avail; k++ {
		var row, next []float32
		var t float32
		if r.interp {
			f := phase * interpPhases
			q := f / l
			t = float32(f-q*l) / float32(l)
			row = r.coeffs[q*taps : (q+1)*taps]
			next = r.coeffs[(q+1)*taps : (q+2)*taps]
		} else {
			row = r.coeffs[phase*taps : (phase+1)*taps]
		}
		for c := 0; c < ch; c++ {
			x := r.hist[c][pos : pos+taps]
			v := dot(x, row)
			if next != nil {
				v += t * (dot(x, next) - v)
			}
			o[k*ch+c] = saturateFloat(float64(v))
		}
		// Advance by m/l input samples without dividing (a division per
		// output sample costs as much as a dozen taps).
		pos += step
		phase += rem
		if phase >= l {
			phase -= l
			pos++
		}
	}
	if k != nOut {
		// Cannot happen: OutputFrames and the loop count the same instants.
		panic(fmt.Sprintf("dsp: resampler produced %d frames, expected %d", k, nOut))
	}
	// Drop history no later output needs.
	drop := min(pos, avail)
	for c := 0; c < ch; c++ {
		h := r.hist[c]
		n := copy(h, h[drop:])
		r.hist[c] = h[:n]
	}
	r.pos, r.phase = pos-drop, phase
	return out
}

// Flush appends to dst the output still held back by the filter delay (the
// last [Resampler.Latency] of input, followed by silence) and resets the
// resampler for a new stream. An incomplete trailing frame is dropped.
func (r *Resampler) Flush(dst []byte) []byte {
	if r.l == 1 && r.m == 1 {
		r.Reset()
		return dst
	}
	r.pending = r.pending[:0]
	r.in = grow16(r.in[:0], r.half*r.channels)
	clear(r.in)
	r.out = r.process(r.out[:0], nil, r.in)
	dst = AppendPCM(dst, r.out)
	r.Reset()
	return dst
}

// dot is the resampler's only hot loop. Fixed-size array views let the
// compiler drop bounds checks; four accumulators hide the adder's latency.
func dot(x, h []float32) float32 {
	h = h[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+16 <= len(x); i += 16 {
		xs := (*[16]float32)(x[i:])
		hs := (*[16]float32)(h[i:])
		s0 += (xs[0]*hs[0] + xs[4]*hs[4]) + (xs[8]*hs[8] + xs[12]*hs[12])
		s1 += (xs[1]*hs[1] + xs[5]*hs[5]) + (xs[9]*hs[9] + xs[13]*hs[13])
		s2 += (xs[2]*hs[2] + xs[6]*hs[6]) + (xs[10]*hs[10] + xs[14]*hs[14])
		s3 += (xs[3]*hs[3] + xs[7]*hs[7]) + (xs[11]*hs[11] + xs[15]*hs[15])
	}
	for ; i+4 <= len(x); i += 4 {
		xs := (*[4]float32)(x[i:])
		hs := (*[4]float32)(h[i:])
		s0 += xs[0] * hs[0]
		s1 += xs[1] * hs[1]
		s2 += xs[2] * hs[2]
		s3 += xs[3] * hs[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * h[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func growF32(b []float32, n int) []float32 {
	if cap(b)-len(b) < n {
		nb := make([]float32, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}
