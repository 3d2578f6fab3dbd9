package stt

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/outage"
	"github.com/framewire/framewire/pipeline"
)

// Defaults of [SegmentedOptions].
const (
	DefaultPreSpeech    = time.Second
	DefaultMaxUtterance = 60 * time.Second
)

// SegmentedOptions configure a [Segmented] service. The zero value is
// ready to use.
type SegmentedOptions struct {
	// Name is the processor's display name. Default: "SegmentedSTT#<id>".
	Name string
	// UserID is put on transcriptions when the audio frames name no user.
	UserID string
	// Language is the BCP 47 tag sent to the transcriber and put on
	// transcriptions whose result names no language. Default: none
	// (the service detects it).
	Language string
	// PreSpeech is how much audio from before the VAD's start is kept, so
	// the utterance includes the start the VAD needed to decide (its
	// start delay) and a little more. Default: DefaultPreSpeech.
	PreSpeech time.Duration
	// MaxUtterance bounds the audio held for one request: past it, the
	// audio so far is sent and a new segment begins. Default:
	// DefaultMaxUtterance.
	MaxUtterance time.Duration
	// Now stamps transcriptions. Default: time.Now.
	Now func() time.Time
}

// Segmented is the speech-to-text processor for services that transcribe
// a whole utterance per request (Whisper-style HTTP APIs). It buffers the
// user's [frames.InputAudioRaw] between [frames.VADUserStartedSpeaking]
// and [frames.VADUserStoppedSpeaking] (plus PreSpeech before the start),
// and when the user stops sends the utterance to its [Transcriber] as a
// job, then pushes a [frames.Transcription] downstream with the user id,
// an ISO 8601 timestamp and the language. Audio and every other frame pass
// through.
//
// Requests may overlap (the user speaks again before the answer), but
// their transcriptions are pushed in the order the utterances ended. An
// interruption does not cancel a request: the user's words are still
// wanted. End waits for the requests in flight, and transcribes audio the
// user was still speaking. TTFB (from the VAD stop to the answer) and
// audio-seconds usage metrics go downstream when the task enables them.
type Segmented struct {
	t    Transcriber
	opts SegmentedOptions
	name string
	log  *zap.Logger
	// outage begins with the first failed request, which tells the client
	// that speech recognition failed, and ends with the next success: the
	// client is told once per outage, not per utterance.
	outage outage.Flag

	// Owned by the node goroutine.
	metrics, usage bool
	rate, channels int
	buf            []byte
	speaking       bool
	userID         string
	last           chan struct{} // closed when the latest request has pushed its result
}

// NewSegmented returns a segmented STT service that transcribes with t.
func NewSegmented(t Transcriber, opts SegmentedOptions) *Segmented {
	if opts.PreSpeech <= 0 {
		opts.PreSpeech = DefaultPreSpeech
	}
	if opts.MaxUtterance <= 0 {
		opts.MaxUtterance = DefaultMaxUtterance
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Segmented{t: t, opts: opts, name: opts.Name, log: zap.NewNop()}
	if s.name == "" {
		s.name = fmt.Sprintf("SegmentedSTT#%d", frames.NextID())
	}
	return s
}

// Name implements [pipeline.Namer].
func (s *Segmented) Name() string { return s.name }

// ProcessFrame implements [pipeline.Processor].
func (s *Segmented) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		s.metrics, s.usage = f.EnableMetrics, f.EnableUsageMetrics
		s.log = h.Logger()
	case *frames.InputAudioRaw:
		s.audio(h, f)
	case *frames.VADUserStartedSpeaking:
		s.speaking = true
		if keep := dsp.FrameBytes(s.rate, s.channels, s.opts.PreSpeech); len(s.buf) > keep {
			n := copy(s.buf, s.buf[len(s.buf)-keep:])
			s.buf = s.buf[:n]
		}
	case *frames.VADUserStoppedSpeaking:
		if s.speaking {
			s.speaking = false
			s.send(h, nil)
		}
	case *frames.End:
		if s.speaking && len(s.buf) > 0 {
			s.speaking = false
			h.Consume()
			s.send(h, f)
		}
	}
	return nil
}

func (s *Segmented) audio(h *pipeline.Handle, f *frames.InputAudioRaw) {
	if f.SampleRate <= 0 || f.Channels <= 0 {
		return
	}
	if f.UserID != "" {
		s.userID = f.UserID
	}
	if f.SampleRate != s.rate || f.Channels != s.channels {
		if len(s.buf) > 0 && s.speaking {
			s.send(h, nil) // what was said in the old format
		}
		s.rate, s.channels, s.buf = f.SampleRate, f.Channels, s.buf[:0]
	}
	s.buf = append(s.buf, f.PCM...)
	if !s.speaking {
		keep := dsp.FrameBytes(s.rate, s.channels, s.opts.PreSpeech)
		// Trim in bulk, so the copy is paid once per PreSpeech of audio.
		if len(s.buf) > 2*keep {
			n := copy(s.buf, s.buf[len(s.buf)-keep:])
			s.buf = s.buf[:n]
		}
		return
	}
	if len(s.buf) >= dsp.FrameBytes(s.rate, s.channels, s.opts.MaxUtterance) {
		s.log.Info("stt: utterance reached the maximum length; sending it and starting another", zap.Duration("max", s.opts.MaxUtterance))
		s.send(h, nil)
	}
}

// send starts a request for the buffered utterance; after, if set, is
// pushed downstream once its transcription is.
func (s *Segmented) send(h *pipeline.Handle, after frames.Frame) {
	pcm := s.buf
	s.buf = make([]byte, 0, cap(pcm))
	if len(pcm) == 0 {
		if after != nil {
			h.Push(after, frames.Downstream)
		}
		return
	}
	r := &request{
		s: s, metrics: s.metrics, usage: s.usage, after: after,
		u:      Utterance{PCM: pcm, SampleRate: s.rate, Channels: s.channels, Language: s.opts.Language},
		userID: s.userID, prev: s.last, done: make(chan struct{}),
	}
	if r.userID == "" {
		r.userID = s.opts.UserID
	}
	s.last = r.done
	h.Go(r.run)
}

// request is one transcription job.
type request struct {
	s              *Segmented
	u              Utterance
	userID         string
	metrics, usage bool
	after          frames.Frame
	prev           <-chan struct{}
	done           chan struct{}
}

func (r *request) run(ctx context.Context, out pipeline.Pusher) error {
	defer close(r.done)
	s := r.s
	began := time.Now()
	res, err := s.t.Transcribe(ctx, r.u)
	took := time.Since(began)
	// Keep the order in which the utterances ended.
	if r.prev != nil {
		select {
		case <-r.prev:
		case <-ctx.Done():
			return nil
		}
	}
	if r.after != nil {
		defer out.Push(r.after, frames.Downstream)
	}
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		err = fmt.Errorf("stt: transcribing %v of audio: %w", r.u.Duration().Round(time.Millisecond), err)
		if s.outage.Fail() {
			out.PushError(recognitionError(err))
		} else {
			s.log.Warn("stt: speech recognition still failing", zap.Error(err))
		}
		return nil
	}
	s.outage.Succeed()
	var data []frames.Metric
	if r.metrics {
		data = append(data, frames.Metric{Kind: frames.MetricTTFB, Processor: s.name, Model: model(s.t), Value: took})
	}
	if r.usage {
		data = append(data, frames.Metric{Kind: frames.MetricSTTUsage, Processor: s.name, Model: model(s.t), AudioSeconds: r.u.Duration().Seconds()})
	}
	if len(data) > 0 {
		out.Push(&frames.Metrics{Data: data}, frames.Downstream)
	}
	text := clean(res.Text)
	if text == "" {
		return nil
	}
	lang := res.Language
	if lang == "" {
		lang = s.opts.Language
	}
	out.Push(&frames.Transcription{
		Text: text, UserID: r.userID, Timestamp: Timestamp(s.opts.Now()), Language: lang, Finalized: true,
	}, frames.Downstream)
	return nil
}

// model names the model of a transcriber or streamer that implements
// [frames.Modeler], for metrics.
func model(v any) string {
	if m, ok := v.(frames.Modeler); ok {
		return m.Model()
	}
	return ""
}
