package audio_test

import (
	"fmt"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/audio"
)

// Feed audio to the VAD and watch its state.
func ExampleVAD() {
	v, err := audio.NewVAD(audio.VADOptions{}) // Pipecat's defaults, 16 kHz, 10 ms windows
	if err != nil {
		panic(err)
	}
	silence := dsp.AppendSilence(nil, 16000, 1, time.Second)
	tone := dsp.Sine(440, 0.5, 16000, time.Second)
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
