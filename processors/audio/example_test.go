package audio_test

import (
	"fmt"
	"time"

	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
)

// Resample a stream of 20 ms frames from 48 kHz to 16 kHz, reusing one
// output buffer.
func ExampleResampler() {
	r, err := audio.NewResampler(48000, 16000, 1, audio.ResamplerOptions{})
	if err != nil {
		panic(err)
	}
	tone := audio.Tone{Freq: 440, Amplitude: 0.5, SampleRate: 48000}
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
	pcm := audio.Sine(440, 0.5, 16000, 100*time.Millisecond)
	fmt.Printf("440 Hz: %.2f\n", audio.ToneAmplitude(pcm, 16000, 1, 440))
	fmt.Printf("1 kHz: %.2f\n", audio.ToneAmplitude(pcm, 16000, 1, 1000))
	// Output:
	// 440 Hz: 0.50
	// 1 kHz: 0.00
}

// Feed audio to the VAD and watch its state.
func ExampleVAD() {
	v, err := audio.NewVAD(audio.VADOptions{}) // Pipecat's defaults, 16 kHz, 10 ms windows
	if err != nil {
		panic(err)
	}
	silence := audio.AppendSilence(nil, 16000, 1, time.Second)
	tone := audio.Sine(440, 0.5, 16000, time.Second)
	fmt.Println(v.Analyze(silence))
	fmt.Println(v.Analyze(tone))
	fmt.Println(v.Analyze(silence))
	// Output:
	// quiet
	// speaking
	// quiet
}

// The voice front end of a pipeline: VAD after the input transport, then
// speech-to-text, then the turn tracker that interrupts the bot when the
// user starts a turn.
func ExampleNewTurnTracker() {
	var transportIn, stt, rest pipeline.Processor = pipeline.PassThrough{}, pipeline.PassThrough{}, pipeline.PassThrough{}
	p := pipeline.New(
		transportIn,
		audio.NewVADProcessor(audio.VADProcessorOptions{}),
		stt,
		audio.NewTurnTracker(audio.TurnTrackerOptions{}),
		rest,
	)
	fmt.Println(len(p.Processors()), "processors")
	// Output: 5 processors
}
