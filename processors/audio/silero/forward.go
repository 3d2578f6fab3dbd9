package silero

import (
	"fmt"
	"math"
)

// WindowSamples returns the number of new samples Silero VAD v5 takes per
// call at rate: 512 (32 ms) at 16 kHz, 256 (32 ms) at 8 kHz, 0 at any other
// rate.
func WindowSamples(rate int) int {
	switch rate {
	case 16000:
		return 512
	case 8000:
		return 256
	}
	return 0
}

// Scorer runs Silero VAD v5 on one stream: each call to [Scorer.Confidence]
// takes the next 32 ms window and returns the probability of speech in it.
// The model's LSTM state and the last samples of the previous window are
// carried from call to call, as in the reference Python wrapper. It
// implements audio.VoiceScorer, so audio.VAD can drive it with a 32 ms
// window.
//
// A Scorer is not safe for concurrent use; it allocates nothing after
// [NewScorer]. The zero value has no model and scores every window 0.
type Scorer struct {
	model *Model
	b     *branch // nil at an unsupported rate

	h, c   [hidden]float32
	lstmIn [2 * hidden]float32 // x then h
	gates  [4 * hidden]float32

	input []float32 // context + window + right pad (16 kHz: 64 + 512 + 64)
	fftRe [128]float32
	fftIm [128]float32
	mag   []float32 // [bins][frames]
	cols  []float32 // im2col scratch, the largest layer's [frames][in*3]
	act   [2][]float32
}

// NewScorer returns a Scorer for m at 16 kHz.
func NewScorer(m *Model) *Scorer {
	s := &Scorer{model: m}
	if m == nil {
		return s
	}
	// Size the buffers for the larger (16 kHz) branch; 8 kHz fits in them.
	b := m.k16
	s.input = make([]float32, b.context+b.window+b.pad)
	s.mag = make([]float32, b.bins*b.frames)
	n := 0
	for _, c := range b.enc {
		n = max(n, c.in*convKernel*b.frames)
	}
	s.cols = make([]float32, n)
	s.act[0] = make([]float32, 128*b.frames)
	s.act[1] = make([]float32, 128*b.frames)
	s.Reset(16000)
	return s
}

// Reset implements audio.VoiceScorer: it clears the LSTM state and the
// context and selects the network for sampleRate. At a rate other than
// 16000 or 8000 every window scores 0.
func (s *Scorer) Reset(sampleRate int) {
	s.b = nil
	if s.model != nil {
		switch sampleRate {
		case 16000:
			s.b = s.model.k16
		case 8000:
			s.b = s.model.k8
		}
	}
	s.h, s.c = [hidden]float32{}, [hidden]float32{}
	clear(s.input)
}

// SampleRate returns the rate the Scorer was reset to when it is one the
// model supports, or 0.
func (s *Scorer) SampleRate() int {
	if s.b == nil {
		return 0
	}
	return s.b.rate
}

// Confidence implements audio.VoiceScorer: the speech probability of the
// next window, which must hold [WindowSamples] samples (512 at 16 kHz). A
// window of any other length, or a Scorer at an unsupported rate, scores 0
// and leaves the state alone.
func (s *Scorer) Confidence(window []int16) float64 {
	b := s.b
	if b == nil || len(window) != b.window {
		return 0
	}
	in := s.input[:b.context+b.window+b.pad]
	// The context is the end of the previous window's input.
	copy(in, in[b.window:b.window+b.context])
	x := in[b.context : b.context+b.window]
	for i, v := range window[:len(x)] {
		x[i] = float32(v) / 32768
	}
	return float64(s.forward(b, in))
}

// Probability is [Scorer.Confidence] for float samples in [-1, 1].
func (s *Scorer) Probability(window []float32) (float32, error) {
	b := s.b
	if b == nil {
		return 0, fmt.Errorf("silero: no model for this sample rate (want 16000 or 8000 Hz)")
	}
	if len(window) != b.window {
		return 0, fmt.Errorf("silero: window of %d samples, want %d at %d Hz", len(window), b.window, b.rate)
	}
	in := s.input[:b.context+b.window+b.pad]
	copy(in, in[b.window:b.window+b.context])
	copy(in[b.context:], window)
	return s.forward(b, in), nil
}

// forward runs the network on in, whose first context+window samples are
// set, and updates the LSTM state.
func (s *Scorer) forward(b *branch, in []float32) float32 {
	// Reflect padding on the right: [a b c d] -> [a b c d c b].
	n := b.context + b.window
	for k := range b.pad {
		in[n+k] = in[n-2-k]
	}
	// STFT magnitude, [bins][frames].
	mag := s.mag[:b.bins*b.frames]
	for t := range b.frames {
		b.fft.magnitude(mag[t:], b.frames, in[t*b.hop:t*b.hop+b.kernel], s.fftRe[:], s.fftIm[:])
	}
	// Encoder: four Conv1d+ReLU layers; activations are [channels][time].
	act, frames := mag, b.frames
	for i := range b.enc {
		c := &b.enc[i]
		act, frames = s.conv(c, act, frames, s.act[i%2])
	}
	// act is now [128][1]: the LSTM input.
	copy(s.lstmIn[:hidden], act[:hidden])
	copy(s.lstmIn[hidden:], s.h[:])
	gemvRows(s.gates[:], b.lstmW, b.lstmB, s.lstmIn[:])
	g := &s.gates
	for j := range hidden {
		ig := sigmoid(g[j])
		fg := sigmoid(g[hidden+j])
		cg := tanh(g[2*hidden+j])
		og := sigmoid(g[3*hidden+j])
		c := fg*s.c[j] + ig*cg
		s.c[j] = c
		s.h[j] = og * tanh(c)
	}
	// Head: ReLU, 1x1 convolution to one channel, sigmoid (the mean over
	// one frame is the frame).
	var acc float32
	for j, w := range b.outW[:hidden] {
		acc += w * max(s.h[j], 0)
	}
	return sigmoid(acc + b.outB)
}

// conv applies c (kernel 3, padding 1) and ReLU to x ([c.in][frames]),
// writing [c.out][out frames] into dst, and returns it with its frame count.
func (s *Scorer) conv(c *conv, x []float32, frames int, dst []float32) ([]float32, int) {
	outFrames := (frames+2-convKernel)/c.stride + 1
	n := c.in * convKernel
	cols := s.cols[:n*outFrames]
	// im2col: column t holds x[ch][t*stride+k-1] at ch*3+k.
	for t := range outFrames {
		col := cols[t*n : (t+1)*n]
		for ch := range c.in {
			row := x[ch*frames : (ch+1)*frames]
			for k := range convKernel {
				p := t*c.stride + k - 1
				v := float32(0)
				if p >= 0 && p < frames {
					v = row[p]
				}
				col[ch*convKernel+k] = v
			}
		}
	}
	dst = dst[:c.out*outFrames]
	switch outFrames {
	case 4:
		var cs [4][]float32
		for t := range 4 {
			cs[t] = cols[t*n : (t+1)*n]
		}
		gemv4(dst, c.w, c.b, &cs, n, true)
	case 2:
		gemv2(dst, c.w, c.b, cols[:n], cols[n:2*n], n)
	case 1:
		gemvRows(dst, c.w, c.b, cols[:n])
		for i, v := range dst {
			dst[i] = max(v, 0)
		}
	default:
		panic("silero: unexpected frame count") // the shapes are fixed by decodeBranch
	}
	return dst, outFrames
}

// gemv4 sets dst[o*4+t] = bias[o] + w[o]·cols[t] for every row o of w (rows
// of length n), then applies ReLU when relu is set. A nil bias is zero. The
// four accumulators share each load of a weight.
func gemv4(dst, w, bias []float32, cols *[4][]float32, n int, relu bool) {
	c0, c1, c2, c3 := cols[0][:n], cols[1][:n], cols[2][:n], cols[3][:n]
	rows := len(dst) / 4
	for o := range rows {
		row := w[o*n : (o+1)*n]
		var s0, s1, s2, s3 float32
		for i, v := range row {
			s0 += v * c0[i]
			s1 += v * c1[i]
			s2 += v * c2[i]
			s3 += v * c3[i]
		}
		if bias != nil {
			b := bias[o]
			s0, s1, s2, s3 = s0+b, s1+b, s2+b, s3+b
		}
		if relu {
			s0, s1, s2, s3 = max(s0, 0), max(s1, 0), max(s2, 0), max(s3, 0)
		}
		d := dst[o*4 : o*4+4]
		d[0], d[1], d[2], d[3] = s0, s1, s2, s3
	}
}

// gemv2 is gemv4 for two columns, two rows at a time, with ReLU.
func gemv2(dst, w, bias, c0, c1 []float32, n int) {
	c0, c1 = c0[:n], c1[:n]
	rows := len(dst) / 2
	for o := 0; o+1 < rows; o += 2 {
		r0 := w[o*n : (o+1)*n]
		r1 := w[(o+1)*n : (o+2)*n]
		r1 = r1[:len(r0)]
		var s00, s01, s10, s11 float32
		for i, v := range r0 {
			u := r1[i]
			a, b := c0[i], c1[i]
			s00 += v * a
			s01 += v * b
			s10 += u * a
			s11 += u * b
		}
		b0, b1 := bias[o], bias[o+1]
		d := dst[o*2 : o*2+4]
		d[0], d[1], d[2], d[3] = max(s00+b0, 0), max(s01+b0, 0), max(s10+b1, 0), max(s11+b1, 0)
	}
}

// gemvRows sets dst[o] = bias[o] + w[o]·x for every row o of w, four rows
// at a time (the row counts here are multiples of four).
func gemvRows(dst, w, bias, x []float32) {
	n := len(x)
	for o := 0; o+3 < len(dst); o += 4 {
		r0 := w[o*n : (o+1)*n]
		r1 := w[(o+1)*n : (o+2)*n][:len(r0)]
		r2 := w[(o+2)*n : (o+3)*n][:len(r0)]
		r3 := w[(o+3)*n : (o+4)*n][:len(r0)]
		xs := x[:len(r0)]
		var s0, s1, s2, s3 float32
		for i, v := range xs {
			s0 += r0[i] * v
			s1 += r1[i] * v
			s2 += r2[i] * v
			s3 += r3[i] * v
		}
		d, b := dst[o:o+4], bias[o:o+4]
		d[0], d[1], d[2], d[3] = s0+b[0], s1+b[1], s2+b[2], s3+b[3]
	}
}

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

func tanh(x float32) float32 { return float32(math.Tanh(float64(x))) }
