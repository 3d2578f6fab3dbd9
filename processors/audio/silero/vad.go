package silero

import (
	"fmt"
	"time"

	"github.com/framewire/framewire/processors/audio"
)

// Window is the length of audio Silero VAD v5 scores at once.
const Window = 32 * time.Millisecond

// Options configure [NewVAD]. The zero value loads the model from
// [DefaultModelPath] and uses Pipecat's default parameters at 16 kHz.
type Options struct {
	// Model is the loaded model; share one across sessions. Default:
	// LoadModel(ModelPath).
	Model *Model
	// ModelPath is the model file used when Model is nil. Default:
	// [DefaultModelPath].
	ModelPath string
	// Params are the start/stop state machine's parameters. Zero:
	// audio.DefaultVADParams(), the same defaults as Pipecat's Silero
	// analyzer.
	Params audio.VADParams
	// SampleRate is the initial sample rate: 16000 (default) or 8000.
	SampleRate int
}

// VAD is an audio.VADAnalyzer that detects voice with Silero VAD v5: the
// audio.VAD state machine (confidence, start and stop times, minimum
// volume) over a [Scorer] with 32 ms windows. Only 16 kHz and 8 kHz are
// supported; [VAD.SetSampleRate] refuses other rates, which an
// audio.VADProcessor reports and passes through.
//
// Like audio.VAD it is not safe for concurrent use, and it does not
// allocate per window.
type VAD struct {
	vad    *audio.VAD
	scorer *Scorer
}

var (
	_ audio.VADAnalyzer = (*VAD)(nil)
	_ audio.VoiceScorer = (*Scorer)(nil)
)

// NewVAD returns a Silero VAD ready for an audio.VADProcessor.
func NewVAD(opts Options) (*VAD, error) {
	m := opts.Model
	if m == nil {
		var err error
		if m, err = LoadModel(opts.ModelPath); err != nil {
			return nil, err
		}
	}
	if opts.SampleRate == 0 {
		opts.SampleRate = 16000
	}
	if err := checkRate(opts.SampleRate); err != nil {
		return nil, err
	}
	s := NewScorer(m)
	v, err := audio.NewVAD(audio.VADOptions{
		Params:     opts.Params,
		Scorer:     s,
		Window:     Window,
		SampleRate: opts.SampleRate,
	})
	if err != nil {
		return nil, fmt.Errorf("silero: %w", err)
	}
	return &VAD{vad: v, scorer: s}, nil
}

func checkRate(rate int) error {
	if WindowSamples(rate) == 0 {
		return fmt.Errorf("silero: sample rate %d Hz, want 16000 or 8000", rate)
	}
	return nil
}

// SetSampleRate implements audio.VADAnalyzer; rate must be 16000 or 8000.
func (v *VAD) SetSampleRate(rate int) error {
	if err := checkRate(rate); err != nil {
		return err
	}
	return v.vad.SetSampleRate(rate)
}

// WindowFrames implements audio.VADAnalyzer: 512 at 16 kHz, 256 at 8 kHz.
func (v *VAD) WindowFrames() int { return v.vad.WindowFrames() }

// Analyze implements audio.VADAnalyzer.
func (v *VAD) Analyze(pcm []byte) audio.VADState { return v.vad.Analyze(pcm) }

// Params implements audio.VADAnalyzer.
func (v *VAD) Params() audio.VADParams { return v.vad.Params() }

// Reset forgets the stream: state Quiet, no buffered audio, and the model's
// recurrent state and context cleared.
func (v *VAD) Reset() { v.vad.Reset() }

// SampleRate returns the current sample rate.
func (v *VAD) SampleRate() int { return v.vad.SampleRate() }

// State returns the state after the last complete window.
func (v *VAD) State() audio.VADState { return v.vad.State() }

// Confidence returns the speech probability of the last complete window.
func (v *VAD) Confidence() float64 { return v.vad.Confidence() }

// Volume returns the smoothed volume after the last complete window (see
// audio.VAD.Volume).
func (v *VAD) Volume() float64 { return v.vad.Volume() }
