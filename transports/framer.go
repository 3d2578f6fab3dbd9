package transports

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// InputFormat is the PCM format of the audio frames an input transport
// pushes into its pipeline.
type InputFormat struct {
	// SampleRate in Hz, the pipeline's input rate (16000 by default).
	SampleRate int
	// Channels: 1, or 2 for a pipeline that wants the mono input copied
	// to both channels.
	Channels int
	// FrameDuration of each frame. Default: 20 ms.
	FrameDuration time.Duration
}

// FrameSamples returns the samples per channel of one frame.
func (f InputFormat) FrameSamples() int {
	d := f.FrameDuration
	if d <= 0 {
		d = FrameDuration
	}
	return f.SampleRate * int(d/time.Microsecond) / 1e6
}

// InputOptions configure a transport's input: the format of the audio
// frames it pushes and how far ahead of real time a client may send. Every
// transport's Options.Input is one.
type InputOptions struct {
	// SampleRate of the frames.InputAudioRaw frames. Default: the pipeline's
	// input rate from frames.Start (16000 unless the task says otherwise).
	SampleRate int
	// Channels of the frames.InputAudioRaw frames (1 or 2). Default: 1.
	Channels int
	// FrameDuration of each frames.InputAudioRaw. Default: 20 ms.
	FrameDuration time.Duration
	// MaxAhead bounds how far ahead of real time a client's audio may
	// arrive: a stream may deliver at most real time plus MaxAhead, and
	// what comes beyond is dropped before it is decoded (see [Pacer]), so
	// no client can push audio into the pipeline faster than it plays.
	// Default: [DefaultMaxAhead]; negative: no bound.
	MaxAhead time.Duration
}

// WithDefaults returns the options with their defaults filled in.
func (o InputOptions) WithDefaults() InputOptions {
	if o.Channels != 2 {
		o.Channels = 1
	}
	if o.FrameDuration <= 0 {
		o.FrameDuration = FrameDuration
	}
	if o.MaxAhead == 0 {
		o.MaxAhead = DefaultMaxAhead
	}
	return o
}

// Format returns the input format for a pipeline whose frames.Start says
// startRate (0 when it says none).
func (o InputOptions) Format(startRate int) *InputFormat {
	rate := o.SampleRate
	if rate <= 0 {
		rate = startRate
	}
	if rate <= 0 {
		rate = 16000
	}
	return &InputFormat{SampleRate: rate, Channels: o.Channels, FrameDuration: o.FrameDuration}
}

// An AudioFramer turns a stream of decoded mono samples at the wire's
// rate into the fixed-size frames.InputAudioRaw frames of an InputFormat:
// it resamples, accumulates and cuts, carrying what is left of a frame to
// the next Write. Frames and their PCM are allocated a second at a time
// (frames.Block), so a session's input costs no allocation per frame.
// An AudioFramer is owned by one goroutine, the stream's reader.
type AudioFramer struct {
	format  InputFormat
	samples int // per channel, in one frame
	inRate  int
	rs      resampler
	acc     []int16 // at the frame rate, waiting to fill a frame

	frameBlock frames.Block[frames.InputAudioRaw]
	pcmBlock   frames.ByteBlock
}

// NewAudioFramer returns a framer from mono samples at inRate to frames of
// format f.
func NewAudioFramer(f InputFormat, inRate int) (*AudioFramer, error) {
	if f.Channels != 2 {
		f.Channels = 1
	}
	if f.FrameDuration <= 0 {
		f.FrameDuration = FrameDuration
	}
	n := f.FrameSamples()
	if n <= 0 || inRate <= 0 {
		return nil, fmt.Errorf("transports: cannot frame %d Hz audio as %d Hz frames of %v", inRate, f.SampleRate, f.FrameDuration)
	}
	a := &AudioFramer{format: f, samples: n, inRate: inRate, acc: make([]int16, 0, 2*n)}
	if inRate != f.SampleRate {
		rs, err := NewResampler(inRate, f.SampleRate)
		if err != nil {
			return nil, err
		}
		a.rs = rs
	}
	perSecond := max(1, int(time.Second/f.FrameDuration))
	a.frameBlock.N, a.pcmBlock.Size = perSecond, perSecond*n*2*f.Channels
	return a, nil
}

// Format returns the format of the frames the framer makes.
func (a *AudioFramer) Format() InputFormat { return a.format }

// InRate returns the rate of the samples Write takes.
func (a *AudioFramer) InRate() int { return a.inRate }

// Write adds mono samples at InRate and pushes every frame they complete
// downstream into out. It returns how many frames it pushed.
func (a *AudioFramer) Write(samples []int16, out pipeline.Pusher) int {
	if a.rs != nil {
		a.acc = a.rs.ResampleSamples(a.acc, samples)
	} else {
		a.acc = append(a.acc, samples...)
	}
	ch, pushed := a.format.Channels, 0
	for len(a.acc) >= a.samples {
		frame, pcm := a.frameBlock.New(), a.pcmBlock.Take(a.samples*2*ch)
		for i, v := range a.acc[:a.samples] {
			for c := range ch {
				binary.LittleEndian.PutUint16(pcm[(i*ch+c)*2:], uint16(v))
			}
		}
		rest := copy(a.acc, a.acc[a.samples:])
		a.acc = a.acc[:rest]
		frame.Audio = frames.Audio{PCM: pcm, SampleRate: a.format.SampleRate, Channels: ch}
		out.Push(frame, frames.Downstream)
		pushed++
	}
	return pushed
}

// Reset forgets the samples of an unfinished frame and the resampler's
// history, for a stream that starts again (a restarted track).
func (a *AudioFramer) Reset() {
	a.acc = a.acc[:0]
	if a.rs != nil {
		a.rs.Reset()
	}
}

// resampler is what a transport needs from a sample-rate converter: mono
// 16-bit samples in, appended out, with state across calls.
type resampler interface {
	ResampleSamples(dst, src []int16) []int16
	Reset()
}

// resamplerOptions trade a little of package dsp's default filter (80 dB,
// 90% passband) for about half the taps: a transport resamples every
// 20 ms of every session both ways, and the codec on the other side of it
// is lossy anyway. 70 dB keeps aliases far below Opus's own noise, and
// G.711's; 85% keeps 6.8 kHz of a 16 kHz stream flat, plenty for speech.
var resamplerOptions = dsp.ResamplerOptions{Attenuation: 70, Passband: 0.85}

// NewResampler returns the mono converter from one rate to another that
// every transport uses, tuned as resamplerOptions says.
func NewResampler(in, out int) (*dsp.Resampler, error) {
	return dsp.NewResampler(in, out, 1, resamplerOptions)
}

// An AudioIn is a client's audio on its way into the pipeline, for a
// transport whose audio is cheap to decode (PCM, G.711 on a socket): paced
// to real time plus the Pacer's MaxAhead, then framed to the pipeline's
// input format, the framer remade when the format or the stream's rate
// changes. (WebRTC paces before decoding instead, since Opus is not
// cheap.) An AudioIn is owned by the stream's reader.
type AudioIn struct {
	// Pacer holds the stream to real time; set its MaxAhead.
	Pacer Pacer

	framer *AudioFramer
	format *InputFormat
}

// Write takes samples, mono at rate, for the pipeline's input format f
// (nil before the pipeline has started: the samples are dropped), and
// pushes the frames they complete into out. It returns the frames pushed
// and false when the Pacer dropped the samples for arriving too far ahead
// of real time; an error says the rate cannot be converted.
func (a *AudioIn) Write(f *InputFormat, samples []int16, rate int, out pipeline.Pusher) (int, bool, error) {
	if f == nil || len(samples) == 0 || rate <= 0 {
		return 0, true, nil
	}
	if !a.Pacer.Admit(time.Duration(len(samples)) * time.Second / time.Duration(rate)) {
		return 0, false, nil
	}
	if a.framer == nil || a.format != f || a.framer.InRate() != rate {
		fr, err := NewAudioFramer(*f, rate)
		if err != nil {
			return 0, true, err
		}
		a.framer, a.format = fr, f
	}
	return a.framer.Write(samples, out), true, nil
}
