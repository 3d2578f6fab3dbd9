package webrtc

import "github.com/framewire/framewire/transports/webrtc/internal/resample"

// resampler is all the transport needs from a sample-rate converter: mono
// 16-bit samples in, appended out, with state across calls. The local
// implementation stands in until processors/audio provides the framework's.
type resampler interface {
	Resample(dst, src []int16) []int16
	Reset()
}

// newResampler returns a converter from one rate to another.
var newResampler = func(in, out int) (resampler, error) { return resample.New(in, out) }
