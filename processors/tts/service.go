package tts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/outage"
	"github.com/framewire/framewire/pipeline"
)

// Aggregation names used in [frames.TTSText.AggregatedBy].
const (
	AggregatedBySentence = "sentence"
	AggregatedByWord     = "word"
)

// DefaultFrameDuration is the longest audio one [frames.TTSAudioRaw] frame
// carries by default.
const DefaultFrameDuration = 40 * time.Millisecond

// Options configure a [Service]. The zero value is ready to use.
type Options struct {
	// Name is the processor's display name. Default: "TTSService#<id>".
	Name string
	// FrameDuration caps the audio of one frames.TTSAudioRaw. Shorter
	// frames let the output transport release word text closer to its
	// audio. Default: DefaultFrameDuration.
	FrameDuration time.Duration
	// Transform rewrites each sentence right before synthesis (for example
	// to drop markdown); the frames.TTSText frames keep the original text.
	Transform func(string) string
	// MaxSentenceBytes cuts sentences without an end past this length (see
	// SentenceAggregator.MaxBytes). Default: DefaultMaxSentenceBytes.
	MaxSentenceBytes int
	// AudioTimeout bounds the wait for a request's first audio and the
	// gap between two chunks of it. A synthesizer that takes longer has
	// failed: the request is cancelled and its text goes out unspoken.
	// Default: DefaultAudioTimeout; negative waits for ever.
	AudioTimeout time.Duration
}

// DefaultAudioTimeout is the default of Options.AudioTimeout.
const DefaultAudioTimeout = 15 * time.Second

// errNoAudio is the cause of a request cancelled by Options.AudioTimeout.
var errNoAudio = errors.New("no audio in time")

// Service is the text-to-speech processor. It collects the text of LLM
// answers ([frames.LLMText], [frames.Text]) into sentences and synthesizes
// each with its [Synthesizer] as a job that holds the ordered lane, so the
// frames behind it wait their turn. Each request produces
// [frames.TTSStarted], [frames.TTSAudioRaw] frames resampled to the
// pipeline's output rate ([frames.Start].AudioOutSampleRate), the spoken
// text as [frames.TTSText] (one per sentence after its audio; or, when the
// synthesizer reports word timestamps, the sentence as a
// [frames.AggregatedText] before its audio and then one TTSText per word in
// step with the audio, each followed by a [frames.AggregatedTextProgress]),
// and [frames.TTSStopped].
//
// [frames.LLMFullResponseEnd] (and End or Stop) flushes the text of an
// unfinished sentence; the frame follows its audio. A [frames.TTSSpeak] is
// spoken verbatim, as one request. Text frames with SkipTTS, or inside a
// response started with SkipTTS, pass through unspoken. The text frames it
// speaks are consumed: downstream sees the TTSText instead.
//
// An interruption cancels the synthesis in flight (the synthesizer closes
// its stream or kills its process), drops the text waiting for a sentence
// end and, through the runtime, the ordered frames queued behind the job,
// keeping uninterruptible ones. TTFB, processing and character-usage
// metrics go downstream as [frames.Metrics] when the task enables them.
type Service struct {
	synth Synthesizer
	opts  Options
	name  string
	words bool
	model string

	log *zap.Logger // set in Setup, before any job runs
	// out runs the synthesizer's warm-up as background work of the task.
	out pipeline.Outlet

	// Owned by the node goroutine.
	agg          SentenceAggregator
	cfg          jobConfig
	skipResponse bool

	initialTTFBSent atomic.Bool
	// outage begins with the first failed request, which tells the user
	// that speech is unavailable, and ends with the next request that
	// gives audio: the user is told once per outage, not per sentence.
	outage outage.Flag
}

// jobConfig is what a synthesis job needs from the node, copied when the
// job starts.
type jobConfig struct {
	outRate       int
	metrics       bool
	usage         bool
	onlyFirstTTFB bool
	name          string
}

// NewService returns a TTS service that speaks through synth.
func NewService(synth Synthesizer, opts Options) *Service {
	if opts.FrameDuration <= 0 {
		opts.FrameDuration = DefaultFrameDuration
	}
	if opts.AudioTimeout == 0 {
		opts.AudioTimeout = DefaultAudioTimeout
	}
	s := &Service{synth: synth, opts: opts, name: opts.Name, log: zap.NewNop()}
	if s.name == "" {
		s.name = fmt.Sprintf("TTSService#%d", frames.NextID())
	}
	if wt, ok := synth.(WordTimer); ok {
		s.words = wt.WordTimestamps()
	}
	if m, ok := synth.(frames.Modeler); ok {
		s.model = m.Model()
	}
	s.agg.MaxBytes = opts.MaxSentenceBytes
	s.cfg = jobConfig{outRate: 24000, name: s.name}
	return s
}

// Name implements [pipeline.Namer].
func (s *Service) Name() string { return s.name }

// Setup implements [pipeline.Setupper]: the synthesizer's warm-up is
// background work of the task, which ends it on Cancel and at teardown and
// waits for it.
func (s *Service) Setup(_ context.Context, su pipeline.Setup) error {
	s.log = su.Logger
	su.Attach(&s.out)
	return nil
}

// Cleanup implements [pipeline.Cleaner]: it closes the synthesizer when it
// is an io.Closer (a websocket client).
func (s *Service) Cleanup(context.Context) error {
	if c, ok := s.synth.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ProcessFrame implements [pipeline.Processor].
func (s *Service) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		if f.AudioOutSampleRate > 0 {
			s.cfg.outRate = f.AudioOutSampleRate
		}
		s.cfg.metrics, s.cfg.usage, s.cfg.onlyFirstTTFB = f.EnableMetrics, f.EnableUsageMetrics, f.ReportOnlyInitialTTFB
		if w, ok := s.synth.(Warmer); ok {
			// Task-scoped work, not a job for the Start frame: the task
			// names it in its log should it ignore its context.
			log := s.log
			_ = s.out.Go("warm-up", func(ctx context.Context) error {
				if err := w.Warm(ctx); err != nil && ctx.Err() == nil {
					log.Warn("tts: warming up the synthesizer failed; the first request will try again", zap.Error(err))
				}
				return nil
			})
		}
		return nil
	case *frames.Interruption:
		s.agg.Reset()
		s.skipResponse = false
		return nil
	}
	if dir != frames.Downstream {
		return nil
	}
	switch f := f.(type) {
	case *frames.LLMFullResponseStart:
		s.skipResponse = f.SkipTTS
	case *frames.LLMText:
		if f.SkipTTS || s.skipResponse {
			return nil
		}
		h.Consume()
		s.add(h, f.Text)
	case *frames.Text:
		if f.SkipTTS || s.skipResponse {
			return nil
		}
		h.Consume()
		s.add(h, f.Text)
	case *frames.TTSSpeak:
		h.Consume()
		texts := s.pending(nil)
		inContext := len(texts) // the pending text counts; a NoContext speak text does not
		if f.Text != "" {
			texts = append(texts, f.Text)
			if !f.NoContext {
				inContext++
			}
		}
		s.speak(h, texts, inContext, nil)
	case *frames.LLMFullResponseEnd:
		s.skipResponse = false
		s.flushBefore(h, f)
	case *frames.End, *frames.Stop:
		s.flushBefore(h, f)
	}
	return nil
}

// add feeds text to the aggregator and speaks the sentences it completed.
func (s *Service) add(h *pipeline.Handle, text string) {
	s.agg.Add(text)
	var texts []string
	for {
		sentence, ok := s.agg.Next()
		if !ok {
			break
		}
		texts = append(texts, sentence)
	}
	if len(texts) > 0 {
		s.speak(h, texts, len(texts), nil)
	}
}

// pending appends the complete sentences and the unfinished rest of the
// aggregator to texts and empties it.
func (s *Service) pending(texts []string) []string {
	for {
		sentence, ok := s.agg.Next()
		if !ok {
			break
		}
		texts = append(texts, sentence)
	}
	if rest := s.agg.Flush(); rest != "" {
		texts = append(texts, rest)
	}
	return texts
}

// flushBefore speaks the text still held, then lets f follow its audio.
func (s *Service) flushBefore(h *pipeline.Handle, f frames.Frame) {
	texts := s.pending(nil)
	if len(texts) == 0 {
		return
	}
	h.Consume()
	s.speak(h, texts, len(texts), f)
}

// speak starts one job that synthesizes texts in order, then pushes after
// downstream. One job per frame keeps the requests sequential: the job
// holds the ordered lane, so the next text frame waits for it. The TTSText
// frames of texts[inContext:] are marked to stay out of the LLM context (a
// TTSSpeak with NoContext).
func (s *Service) speak(h *pipeline.Handle, texts []string, inContext int, after frames.Frame) {
	if len(texts) == 0 {
		if after != nil {
			h.Push(after, frames.Downstream)
		}
		return
	}
	u := &utterance{s: s, cfg: s.cfg, texts: texts, after: after, asideFrom: inContext}
	h.Go(u.run)
}

// utterance is one synthesis job: a few sentences spoken in order.
type utterance struct {
	s     *Service
	cfg   jobConfig
	texts []string
	after frames.Frame
	// asideFrom is the index of the first text whose TTSText frames stay
	// out of the LLM context; len(texts) when none do.
	asideFrom int

	rs      *dsp.Resampler
	scratch []byte
}

func (u *utterance) run(ctx context.Context, out pipeline.Pusher) error {
	for i, text := range u.texts {
		if ctx.Err() != nil {
			break
		}
		u.synthesize(ctx, out, text, i >= u.asideFrom)
	}
	if u.after != nil && (ctx.Err() == nil || frames.IsUninterruptible(u.after)) {
		out.Push(u.after, frames.Downstream)
	}
	return nil
}

// request is the state of one synthesis request inside a job.
type request struct {
	u          *utterance
	out        pipeline.Pusher
	ctxID      string
	aside      bool // TTSText frames get NoContext
	frameBytes int
	pushed     int // bytes of output audio pushed
	words      []Word
	wordsSent  int

	// With word timestamps: the sentence announced before its audio, and
	// how far into its text the spoken words have reached.
	segment *frames.AggregatedText
	cursor  int
}

// synthesize speaks one text; aside marks its TTSText frames to stay out of
// the LLM context.
func (u *utterance) synthesize(ctx context.Context, out pipeline.Pusher, text string, aside bool) {
	s, cfg := u.s, u.cfg
	r := &request{u: u, out: out, ctxID: uuid.NewString(), aside: aside}
	r.frameBytes = dsp.FrameBytes(cfg.outRate, 1, s.opts.FrameDuration)
	if r.frameBytes < 2 {
		r.frameBytes = 2
	}
	spoken := text
	if s.opts.Transform != nil {
		spoken = s.opts.Transform(text)
	}
	out.Push(&frames.TTSStarted{ContextID: r.ctxID}, frames.Downstream)
	if s.words && text != "" {
		// Announce the sentence before its audio; the words that follow
		// report their progress through it (bot-output "new", then
		// progress, for RTVI 2.x clients).
		r.segment = &frames.AggregatedText{Text: text, AggregatedBy: AggregatedBySentence, ContextID: r.ctxID, WillBeSpoken: true}
		out.Push(r.segment, frames.Downstream)
	}
	if cfg.usage {
		u.metric(out, frames.Metric{Kind: frames.MetricTTSUsage, Characters: utf8.RuneCountInString(spoken)})
	}
	began := time.Now()
	firstAudio := true
	var failure error
	if spoken != "" {
		inRate := 0
		sctx, cancel := context.WithCancelCause(ctx)
		var timer *time.Timer
		if d := s.opts.AudioTimeout; d > 0 {
			timer = time.AfterFunc(d, func() { cancel(errNoAudio) })
		}
		for chunk, err := range s.synth.Synthesize(sctx, Request{Text: spoken, ContextID: r.ctxID, SampleRate: cfg.outRate}) {
			if ctx.Err() != nil {
				break
			}
			if err != nil {
				failure = err
				break
			}
			if timer != nil {
				timer.Reset(s.opts.AudioTimeout)
			}
			if len(chunk.Audio) > 0 {
				if chunk.SampleRate <= 0 {
					failure = fmt.Errorf("tts: synthesizer sent audio without a sample rate")
					break
				}
				if firstAudio {
					firstAudio = false
					if cfg.metrics && (!cfg.onlyFirstTTFB || s.initialTTFBSent.CompareAndSwap(false, true)) {
						u.metric(out, frames.Metric{Kind: frames.MetricTTFB, Value: time.Since(began)})
					}
				}
				if chunk.SampleRate != inRate {
					if err := u.resampler(r, inRate, chunk.SampleRate); err != nil {
						failure = err
						break
					}
					inRate = chunk.SampleRate
				}
				u.scratch = u.rs.Resample(u.scratch[:0], chunk.Audio)
				r.emit(u.scratch)
			}
			if len(chunk.Words) > 0 {
				r.words = append(r.words, chunk.Words...)
				r.release(false)
			}
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() == nil && context.Cause(sctx) == errNoAudio {
			failure = fmt.Errorf("%w within %v", errNoAudio, s.opts.AudioTimeout)
		}
		cancel(nil)
		if ctx.Err() == nil && u.rs != nil {
			u.scratch = u.rs.Flush(u.scratch[:0])
			r.emit(u.scratch)
		}
	}
	if ctx.Err() != nil {
		if u.rs != nil {
			u.rs.Reset()
		}
		return // interrupted: nothing more from this request
	}
	if failure != nil {
		s.failed(out, fmt.Errorf("tts: synthesizing %q: %w", clip(spoken), failure))
	} else if r.pushed > 0 {
		s.outage.Succeed()
	}
	switch {
	case s.words && r.wordsSent+len(r.words) > 0:
		r.release(true)
	case text != "":
		// Text whose audio never came goes out unspoken: the client shows
		// it at once instead of waiting for speech.
		unspoken := failure != nil && r.pushed == 0
		out.Push(&frames.TTSText{Text: text, AggregatedBy: AggregatedBySentence, ContextID: r.ctxID, NoContext: r.aside, Unspoken: unspoken}, frames.Downstream)
	}
	if cfg.metrics {
		u.metric(out, frames.Metric{Kind: frames.MetricProcessing, Value: time.Since(began)})
	}
	out.Push(&frames.TTSStopped{ContextID: r.ctxID}, frames.Downstream)
}

// failed reports a failed request: the first failure of an outage goes
// upstream as an error that tells the user speech is unavailable; the
// ones after it, until a request gives audio again, only reach the log.
func (s *Service) failed(out pipeline.Pusher, err error) {
	if !s.outage.Fail() {
		s.log.Warn("tts: speech still unavailable; the text goes out unspoken", zap.Error(err))
		return
	}
	out.PushError(&frames.Error{Err: err, Category: frames.CategoryOf(err), Subject: "Speech output"})
}

// resampler prepares the resampler for audio at rate, flushing what the
// previous one held when the rate changes mid-request.
func (u *utterance) resampler(r *request, oldRate, rate int) error {
	if u.rs != nil && oldRate != 0 {
		u.scratch = u.rs.Flush(u.scratch[:0])
		r.emit(u.scratch)
	}
	if u.rs != nil && u.rs.InRate() == rate {
		u.rs.Reset()
		return nil
	}
	rs, err := dsp.NewResampler(rate, u.cfg.outRate, 1, dsp.ResamplerOptions{})
	if err != nil {
		return fmt.Errorf("tts: synthesizer audio at %d Hz: %w", rate, err)
	}
	u.rs = rs
	return nil
}

func (u *utterance) metric(out pipeline.Pusher, m frames.Metric) {
	m.Processor, m.Model = u.cfg.name, u.s.model
	out.Push(&frames.Metrics{Data: []frames.Metric{m}}, frames.Downstream)
}

// emit pushes pcm (output-rate audio) as frames of at most frameBytes that
// share one copy of the samples, releasing the words they reach.
func (r *request) emit(pcm []byte) {
	if len(pcm) == 0 {
		return
	}
	buf := make([]byte, len(pcm))
	copy(buf, pcm)
	rate := r.u.cfg.outRate
	for len(buf) > 0 {
		n := min(len(buf), r.frameBytes)
		f := &frames.TTSAudioRaw{Audio: frames.Audio{PCM: buf[:n:n], SampleRate: rate, Channels: 1}, ContextID: r.ctxID}
		r.out.Push(f, frames.Downstream)
		buf = buf[n:]
		r.pushed += n
		if len(r.words) > 0 {
			r.release(false)
		}
	}
}

// release pushes the words whose start the pushed audio has reached (all of
// them when all is set), so the output transport plays each word's text
// with its audio.
func (r *request) release(all bool) {
	played := time.Duration(int64(r.pushed/2) * int64(time.Second) / int64(r.u.cfg.outRate))
	i := 0
	for ; i < len(r.words); i++ {
		w := r.words[i]
		if !all && w.Start > played {
			break
		}
		if w.Text != "" {
			r.out.Push(&frames.TTSText{Text: w.Text, AggregatedBy: AggregatedByWord, ContextID: r.ctxID, NoContext: r.aside}, frames.Downstream)
			r.progress(w.Text, all && i == len(r.words)-1)
		}
	}
	r.wordsSent += i
	r.words = append(r.words[:0], r.words[i:]...)
}

// progress moves the segment's cursor past word (when the word is found in
// the sentence; a word the engine spelled differently leaves it) and
// reports how much of the sentence has been spoken. last completes it.
func (r *request) progress(word string, last bool) {
	seg := r.segment
	if seg == nil {
		return
	}
	text := seg.Text
	if k := strings.Index(text[r.cursor:], word); k >= 0 {
		r.cursor += k + len(word)
	}
	if last {
		r.cursor = len(text)
	}
	// Closing punctuation right after the word belongs to it.
	for r.cursor < len(text) && strings.IndexByte(".,!?;:)]}\"'", text[r.cursor]) >= 0 {
		r.cursor++
	}
	r.out.Push(&frames.AggregatedTextProgress{
		Text: text, AggregatedBy: seg.AggregatedBy, SegmentID: seg.ID(),
		AccumulatedText: text[:r.cursor], RemainingText: strings.TrimLeft(text[r.cursor:], " "),
	}, frames.Downstream)
}

// clip shortens text for error messages.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
