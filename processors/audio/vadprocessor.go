package audio

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// VADProcessorOptions configure a [VADProcessor]. The zero value is ready to
// use.
type VADProcessorOptions struct {
	// Analyzer detects voice. Default: a [VAD] with default options.
	Analyzer VADAnalyzer
	// SpeakingPeriod is the interval, in audio time, between
	// [frames.UserSpeaking] frames while the user speaks. Default: 200 ms
	// (Pipecat's speech activity period); negative turns them off.
	SpeakingPeriod time.Duration
	// Now stamps the VAD frames. Default: time.Now.
	Now func() time.Time
	// DownstreamOnly pushes the VAD and speaking frames downstream only.
	// By default they are broadcast (one copy each way), as in Pipecat, so
	// processors before the VAD (an STT service) see them too.
	DownstreamOnly bool
}

// VADProcessor runs voice activity detection on the user's audio. It
// forwards every [frames.InputAudioRaw] untouched and, after the audio frame
// that completed the deciding window, pushes
// [frames.VADUserStartedSpeaking] (StartSecs from the analyzer's params) when
// speech has lasted StartSecs, [frames.UserSpeaking] at the start and then
// every SpeakingPeriod of audio while speaking, and
// [frames.VADUserStoppedSpeaking] (StopSecs) when silence has lasted
// StopSecs. Multi-channel audio is mixed down to mono first; a change of
// sample rate restarts the analyzer.
//
// Place it right after the input transport. It decides VAD only; a
// [TurnTracker] after it decides user turns.
type VADProcessor struct {
	analyzer VADAnalyzer
	period   time.Duration
	now      func() time.Time
	down     bool
	log      *zap.Logger

	rate          int
	window        int // analyzer window, in bytes of mono audio
	speaking      bool
	sinceSpeaking int // samples analysed since the last UserSpeaking
	periodSamples int
	mono          []byte
	badRate       int
}

// NewVADProcessor returns a VAD processor.
func NewVADProcessor(opts VADProcessorOptions) *VADProcessor {
	if opts.Analyzer == nil {
		v, _ := NewVAD(VADOptions{}) // defaults are valid
		opts.Analyzer = v
	}
	if opts.SpeakingPeriod == 0 {
		opts.SpeakingPeriod = 200 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &VADProcessor{
		analyzer: opts.Analyzer,
		period:   opts.SpeakingPeriod,
		now:      opts.Now,
		down:     opts.DownstreamOnly,
		log:      zap.NewNop(),
	}
}

// Setup implements [pipeline.Setupper]; it keeps the logger.
func (p *VADProcessor) Setup(_ context.Context, s pipeline.Setup) error {
	if s.Logger != nil {
		p.log = s.Logger
	}
	return nil
}

// ProcessFrame implements [pipeline.Processor].
func (p *VADProcessor) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.InputAudioRaw:
		if dir != frames.Downstream {
			return nil
		}
		h.Forward()
		p.analyze(h, &f.Audio)
	case *frames.Start:
		if f.AudioInSampleRate > 0 {
			p.setRate(f.AudioInSampleRate)
		}
	}
	return nil
}

func (p *VADProcessor) setRate(rate int) bool {
	if rate == p.rate {
		return true
	}
	if err := p.analyzer.SetSampleRate(rate); err != nil {
		if p.badRate != rate {
			p.badRate = rate
			p.log.Warn("VAD cannot analyse audio at this rate; skipping it", zap.Int("sample_rate", rate), zap.Error(err))
		}
		return false
	}
	p.rate = rate
	p.window = 2 * p.analyzer.WindowFrames()
	p.periodSamples = int(int64(rate) * int64(p.period) / int64(time.Second))
	p.speaking = false
	return true
}

func (p *VADProcessor) analyze(h *pipeline.Handle, a *frames.Audio) {
	if a.Channels <= 0 || !p.setRate(a.SampleRate) {
		return
	}
	pcm := a.PCM
	if a.Channels > 1 {
		p.mono = dsp.AppendMono(p.mono[:0], pcm, a.Channels)
		pcm = p.mono
	}
	// Feed at most one window at a time, so that a start and a stop inside
	// the same frame are both seen.
	for len(pcm) > 0 {
		n := min(len(pcm), max(p.window, 2))
		state := p.analyzer.Analyze(pcm[:n])
		pcm = pcm[n:]
		switch {
		case state == VADSpeaking && !p.speaking:
			p.speaking = true
			p.sinceSpeaking = 0
			params := p.analyzer.Params()
			t := p.now()
			p.emit(h, func() frames.Frame { return &frames.VADUserStartedSpeaking{StartSecs: params.StartSecs, Timestamp: t} })
			if p.period > 0 {
				p.emit(h, func() frames.Frame { return &frames.UserSpeaking{} })
			}
		case state == VADQuiet && p.speaking:
			p.speaking = false
			params := p.analyzer.Params()
			t := p.now()
			p.emit(h, func() frames.Frame { return &frames.VADUserStoppedSpeaking{StopSecs: params.StopSecs, Timestamp: t} })
		case p.speaking && p.period > 0:
			p.sinceSpeaking += n / 2
			if p.sinceSpeaking >= p.periodSamples {
				p.sinceSpeaking = 0
				p.emit(h, func() frames.Frame { return &frames.UserSpeaking{} })
			}
		}
	}
}

func (p *VADProcessor) emit(h *pipeline.Handle, mk func() frames.Frame) {
	if p.down {
		h.Push(mk(), frames.Downstream)
		return
	}
	pipeline.Broadcast(h, mk)
}
