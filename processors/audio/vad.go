package audio

import (
	"fmt"
	"math"
	"time"

	"github.com/framewire/framewire/dsp"
)

// VADState is where a voice activity detector is in Pipecat's four-state
// machine. Only Quiet and Speaking are reported as events; Starting and
// Stopping are the waits of StartSecs and StopSecs in between.
type VADState uint8

const (
	// VADQuiet means no voice.
	VADQuiet VADState = iota
	// VADStarting means voice has been heard for less than StartSecs.
	VADStarting
	// VADSpeaking means voice has been heard for at least StartSecs.
	VADSpeaking
	// VADStopping means no voice for less than StopSecs after speaking.
	VADStopping
)

func (s VADState) String() string {
	switch s {
	case VADQuiet:
		return "quiet"
	case VADStarting:
		return "starting"
	case VADSpeaking:
		return "speaking"
	case VADStopping:
		return "stopping"
	}
	return fmt.Sprintf("VADState(%d)", uint8(s))
}

// Default VAD parameters. They are Pipecat's current VADParams defaults
// (docs/decisions/audio-vad.md explains the stop time).
const (
	DefaultVADConfidence = 0.7
	DefaultVADStartSecs  = 0.2
	DefaultVADStopSecs   = 0.2
	DefaultVADMinVolume  = 0.6
)

// maxRate is the highest sample rate a VAD accepts, the resampler's limit.
const maxRate = 1_000_000

// VADParams are the knobs of the start/stop state machine, as in Pipecat.
// The zero value means [DefaultVADParams]; a value with any field set is used
// as given.
type VADParams struct {
	// Confidence is the voice confidence (0 to 1) a window needs to count as
	// speech.
	Confidence float64
	// StartSecs is how long speech must last before the user is said to
	// have started speaking.
	StartSecs float64
	// StopSecs is how long silence must last before the user is said to
	// have stopped speaking.
	StopSecs float64
	// MinVolume is the smoothed volume (0 to 1, see [VAD.Volume]) a window
	// needs to count as speech.
	MinVolume float64
}

// DefaultVADParams returns confidence 0.7, start 0.2 s, stop 0.2 s and
// minimum volume 0.6.
func DefaultVADParams() VADParams {
	return VADParams{
		Confidence: DefaultVADConfidence,
		StartSecs:  DefaultVADStartSecs,
		StopSecs:   DefaultVADStopSecs,
		MinVolume:  DefaultVADMinVolume,
	}
}

// VADAnalyzer detects voice in a stream of mono 16-bit PCM. The
// [VADProcessor] drives one; [VAD] is the default implementation, and a
// model-based detector can implement it instead.
type VADAnalyzer interface {
	// SetSampleRate prepares the analyzer for audio at rate Hz and resets
	// its state.
	SetSampleRate(rate int) error
	// WindowFrames returns the number of samples the analyzer looks at at
	// once, at the current rate. Audio is buffered until a window is full.
	WindowFrames() int
	// Analyze consumes mono 16-bit little-endian PCM of any length,
	// analyses every window it completes, keeps the rest for the next
	// call, and returns the state after the last complete window.
	Analyze(pcm []byte) VADState
	// Params returns the parameters in use.
	Params() VADParams
}

// VoiceScorer rates one window of audio for voice. [VAD] turns its scores
// into states; [SpeechBandScorer] is the default.
type VoiceScorer interface {
	// Reset prepares the scorer for a new stream at sampleRate.
	Reset(sampleRate int)
	// Confidence returns how much window (mono samples) sounds like voice,
	// from 0 to 1. It must not keep window.
	Confidence(window []int16) float64
}

// VADOptions configure a [VAD]. The zero value is ready to use.
type VADOptions struct {
	// Params are the state machine's parameters. Zero: DefaultVADParams().
	Params VADParams
	// Scorer rates windows for voice. Default: a new [SpeechBandScorer].
	Scorer VoiceScorer
	// Window is the length of audio analysed at once. Default: 10 ms.
	Window time.Duration
	// SampleRate is the initial sample rate. Default: 16000.
	SampleRate int
}

// volumeSmoothing is Pipecat's exponential smoothing factor for volume, per
// volumeSmoothingWindow (the 512-sample window of Silero at 16 kHz); VAD
// scales it to its own window so the volume follows the same time constant.
const (
	volumeSmoothing       = 0.2
	volumeSmoothingWindow = 0.032
)

// VAD is Pipecat's voice activity state machine over a [VoiceScorer]: each
// window counts as speech when its confidence reaches Params.Confidence and
// its smoothed volume reaches Params.MinVolume; StartSecs of speech windows
// in a row move Quiet to Speaking, StopSecs of non-speech windows in a row
// move Speaking to Quiet, and a single window of the other kind in between
// cancels the move.
//
// Unlike Pipecat, the start and stop counts are checked after every window
// rather than once per call, so the result does not depend on how the audio
// was chunked. A VAD is not safe for concurrent use. It does not allocate
// once its window buffer has been made.
type VAD struct {
	params VADParams
	scorer VoiceScorer
	window time.Duration

	rate         int
	winFrames    int
	startWindows int
	stopWindows  int

	buf        []int16 // the window being filled
	sum, sq    float64 // sum and sum of squares of buf
	odd        byte    // the first byte of a split sample...
	hasOdd     bool    // ... when there is one
	state      VADState
	startCount int
	stopCount  int
	prevVolume float64
	release    float64 // volume smoothing factor when the volume falls
	confidence float64
	volume     float64
	windows    int64
}

// NewVAD returns a VAD at opts.SampleRate (16 kHz by default).
func NewVAD(opts VADOptions) (*VAD, error) {
	if opts.Params == (VADParams{}) {
		opts.Params = DefaultVADParams()
	}
	p := opts.Params
	if !(p.Confidence >= 0 && p.Confidence <= 1 && p.MinVolume >= 0 && p.MinVolume <= 1 &&
		p.StartSecs >= 0 && p.StartSecs <= 3600 && p.StopSecs >= 0 && p.StopSecs <= 3600) {
		return nil, fmt.Errorf("audio: invalid VAD params %+v: confidence and min volume must be in [0,1], times in [0,3600] s", p)
	}
	if opts.Scorer == nil {
		opts.Scorer = &SpeechBandScorer{}
	}
	if opts.Window == 0 {
		opts.Window = 10 * time.Millisecond
	}
	if opts.Window < time.Millisecond || opts.Window > time.Second {
		return nil, fmt.Errorf("audio: VAD window %v, want 1ms to 1s", opts.Window)
	}
	if opts.SampleRate == 0 {
		opts.SampleRate = 16000
	}
	v := &VAD{params: p, scorer: opts.Scorer, window: opts.Window}
	if err := v.SetSampleRate(opts.SampleRate); err != nil {
		return nil, err
	}
	return v, nil
}

// SetSampleRate implements [VADAnalyzer].
func (v *VAD) SetSampleRate(rate int) error {
	if rate < 1000 || rate > maxRate {
		return fmt.Errorf("audio: VAD sample rate %d Hz, want 1000 to %d", rate, maxRate)
	}
	v.rate = rate
	v.winFrames = max(1, int(int64(rate)*int64(v.window)/int64(time.Second)))
	windowSecs := float64(v.winFrames) / float64(rate)
	v.startWindows = int(math.Round(v.params.StartSecs / windowSecs))
	v.stopWindows = int(math.Round(v.params.StopSecs / windowSecs))
	v.release = 1 - math.Pow(1-volumeSmoothing, windowSecs/volumeSmoothingWindow)
	if cap(v.buf) < v.winFrames {
		v.buf = make([]int16, 0, v.winFrames)
	}
	v.Reset()
	return nil
}

// Reset forgets the stream: state Quiet, no buffered audio, volume 0.
func (v *VAD) Reset() {
	v.buf = v.buf[:0]
	v.sum, v.sq = 0, 0
	v.hasOdd = false
	v.state = VADQuiet
	v.startCount, v.stopCount = 0, 0
	v.prevVolume, v.confidence, v.volume = 0, 0, 0
	v.windows = 0
	v.scorer.Reset(v.rate)
}

// WindowFrames implements [VADAnalyzer].
func (v *VAD) WindowFrames() int { return v.winFrames }

// Params implements [VADAnalyzer].
func (v *VAD) Params() VADParams { return v.params }

// SampleRate returns the current sample rate.
func (v *VAD) SampleRate() int { return v.rate }

// State returns the state after the last complete window.
func (v *VAD) State() VADState { return v.state }

// Confidence returns the scorer's confidence for the last complete window.
func (v *VAD) Confidence() float64 { return v.confidence }

// Volume returns the smoothed volume after the last complete window, from
// 0 to 1: an approximate loudness (RMS in dBFS, without BS.1770's
// K-weighting) mapped from -110..-10 onto 0..1 as Pipecat maps its
// loudness, then smoothed exponentially: rising with Pipecat's factor 0.2
// per window, falling with Pipecat's time constant (0.2 per 32 ms), so a
// short gap between words does not close the gate. MinVolume 0.6 is about
// -50 dBFS.
func (v *VAD) Volume() float64 { return v.volume }

// Windows returns how many windows have been analysed since the last reset.
func (v *VAD) Windows() int64 { return v.windows }

// Analyze implements [VADAnalyzer].
func (v *VAD) Analyze(pcm []byte) VADState {
	if v.hasOdd && len(pcm) > 0 {
		v.push(int16(uint16(v.odd) | uint16(pcm[0])<<8))
		v.hasOdd = false
		pcm = pcm[1:]
	}
	n := len(pcm) / 2
	for i := 0; i < n; {
		take := min(v.winFrames-len(v.buf), n-i)
		start := len(v.buf)
		v.buf = v.buf[:start+take]
		dst := v.buf[start:]
		src := pcm[2*i : 2*(i+take)]
		src = src[:2*len(dst)]
		sum, sq := v.sum, v.sq
		for j := range dst {
			x := int16(uint16(src[2*j]) | uint16(src[2*j+1])<<8)
			dst[j] = x
			f := float64(x)
			sum += f
			sq += f * f
		}
		v.sum, v.sq = sum, sq
		i += take
		if len(v.buf) == v.winFrames {
			v.analyzeWindow()
		}
	}
	if len(pcm)%2 == 1 {
		v.odd, v.hasOdd = pcm[len(pcm)-1], true
	}
	return v.state
}

func (v *VAD) push(s int16) {
	v.buf = append(v.buf, s)
	v.sum += float64(s)
	v.sq += float64(s) * float64(s)
	if len(v.buf) == v.winFrames {
		v.analyzeWindow()
	}
}

func (v *VAD) analyzeWindow() {
	w := v.buf
	v.buf = v.buf[:0]
	sum, sq := v.sum, v.sq
	v.sum, v.sq = 0, 0
	v.windows++
	v.confidence = v.scorer.Confidence(w)
	raw := windowVolume(sum, sq, len(w))
	alpha := volumeSmoothing
	if raw < v.prevVolume {
		alpha = v.release
	}
	v.volume = v.prevVolume + alpha*(raw-v.prevVolume)
	v.prevVolume = v.volume

	speaking := v.confidence >= v.params.Confidence && v.volume >= v.params.MinVolume
	if speaking {
		switch v.state {
		case VADQuiet:
			v.state, v.startCount = VADStarting, 1
		case VADStarting:
			v.startCount++
		case VADStopping:
			v.state, v.stopCount = VADSpeaking, 0
		}
	} else {
		switch v.state {
		case VADStarting:
			v.state, v.startCount = VADQuiet, 0
		case VADSpeaking:
			v.state, v.stopCount = VADStopping, 1
		case VADStopping:
			v.stopCount++
		}
	}
	if v.state == VADStarting && v.startCount >= v.startWindows {
		v.state, v.startCount = VADSpeaking, 0
	}
	if v.state == VADStopping && v.stopCount >= v.stopWindows {
		v.state, v.stopCount = VADQuiet, 0
	}
}

// windowVolume maps a window's RMS level (DC removed), given the sum and the
// sum of squares of its n samples, from -110..-10 dBFS onto 0..1.
func windowVolume(sum, sq float64, n int) float64 {
	if n == 0 {
		return 0
	}
	fn := float64(n)
	ms := (sq - sum*sum/fn) / fn / (32768 * 32768)
	if ms <= 0 {
		return 0
	}
	db := 10 * math.Log10(ms)
	return min(1, max(0, (db+110)/100))
}

// SpeechBandScorer is the default [VoiceScorer]: cheap, deterministic, and
// free of models. A window sounds like voice when most of its energy lies
// in the speech band (200 Hz to 4 kHz, two second-order filters) and its
// zero-crossing rate is that of voiced sound rather than of hiss. It tells
// speech from silence, hum, hiss and white noise; like any energy detector
// it also takes a steady tone inside the speech band (a whistle, a 440 Hz
// test tone) for voice, which makes tones handy test stimuli. At 8 kHz the
// band check is weaker because the band fills most of the spectrum.
//
// The zero value is ready; [VAD] calls Reset before the first window.
type SpeechBandScorer struct {
	hp, lp  biquad
	rate    int
	prev    float64 // last confidence returned, for the hold
	lastNeg bool    // sign of the last high-passed sample

	// The noise floor is the quietest window of the last floorBlocks
	// blocks: blocks[i] is the minimum band level (dB) of block i.
	blocks      [floorBlocks]float64
	block       int // index of the block being filled
	blockFill   int // windows in it so far
	blockLength int // windows per block
}

// Speech band limits and the score ramps of [SpeechBandScorer], tuned on
// espeak-ng speech against white, pink and brown noise (see
// docs/decisions/audio-vad.md).
const (
	speechLowHz      = 200.0
	speechHighHz     = 4000.0
	bandRatioFloor   = 0.50 // share of the energy in the speech band scoring 0
	bandRatioFull    = 0.80 // ... and scoring 1
	zeroCrossingFull = 0.25 // crossings per sample up to which the score is 1
	zeroCrossingNone = 0.45 // ... and from which it is 0 (white noise is 0.5)
	holdDecayPerSec  = 1.9  // confidence 1 stays at 0.7 or more for 150 ms of non-voice
	floorBlocks      = 15   // the noise floor looks back 15 blocks...
	floorBlockSecs   = 0.1  // ... of 100 ms
	snrFloorDB       = 6.0  // band level above the noise floor scoring 0
	snrFullDB        = 12.0 // ... and scoring 1
)

// Reset implements [VoiceScorer].
func (s *SpeechBandScorer) Reset(sampleRate int) {
	s.rate = sampleRate
	s.hp = newHighPass(speechLowHz, float64(sampleRate))
	s.lp = newLowPass(min(speechHighHz, 0.45*float64(sampleRate)), float64(sampleRate))
	s.prev = 0
	s.lastNeg = false
	for i := range s.blocks {
		s.blocks[i] = math.Inf(1)
	}
	s.block, s.blockFill, s.blockLength = 0, 0, 0
}

// Confidence implements [VoiceScorer].
func (s *SpeechBandScorer) Confidence(w []int16) float64 {
	if s.rate == 0 {
		s.Reset(16000)
	}
	ratio, zcr, level := s.features(w)
	snr := level - s.noiseFloor(level, len(w))
	band := (ratio - bandRatioFloor) / (bandRatioFull - bandRatioFloor)
	cross := (zeroCrossingNone - zcr) / (zeroCrossingNone - zeroCrossingFull)
	loud := (snr - snrFloorDB) / (snrFullDB - snrFloorDB)
	c := min(1, max(0, band)) * min(1, max(0, cross)) * min(1, max(0, loud))
	// Hold: confidence falls back slowly after voiced sound, so the short
	// unvoiced stretches inside words (s, f, t) do not break a run.
	decay := holdDecayPerSec * float64(len(w)) / float64(s.rate)
	c = max(c, s.prev-decay)
	s.prev = c
	return c
}

// noiseFloor records the window's band level and returns the quietest band
// level of the last 1.5 s, this window included.
func (s *SpeechBandScorer) noiseFloor(level float64, frames int) float64 {
	if s.blockLength == 0 {
		s.blockLength = max(1, int(math.Round(floorBlockSecs*float64(s.rate)/float64(frames))))
	}
	if s.blockFill == s.blockLength {
		s.block = (s.block + 1) % floorBlocks
		s.blocks[s.block] = math.Inf(1)
		s.blockFill = 0
	}
	s.blockFill++
	s.blocks[s.block] = min(s.blocks[s.block], level)
	floor := s.blocks[0]
	for _, b := range s.blocks[1:] {
		floor = min(floor, b)
	}
	return floor
}

// features returns the share of the window's energy (DC removed) in the
// speech band, the zero-crossing rate of the high-passed signal, and the
// band level in dBFS.
func (s *SpeechBandScorer) features(w []int16) (ratio, zcr, level float64) {
	if len(w) == 0 {
		return 0, 0, dsp.MinDBFS
	}
	var sum, total, band float64
	crossings := 0
	prevNeg := s.lastNeg
	// The two filters run on local copies of their coefficients and state,
	// which the compiler keeps in registers.
	hb0, hb1, hb2, ha1, ha2, hz1, hz2 := s.hp.b0, s.hp.b1, s.hp.b2, s.hp.a1, s.hp.a2, s.hp.z1, s.hp.z2
	lb0, lb1, lb2, la1, la2, lz1, lz2 := s.lp.b0, s.lp.b1, s.lp.b2, s.lp.a1, s.lp.a2, s.lp.z1, s.lp.z2
	for _, v := range w {
		x := float64(v)
		sum += x
		total += x * x
		h := hb0*x + hz1
		hz1 = hb1*x - ha1*h + hz2
		hz2 = hb2*x - ha2*h
		y := lb0*h + lz1
		lz1 = lb1*h - la1*y + lz2
		lz2 = lb2*h - la2*y
		band += y * y
		neg := h < 0
		if neg != prevNeg {
			crossings++
		}
		prevNeg = neg
	}
	s.hp.z1, s.hp.z2, s.lp.z1, s.lp.z2 = hz1, hz2, lz1, lz2
	s.lastNeg = prevNeg
	n := float64(len(w))
	total -= sum * sum / n
	level = dsp.ToDBFS(math.Sqrt(band/n) / 32768)
	if total <= n { // below about -90 dBFS: nothing to judge
		return 0, 0, level
	}
	return min(1, band/total), float64(crossings) / n, level
}

// biquad is a second-order IIR section (RBJ cookbook coefficients,
// transposed direct form II).
type biquad struct {
	b0, b1, b2, a1, a2 float64
	z1, z2             float64
}

func newLowPass(f, rate float64) biquad {
	w := 2 * math.Pi * f / rate
	c, alpha := math.Cos(w), math.Sin(w)/math.Sqrt2
	a0 := 1 + alpha
	return biquad{b0: (1 - c) / 2 / a0, b1: (1 - c) / a0, b2: (1 - c) / 2 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0}
}

func newHighPass(f, rate float64) biquad {
	w := 2 * math.Pi * f / rate
	c, alpha := math.Cos(w), math.Sin(w)/math.Sqrt2
	a0 := 1 + alpha
	return biquad{b0: (1 + c) / 2 / a0, b1: -(1 + c) / a0, b2: (1 + c) / 2 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0}
}
