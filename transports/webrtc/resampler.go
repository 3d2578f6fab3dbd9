package webrtc

import "github.com/framewire/framewire/transports"

// resampler is what the output needs from a sample-rate converter: mono
// 16-bit samples in, appended out, with state across calls.
type resampler interface {
	ResampleSamples(dst, src []int16) []int16
	Reset()
}

// newResampler returns the transports' mono converter from one rate to
// another.
func newResampler(in, out int) (resampler, error) { return transports.NewResampler(in, out) }
