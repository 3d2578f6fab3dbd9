package dsp_test

import (
	"fmt"
	"time"

	"github.com/framewire/framewire/dsp"
)

// Resample a stream of 20 ms frames from 48 kHz to 16 kHz, reusing one
// output buffer.
func ExampleResampler() {
	r, err := dsp.NewResampler(48000, 16000, 1, dsp.ResamplerOptions{})
	if err != nil {
		panic(err)
	}
	tone := dsp.Tone{Freq: 440, Amplitude: 0.5, SampleRate: 48000}
	var out []byte
	for range 3 {
		in := tone.AppendDuration(nil, 20*time.Millisecond)
		out = r.Resample(out[:0], in)
		fmt.Println(len(in), "bytes in,", len(out), "bytes out")
	}
	fmt.Println("latency", r.Latency().Round(time.Microsecond))
	// Output:
	// 1920 bytes in, 640 bytes out
	// 1920 bytes in, 640 bytes out
	// 1920 bytes in, 640 bytes out
	// latency 3.167ms
}

// Check which tone arrived, as the transport tests do.
func ExampleToneAmplitude() {
	pcm := dsp.Sine(440, 0.5, 16000, 100*time.Millisecond)
	fmt.Printf("440 Hz: %.2f\n", dsp.ToneAmplitude(pcm, 16000, 1, 440))
	fmt.Printf("1 kHz: %.2f\n", dsp.ToneAmplitude(pcm, 16000, 1, 1000))
	// Output:
	// 440 Hz: 0.50
	// 1 kHz: 0.00
}
