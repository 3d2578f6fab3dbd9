package silero

import (
	"fmt"
	"math"
)

// The model's STFT is a strided convolution with forward_basis_buffer, whose
// rows are a periodic Hann window times cos and -sin of the DFT (real rows
// for bins 0..N/2, then imaginary rows). Only the magnitude is used, so the
// Go pass computes the same numbers with a real FFT: about a twentieth of
// the multiplications of the convolution. decodeBranch checks that the
// basis is that windowed DFT before it relies on it.

// fft is a precomputed real FFT of length n (a power of two) done as a
// complex FFT of length n/2.
type fft struct {
	n       int
	window  []float32 // [n]: the basis's window, row 0 of the real part
	bitrev  []int32   // [n/2]
	cos     []float32 // [n/4]: twiddles of the half-length FFT
	sin     []float32
	postCos []float32 // [n/2+1]: twiddles of the split into n/2+1 bins
	postSin []float32
}

// basisTolerance is how far a basis entry may be from the windowed DFT
// (float32 rounding of values up to 1 is about 6e-8).
const basisTolerance = 1e-6

// newFFT checks that basis ([2*(n/2+1)][n]) is a windowed DFT and returns
// the FFT that replaces it.
func newFFT(basis []float32, n int) (*fft, error) {
	bins := n/2 + 1
	f := &fft{n: n, window: append([]float32(nil), basis[:n]...)}
	for k := range bins {
		for j := range n {
			a := 2 * math.Pi * float64(k*j%n) / float64(n)
			w := float64(f.window[j])
			re, im := w*math.Cos(a), -w*math.Sin(a)
			if math.Abs(float64(basis[k*n+j])-re) > basisTolerance || math.Abs(float64(basis[(bins+k)*n+j])-im) > basisTolerance {
				return nil, fmt.Errorf("STFT basis bin %d tap %d is not a windowed DFT", k, j)
			}
		}
	}
	m := n / 2
	bits := 0
	for 1<<bits < m {
		bits++
	}
	f.bitrev = make([]int32, m)
	for i := range m {
		r := 0
		for b := range bits {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		f.bitrev[i] = int32(r)
	}
	f.cos = make([]float32, m/2)
	f.sin = make([]float32, m/2)
	for j := range m / 2 {
		a := 2 * math.Pi * float64(j) / float64(m)
		f.cos[j], f.sin[j] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	f.postCos = make([]float32, m+1)
	f.postSin = make([]float32, m+1)
	for k := range m + 1 {
		a := 2 * math.Pi * float64(k) / float64(n)
		f.postCos[k], f.postSin[k] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	return f, nil
}

// magnitude writes |DFT(window * x)| of the n samples x into mag[k*stride]
// for bins k = 0..n/2, using re and im (n/2 each) as scratch.
func (f *fft) magnitude(mag []float32, stride int, x, re, im []float32) {
	m := f.n / 2
	x = x[:2*m]
	re, im = re[:m], im[:m]
	w := f.window[:2*m]
	// Pack even samples as real, odd as imaginary, in bit-reversed order.
	for i, r := range f.bitrev[:m] {
		re[r] = x[2*i] * w[2*i]
		im[r] = x[2*i+1] * w[2*i+1]
	}
	// Radix-2 decimation in time, e^(-2πi j/size) twiddles.
	for size := 2; size <= m; size *= 2 {
		half, step := size/2, m/size
		for start := 0; start < m; start += size {
			for j := range half {
				c, s := f.cos[j*step], f.sin[j*step]
				a, b := start+j, start+j+half
				tr := re[b]*c + im[b]*s
				ti := im[b]*c - re[b]*s
				re[b], im[b] = re[a]-tr, im[a]-ti
				re[a], im[a] = re[a]+tr, im[a]+ti
			}
		}
	}
	// Split Z (the FFT of the packed signal) into the n/2+1 bins of x:
	// X[k] = E[k] + e^(-2πik/n) O[k] with E, O the FFTs of the even and odd
	// samples.
	for k := range m + 1 {
		zk, zm := k%m, (m-k)%m
		er := (re[zk] + re[zm]) / 2
		ei := (im[zk] - im[zm]) / 2
		or := (im[zk] + im[zm]) / 2
		oi := (re[zm] - re[zk]) / 2
		c, s := f.postCos[k], f.postSin[k]
		xr := er + c*or + s*oi
		xi := ei + c*oi - s*or
		mag[k*stride] = float32(math.Sqrt(float64(xr*xr + xi*xi)))
	}
}
