package webrtc

import "github.com/framewire/framewire/dsp"

// resampler is what the transport needs from a sample-rate converter: mono
// 16-bit samples in, appended out, with state across calls.
type resampler interface {
	ResampleSamples(dst, src []int16) []int16
	Reset()
}

// resamplerOptions trade a little of package dsp's default filter
// (80 dB, 90% passband) for about half the taps: the transport resamples
// every 20 ms of every session both ways, and the codec on the other side
// of it is lossy anyway. 70 dB keeps aliases far below Opus's own noise;
// 85% keeps 6.8 kHz of a 16 kHz stream flat, plenty for speech.
var resamplerOptions = dsp.ResamplerOptions{Attenuation: 70, Passband: 0.85}

// newResampler returns a mono converter from one rate to another.
func newResampler(in, out int) (resampler, error) {
	return dsp.NewResampler(in, out, 1, resamplerOptions)
}
