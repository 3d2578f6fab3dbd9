package resample

import (
	"fmt"
	"math"
)

// Resampler converts a stream of mono 16-bit samples from one rate to
// another. State carries across calls, so chunk boundaries are inaudible.
// A Resampler is owned by one goroutine.
type Resampler struct {
	in, out int
	up      int // L: interpolation factor
	down    int // M: decimation factor
	taps    int // coefficients per phase
	coef    []float32
	hist    []float32 // taps-1 samples of history, then pending input
	t       int       // position of the next output, in 1/L input samples, relative to hist
}

// New returns a resampler from inRate to outRate (both in Hz). Equal rates
// give a resampler that copies.
func New(inRate, outRate int) (*Resampler, error) {
	if inRate <= 0 || outRate <= 0 {
		return nil, fmt.Errorf("resample: rates must be positive, got %d -> %d", inRate, outRate)
	}
	g := gcd(inRate, outRate)
	r := &Resampler{in: inRate, out: outRate, up: outRate / g, down: inRate / g}
	if r.up > 64 || r.down > 64 {
		return nil, fmt.Errorf("resample: ratio %d/%d is too fine for a polyphase filter", r.up, r.down)
	}
	if r.up == 1 && r.down == 1 {
		return r, nil
	}
	// About 96 taps at the higher rate: a transition band under 3 kHz
	// with Kaiser beta 8.6 (~85 dB stop band).
	r.taps = 48
	if r.down > 1 {
		r.taps = 32 * r.down
	}
	r.design()
	r.Reset()
	return r, nil
}

// Rates returns the input and output rates.
func (r *Resampler) Rates() (in, out int) { return r.in, r.out }

// design builds the polyphase bank: a Kaiser-windowed sinc low-pass at the
// lower Nyquist frequency, scaled by L, split into L phases of taps each.
func (r *Resampler) design() {
	n := r.taps * r.up
	// Cutoff in cycles per upsampled sample, a little under Nyquist so the
	// transition band ends at it.
	fc := 0.5 / float64(max(r.up, r.down)) * 0.92
	const beta = 8.6
	i0b := bessel0(beta)
	r.coef = make([]float32, n)
	mid := float64(n-1) / 2
	for j := 0; j < n; j++ {
		x := float64(j) - mid
		s := 2 * fc
		if x != 0 {
			s = math.Sin(2*math.Pi*fc*x) / (math.Pi * x)
		}
		w := bessel0(beta*math.Sqrt(1-(x/mid)*(x/mid))) / i0b
		// Phase p, tap k multiplies the sample k steps back. Store each
		// phase contiguously and reversed, so the inner loop is a plain dot
		// product with the history, oldest sample first.
		p, k := j%r.up, j/r.up
		r.coef[p*r.taps+r.taps-1-k] = float32(s * w * float64(r.up))
	}
}

// Reset forgets the history, for a new stream or after an interruption.
func (r *Resampler) Reset() {
	if r.taps == 0 {
		return
	}
	if cap(r.hist) < r.taps-1 {
		r.hist = make([]float32, r.taps-1, 4*r.taps)
	}
	r.hist = r.hist[:r.taps-1]
	clear(r.hist)
	r.t = (r.taps - 1) * r.up
}

// Resample appends the resampled src to dst and returns it. It does not
// allocate once dst and the internal history have grown to the chunk size.
func (r *Resampler) Resample(dst, src []int16) []int16 {
	if r.taps == 0 {
		return append(dst, src...)
	}
	for _, s := range src {
		r.hist = append(r.hist, float32(s))
	}
	L, M, taps := r.up, r.down, r.taps
	for {
		idx := r.t / L
		if idx >= len(r.hist) {
			break
		}
		p := r.t % L
		c := r.coef[p*taps : (p+1)*taps]
		x := r.hist[idx-taps+1 : idx+1]
		dst = append(dst, clamp(dot(c, x)))
		r.t += M
	}
	// Keep the taps-1 samples before the next output's newest sample.
	drop := r.t/L - (taps - 1)
	if drop > 0 {
		if drop > len(r.hist) {
			drop = len(r.hist)
		}
		n := copy(r.hist, r.hist[drop:])
		r.hist = r.hist[:n]
		r.t -= drop * L
	}
	return dst
}

// dot is the inner product of c and x (len(x) >= len(c)), unrolled by four.
func dot(c, x []float32) float32 {
	x = x[:len(c)]
	var a0, a1, a2, a3 float32
	i := 0
	for ; i+4 <= len(c); i += 4 {
		cc, xx := c[i:i+4:i+4], x[i:i+4:i+4]
		a0 += cc[0] * xx[0]
		a1 += cc[1] * xx[1]
		a2 += cc[2] * xx[2]
		a3 += cc[3] * xx[3]
	}
	for ; i < len(c); i++ {
		a0 += c[i] * x[i]
	}
	return (a0 + a1) + (a2 + a3)
}

func clamp(v float32) int16 {
	if v >= math.MaxInt16 {
		return math.MaxInt16
	}
	if v <= math.MinInt16 {
		return math.MinInt16
	}
	if v < 0 {
		return int16(v - 0.5)
	}
	return int16(v + 0.5)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// bessel0 is the zeroth-order modified Bessel function of the first kind.
func bessel0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
		if term < 1e-12*sum {
			break
		}
	}
	return sum
}
