package websocket

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/websocket/wire"
)

// Input is the session's input transport, the first processor of its
// pipeline. It pushes the client's audio as frames.InputAudioRaw (paced to
// real time, resampled, in fixed-size frames), each transport message
// (RTVI) as a frames.InputTransportMessage, and a server-to-server
// client's text and transcription frames as frames.Text and
// frames.Transcription. Other frames pass through.
type Input struct {
	s    *Session
	opts transports.InputOptions
	// outlet carries the reader's frames into the pipeline.
	outlet pipeline.Outlet
	format atomic.Pointer[transports.InputFormat]
	frames atomic.Uint64
	paced  atomic.Uint64

	// The reader's own: the audio path's state.
	audioIn transports.AudioIn
	samples []int16
}

func newInput(s *Session) *Input {
	in := &Input{s: s, opts: s.srv.opts.Input}
	in.audioIn.Pacer.MaxAhead = in.opts.MaxAhead
	return in
}

// Name implements pipeline.Namer.
func (in *Input) Name() string { return "WebSocketInput#" + in.s.id[:8] }

// Setup implements pipeline.Setupper: it attaches the input's outlet.
func (in *Input) Setup(_ context.Context, su pipeline.Setup) error {
	su.Attach(&in.outlet)
	return nil
}

// Cleanup implements pipeline.Cleaner: audio stops going in.
func (in *Input) Cleanup(context.Context) error {
	in.format.Store(nil)
	return nil
}

// ProcessFrame implements pipeline.Processor: it learns the input rate
// from Start, then lets the session's reader start, so that nothing the
// client sends arrives before the pipeline can take it; every frame passes
// through.
func (in *Input) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if st, ok := f.(*frames.Start); ok {
		in.format.Store(in.opts.Format(st.AudioInSampleRate))
		in.s.sock.Start()
	}
	return nil
}

// FramesPushed returns how many audio frames the input has pushed.
func (in *Input) FramesPushed() uint64 { return in.frames.Load() }

// AudioDropped returns how many of the client's audio frames the input
// dropped because they arrived more than InputOptions.MaxAhead ahead of
// real time.
func (in *Input) AudioDropped() uint64 { return in.paced.Load() }

// receive takes one decoded client frame of n bytes on the wire; the
// reader calls it, and f's bytes are valid only during the call.
func (in *Input) receive(f *wire.Frame, n int) {
	switch f.Kind {
	case wire.KindAudio:
		in.audio(f)
	case wire.KindMessage:
		if in.admit(f.Data, n) {
			in.outlet.Push(&frames.InputTransportMessage{Message: bytes.Clone(f.Data)}, frames.Downstream)
		}
	case wire.KindText:
		if in.admit(f.Text, n) {
			in.outlet.Push(&frames.Text{Text: string(f.Text)}, frames.Downstream)
		}
	case wire.KindTranscription:
		if in.admit(f.Text, n) {
			in.outlet.Push(&frames.Transcription{Text: string(f.Text), UserID: string(f.UserID),
				Timestamp: string(f.Timestamp), Finalized: true}, frames.Downstream)
		}
	default:
		// An interruption is the server's to send; nothing else is known.
		in.s.msgLog.Debug("ignoring a client frame", zap.Stringer("kind", f.Kind))
	}
}

// admit applies the message rate limit to a message of n bytes; a refusal
// goes to the pipeline as a frames.InputTransportRefused (the RTVI
// processor answers a request by its id) and may end the session.
func (in *Input) admit(msg []byte, n int) bool {
	s := in.s
	ok, report := s.limiter.Admit(n, time.Now())
	if ok {
		return true
	}
	s.srv.metrics.refused(s.ctx, limitInboundRate)
	f := s.limiter.Refuse(bytes.Clone(msg), report, time.Now())
	if f == nil {
		return false
	}
	if report > 0 {
		s.msgLog.Warn("the client sends too fast; dropping its messages",
			zap.Uint64("dropped", report), zap.Uint64("dropped_total", s.limiter.Dropped()))
	}
	in.outlet.Push(f, frames.Downstream)
	if f.End != "" {
		s.msgLog.Warn("ending the session: the client sends far too fast", zap.String("reason", f.End))
		s.endAfter(f.End, refuseEndBound)
	}
	return false
}

// refuseEndBound is how long a session that ends for its refusals waits
// for its pipeline to tell the client why (the refusal frame reaching the
// output, which ends the session) before it ends anyway.
const refuseEndBound = 2 * time.Second

// endAfter ends the session for reason after d, unless it ends before.
func (s *Session) endAfter(reason string, d time.Duration) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			s.end(reason, ClosePolicyViolation, false)
		case <-s.ctx.Done():
		}
	}()
}

// audio converts one audio frame of the client's to mono samples and
// hands them to the pipeline, paced and framed.
func (in *Input) audio(f *wire.Frame) {
	format := in.format.Load()
	if format == nil {
		return // before Start or after Cleanup: nobody to hear it
	}
	ch := max(f.Channels, 1)
	count := len(f.Audio) / (2 * ch)
	in.samples = in.samples[:0]
	for i := range count {
		var sum int32
		for c := range ch {
			sum += int32(int16(binary.LittleEndian.Uint16(f.Audio[(i*ch+c)*2:])))
		}
		in.samples = append(in.samples, int16(sum/int32(ch)))
	}
	n, admitted, err := in.audioIn.Write(format, in.samples, f.SampleRate, &in.outlet)
	switch {
	case err != nil:
		in.s.msgLog.Warn("cannot take the client's audio", zap.Int("rate", f.SampleRate), zap.Error(err))
	case !admitted:
		in.paced.Add(1)
	}
	in.frames.Add(uint64(n))
}
