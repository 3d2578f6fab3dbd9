package stt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// Defaults of [StreamingOptions].
const (
	DefaultKeepAlive           = 5 * time.Second
	DefaultMaxBuffered         = 5 * time.Second
	DefaultReconnectBackoff    = 250 * time.Millisecond
	DefaultMaxReconnectBackoff = 10 * time.Second
	DefaultCloseTimeout        = 2 * time.Second
)

// StreamingOptions configure a [Streaming] service. The zero value is
// ready to use.
type StreamingOptions struct {
	// Name is the processor's display name. Default: "StreamingSTT#<id>".
	Name string
	// UserID is put on transcriptions when the audio frames name no user.
	UserID string
	// Language is put on transcriptions whose result names no language.
	Language string
	// KeepAlive is how long the session may go without audio before the
	// service sends a keep-alive. Default: DefaultKeepAlive.
	KeepAlive time.Duration
	// MaxBuffered bounds the audio held while the session is (re)connecting
	// or slow; past it the oldest audio is dropped and counted. Default:
	// DefaultMaxBuffered.
	MaxBuffered time.Duration
	// ReconnectBackoff is the wait before the first reconnection attempt;
	// it doubles after each failure up to MaxReconnectBackoff, and starts
	// over once a session has delivered a result. Defaults:
	// DefaultReconnectBackoff, DefaultMaxReconnectBackoff.
	ReconnectBackoff, MaxReconnectBackoff time.Duration
	// CloseTimeout bounds how long End waits for the last results after
	// asking the server to finish. Default: DefaultCloseTimeout.
	CloseTimeout time.Duration
	// Now stamps transcriptions. Default: time.Now.
	Now func() time.Time
}

// Streaming is the speech-to-text processor for services that transcribe
// a live audio stream over one session (a websocket): Deepgram and the
// like. From Start it keeps a session open with its [Streamer], sends the
// user's [frames.InputAudioRaw] as it comes (audio passes through), and
// pushes the session's results downstream as [frames.InterimTranscription]
// and [frames.Transcription] frames with the user id, an ISO 8601
// timestamp and the language. [frames.VADUserStoppedSpeaking] asks the
// session to finalize, so the last words arrive without waiting for the
// service's own end-of-speech detection; the time from it to the final
// result is the TTFB metric.
//
// A session that fails is opened again with exponential backoff; audio
// that arrives meanwhile is held (bounded by MaxBuffered) and sent when
// the session is back, so little speech is lost. A permanent failure (bad
// credentials) stops the service with a permanent error. End asks the
// server for its last results and waits for them (bounded); Cancel drops
// the session at once. Interruptions do not affect it.
type Streaming struct {
	streamer Streamer
	opts     StreamingOptions
	name     string

	// out pushes the session's results and runs its manager and reader as
	// the task's background work.
	out pipeline.Outlet
	log *zap.Logger

	// Shared by the node goroutine (which queues), the manager (which
	// sends) and the reader (which pushes results): the queue is safe for
	// concurrent use and the counters are atomic.
	q           pipeline.FrameQueue // audio and finalize marks for the writer
	queuedBytes atomic.Int64
	maxBytes    atomic.Int64
	dropped     atomic.Int64
	userID      atomic.Pointer[string]
	finalizedAt atomic.Int64 // unix ns of the last VAD stop, 0 once measured
	sentBytes   atomic.Int64 // audio sent since the last usage report

	// Set by the node goroutine at Start, before the manager starts; read
	// by the manager and the reader.
	metrics      bool
	usageMetrics bool
	format       frames.Audio // sample rate and channels of the session

	// Owned by the manager goroutine.
	pending frames.Frame // taken from q, not yet sent

	// Owned by the node goroutine.
	rs   *dsp.Resampler
	mono []byte
	// badRate is the last input rate the resampler refused (too far from
	// the session's): its frames are dropped without trying again.
	badRate int
	mgr     *manager // the running session manager, nil when none

	// testHookManage, when set, runs first on the manager goroutine: tests
	// use it to let End come before the first connection attempt.
	testHookManage func(closing <-chan struct{})
}

// NewStreaming returns a streaming STT service over s.
func NewStreaming(s Streamer, opts StreamingOptions) *Streaming {
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = DefaultMaxBuffered
	}
	if opts.ReconnectBackoff <= 0 {
		opts.ReconnectBackoff = DefaultReconnectBackoff
	}
	if opts.MaxReconnectBackoff <= 0 {
		opts.MaxReconnectBackoff = DefaultMaxReconnectBackoff
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = DefaultCloseTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	st := &Streaming{streamer: s, opts: opts, name: opts.Name, log: zap.NewNop()}
	if st.name == "" {
		st.name = fmt.Sprintf("StreamingSTT#%d", frames.NextID())
	}
	return st
}

// Name implements [pipeline.Namer].
func (s *Streaming) Name() string { return s.name }

// Dropped returns how many audio frames were dropped because the session
// could not keep up or was down longer than MaxBuffered.
func (s *Streaming) Dropped() int64 { return s.dropped.Load() }

// Setup implements [pipeline.Setupper]: the session's goroutines are the
// task's background work, so the task ends them (Cancel, teardown after
// End or Stop) and waits for them.
func (s *Streaming) Setup(_ context.Context, su pipeline.Setup) error {
	s.log = su.Logger
	su.Attach(&s.out)
	return nil
}

// ProcessFrame implements [pipeline.Processor].
func (s *Streaming) ProcessFrame(ctx context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.Start:
		if s.mgr.live() {
			return nil // already running (a second Start)
		}
		s.metrics, s.usageMetrics = f.EnableMetrics, f.EnableUsageMetrics
		rate := f.AudioInSampleRate
		if rate <= 0 {
			rate = 16000
		}
		s.format = frames.Audio{SampleRate: rate, Channels: 1}
		s.maxBytes.Store(int64(dsp.FrameBytes(rate, 1, s.opts.MaxBuffered)))
		s.launch(ctx)
	case *frames.InputAudioRaw:
		if f.UserID != "" {
			if cur := s.userID.Load(); cur == nil || *cur != f.UserID {
				id := f.UserID
				s.userID.Store(&id)
			}
		}
		s.enqueue(f)
	case *frames.VADUserStoppedSpeaking:
		s.finalizedAt.Store(time.Now().UnixNano())
		s.q.Push(f, frames.Downstream) // a mark: finalize after the audio before it
	case *frames.End:
		h.Consume()
		ss := s.mgr
		s.mgr = nil
		h.Go(func(ctx context.Context, out pipeline.Pusher) error {
			ss.finish(ctx, s.opts.CloseTimeout)
			out.Push(f, frames.Downstream)
			return nil
		})
	case *frames.Cancel:
		s.mgr.halt()
		s.mgr = nil
	}
	return nil
}

// enqueue queues audio for the writer, converted to the session's format,
// dropping the oldest audio past MaxBuffered.
func (s *Streaming) enqueue(f *frames.InputAudioRaw) {
	if f.SampleRate <= 0 || f.Channels <= 0 || len(f.PCM) == 0 || s.format.SampleRate == 0 {
		return
	}
	if f.SampleRate != s.format.SampleRate || f.Channels != 1 {
		pcm := f.PCM
		if f.Channels > 1 {
			s.mono = dsp.AppendMono(s.mono[:0], pcm, f.Channels)
			pcm = s.mono
		}
		if f.SampleRate != s.format.SampleRate {
			if f.SampleRate == s.badRate {
				return
			}
			if s.rs == nil || s.rs.InRate() != f.SampleRate {
				// The resampler refuses rates too far from the session's
				// (a client's 1 Hz), and shares filter designs, so a
				// stream switching rates costs no new design each time.
				rs, err := dsp.NewResampler(f.SampleRate, s.format.SampleRate, 1, dsp.ResamplerOptions{})
				if err != nil {
					s.badRate = f.SampleRate
					s.log.Warn("stt: cannot resample input audio; dropping audio at this rate", zap.Int("rate", f.SampleRate), zap.Error(err))
					return
				}
				s.rs = rs
			}
			pcm = s.rs.Resample(nil, pcm)
		} else {
			pcm = append([]byte(nil), pcm...)
		}
		f = &frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: s.format.SampleRate, Channels: 1}, UserID: f.UserID}
	}
	s.q.Push(f, frames.Downstream)
	if s.queuedBytes.Add(int64(len(f.PCM))) > s.maxBytes.Load() {
		s.dropOldestAudio()
	}
}

// dropOldestAudio drops the oldest queued frames until the queued audio
// is within its bound. The writer holds the frame it is sending apart
// from the queue, so nothing is dropped from under it.
func (s *Streaming) dropOldestAudio() {
	for s.queuedBytes.Load() > s.maxBytes.Load() {
		f, _, ok := s.q.Pop()
		if !ok {
			return
		}
		if a, isAudio := f.(*frames.InputAudioRaw); isAudio {
			s.queuedBytes.Add(-int64(len(a.PCM)))
		}
		if s.dropped.Add(1) == 1 {
			s.log.Warn("stt: dropping audio: the session is down or cannot keep up", zap.Duration("max_buffered", s.opts.MaxBuffered))
		}
	}
}

// manager is one run of the session manager, from Start to End or Cancel.
// Its fields are set before the manager starts and not changed after.
type manager struct {
	stop    context.CancelFunc // ends the manager at once
	closing chan struct{}      // closed by End: finish and stop
	stopped chan struct{}      // closed when the manager has returned
}

// live reports whether ss is a manager that has not stopped. A manager
// stops with its task (it is the task's background work), so a processor
// reused after Stop starts a new one.
func (ss *manager) live() bool {
	if ss == nil {
		return false
	}
	select {
	case <-ss.stopped:
		return false
	default:
		return true
	}
}

// halt stops the manager at once; the task waits for it.
func (ss *manager) halt() {
	if ss != nil {
		ss.stop()
	}
}

// finish asks the manager for the session's last results and waits for
// them, bounded by closeTimeout, then stops it.
func (ss *manager) finish(ctx context.Context, closeTimeout time.Duration) {
	if ss == nil {
		return
	}
	close(ss.closing)
	t := time.NewTimer(closeTimeout + 250*time.Millisecond)
	defer t.Stop()
	select {
	case <-ss.stopped:
	case <-t.C:
	case <-ctx.Done():
	}
	ss.stop()
}

// launch starts the session manager as background work of the task. ctx
// is the task's context (what Start is handled under); Cancel and the
// task's teardown end the manager through the background context too.
func (s *Streaming) launch(ctx context.Context) {
	mctx, stop := context.WithCancel(ctx)
	ss := &manager{stop: stop, closing: make(chan struct{}), stopped: make(chan struct{})}
	err := s.out.Go("session manager", func(bg context.Context) error {
		defer stop()
		defer context.AfterFunc(bg, stop)()
		s.manage(mctx, ss.closing, ss.stopped)
		return nil
	})
	if err != nil {
		stop()
		close(ss.stopped)
		s.log.Warn("stt: cannot start the session", zap.Error(err))
	}
	s.mgr = ss
}

// errClosing reports a session ended by End.
var errClosing = errors.New("stt: closing")

// errReaderPanicked reports a reader that panicked; the task has turned the
// panic into an error frame.
var errReaderPanicked = errors.New("stt: the session reader panicked")

// manage keeps a session open until ctx ends or End closes it.
func (s *Streaming) manage(ctx context.Context, closing <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	if s.testHookManage != nil {
		s.testHookManage(closing)
	}
	backoff := s.opts.ReconnectBackoff
	failures := 0
	for attempt := 0; ctx.Err() == nil; attempt++ {
		// End lets a connection attempt in progress finish (bounded by
		// CloseTimeout), so the audio queued for it is still transcribed;
		// so too the first attempt when End came before this goroutine
		// got to it and audio is waiting.
		select {
		case <-closing:
			if attempt > 0 || s.queuedBytes.Load() == 0 {
				return
			}
		default:
		}
		st, err := s.streamer.Connect(ctx, Format{SampleRate: s.format.SampleRate, Channels: 1})
		if err == nil {
			var delivered bool
			delivered, err = s.session(ctx, st, closing)
			if errors.Is(err, errClosing) || ctx.Err() != nil {
				return
			}
			if delivered {
				backoff, failures = s.opts.ReconnectBackoff, 0
			}
			if err == nil {
				err = errors.New("the server ended the session")
			}
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-closing:
			return // ending anyway: no reconnection
		default:
		}
		if permanent(err) {
			s.out.PushError(recognitionError(fmt.Errorf("stt: giving up on the session: %w", err)))
			return
		}
		failures++
		if failures == 1 {
			s.out.PushError(recognitionError(fmt.Errorf("stt: session failed, reconnecting: %w", err)))
		}
		s.log.Warn("stt: session failed; reconnecting", zap.Error(err), zap.Int("failures", failures), zap.Duration("backoff", backoff))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-closing:
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, s.opts.MaxReconnectBackoff)
	}
}

// session runs one open stream: this goroutine writes, another reads. It
// returns why the session ended and whether it delivered any result.
func (s *Streaming) session(ctx context.Context, st Stream, closing <-chan struct{}) (delivered bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got atomic.Bool
	readErr := make(chan error, 1)
	err = s.out.Go("session reader", func(context.Context) error {
		// sctx ends with the manager's, which ends with the task's.
		err := errReaderPanicked
		defer func() { readErr <- err }()
		err = s.read(sctx, st, &got)
		return nil
	})
	if err != nil {
		_ = st.Abort()
		return false, err
	}
	defer func() {
		cancel()
		_ = st.Abort()
		<-readErr // the reader has stopped pushing
		delivered = got.Load()
	}()
	keepAlive := time.NewTicker(s.opts.KeepAlive)
	defer keepAlive.Stop()
	lastSent := time.Now()
	for {
		if err := s.drain(sctx, st, &lastSent); err != nil {
			return false, err
		}
		select {
		case <-sctx.Done():
			return false, sctx.Err()
		case err := <-readErr:
			readErr <- err // for the deferred wait
			if err == io.EOF {
				err = nil
			}
			return false, err
		case <-s.q.Ready():
		case <-keepAlive.C:
			if time.Since(lastSent) >= s.opts.KeepAlive {
				if err := st.KeepAlive(sctx); err != nil {
					return false, fmt.Errorf("sending keep-alive: %w", err)
				}
				lastSent = time.Now()
			}
		case <-closing:
			if err := s.drain(sctx, st, &lastSent); err != nil {
				return false, err
			}
			if err := st.Close(sctx); err != nil {
				return false, errClosing
			}
			t := time.NewTimer(s.opts.CloseTimeout)
			defer t.Stop()
			select {
			case err := <-readErr:
				readErr <- err
			case <-t.C:
				s.log.Warn("stt: the server did not finish the session in time", zap.Duration("timeout", s.opts.CloseTimeout))
			case <-sctx.Done():
			}
			return false, errClosing
		}
	}
}

// drain sends everything queued. The frame being sent is held in
// s.pending until it went out, so audio that failed to go out is sent
// first on the next session.
func (s *Streaming) drain(ctx context.Context, st Stream, lastSent *time.Time) error {
	for {
		if s.pending == nil {
			f, _, ok := s.q.Pop()
			if !ok {
				return nil
			}
			if a, isAudio := f.(*frames.InputAudioRaw); isAudio {
				s.queuedBytes.Add(-int64(len(a.PCM)))
			}
			s.pending = f
		}
		switch f := s.pending.(type) {
		case *frames.InputAudioRaw:
			if err := st.SendAudio(ctx, f.PCM); err != nil {
				return fmt.Errorf("sending audio: %w", err)
			}
			s.sentBytes.Add(int64(len(f.PCM)))
			*lastSent = time.Now()
		case *frames.VADUserStoppedSpeaking:
			if err := st.Finalize(ctx); err != nil {
				return fmt.Errorf("sending finalize: %w", err)
			}
		}
		s.pending = nil
	}
}

// read pushes the session's results until it ends.
func (s *Streaming) read(ctx context.Context, st Stream, got *atomic.Bool) error {
	for {
		ev, err := st.Recv(ctx)
		if err != nil {
			return err
		}
		switch ev.Kind {
		case EventInterim, EventFinal:
			s.result(ev)
			got.Store(true)
		}
	}
}

func (s *Streaming) result(ev Event) {
	text := clean(ev.Text)
	if ev.Kind == EventFinal && ev.Finalized {
		s.measure()
	}
	if text == "" {
		return
	}
	user := s.opts.UserID
	if id := s.userID.Load(); id != nil {
		user = *id
	}
	lang := ev.Language
	if lang == "" {
		lang = s.opts.Language
	}
	ts := Timestamp(s.opts.Now())
	if ev.Kind == EventInterim {
		s.out.Push(&frames.InterimTranscription{Text: text, UserID: user, Timestamp: ts, Language: lang}, frames.Downstream)
		return
	}
	s.out.Push(&frames.Transcription{Text: text, UserID: user, Timestamp: ts, Language: lang, Finalized: ev.Finalized,
		Confidence: ev.Confidence}, frames.Downstream)
}

// measure reports the TTFB since the last VAD stop and the audio sent
// since the last report, once per utterance.
func (s *Streaming) measure() {
	var data []frames.Metric
	if at := s.finalizedAt.Swap(0); at != 0 && s.metrics {
		data = append(data, frames.Metric{Kind: frames.MetricTTFB, Processor: s.name, Model: model(s.streamer), Value: time.Duration(time.Now().UnixNano() - at)})
	}
	if sent := s.sentBytes.Swap(0); sent > 0 && s.usageMetrics {
		secs := float64(sent/2) / float64(s.format.SampleRate)
		data = append(data, frames.Metric{Kind: frames.MetricSTTUsage, Processor: s.name, Model: model(s.streamer), AudioSeconds: secs})
	}
	if len(data) > 0 {
		s.out.Push(&frames.Metrics{Data: data}, frames.Downstream)
	}
}
