package webrtc

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
)

// Input is the session's input transport, the first processor of its
// pipeline. It pushes the client's audio as frames.InputAudioRaw (decoded,
// resampled, in fixed-size frames) and each JSON message from the data
// channel as a frames.InputTransportMessage. Other frames pass through.
type Input struct {
	s    *Session
	opts transports.InputOptions
	// outlet carries the frames of the session's goroutines (pion's track
	// readers, the data channel's callbacks) into the pipeline.
	outlet pipeline.Outlet
	// out is where they go: &outlet, or a recorder in the offline tests.
	// It is set before the pipeline starts and read once format is set.
	out    pipeline.Pusher
	format atomic.Pointer[transports.InputFormat]
	frames atomic.Uint64
	paced  atomic.Uint64 // packets dropped for arriving ahead of real time
}

// Name implements pipeline.Namer.
func (in *Input) Name() string { return "WebRTCInput#" + in.s.id[:8] }

// Setup implements pipeline.Setupper: it attaches the input's outlet and
// connects the session's data channel to the pipeline, replaying messages
// that arrived earlier.
func (in *Input) Setup(_ context.Context, su pipeline.Setup) error {
	su.Attach(&in.outlet)
	in.s.attachInput(&in.outlet)
	return nil
}

// Cleanup implements pipeline.Cleaner: audio stops going in (client
// messages still do, and the ended task's outlet drops them).
func (in *Input) Cleanup(context.Context) error {
	in.format.Store(nil)
	return nil
}

// ProcessFrame implements pipeline.Processor: it learns the input rate
// from Start and passes every frame through.
func (in *Input) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if st, ok := f.(*frames.Start); ok {
		in.format.Store(in.opts.Format(st.AudioInSampleRate))
	}
	return nil
}

// FramesPushed returns how many audio frames the input has pushed.
func (in *Input) FramesPushed() uint64 { return in.frames.Load() }

// PacketsDropped returns how many audio packets the input dropped because
// they arrived more than InputOptions.MaxAhead ahead of real time.
func (in *Input) PacketsDropped() uint64 { return in.paced.Load() }

// readTrack decodes one remote audio track until it ends. It runs on the
// goroutine pion gave the track; each track has its own decoder state, so
// the old and new tracks of a restart never share it.
func (in *Input) readTrack(t *pion.TrackRemote) {
	log := in.s.log.With(zap.String("codec", t.Codec().MimeType))
	c, err := codec.ForMime(t.Codec().MimeType)
	if err != nil {
		log.Warn("cannot decode the client's audio", zap.Error(err))
		return
	}
	r := audioReader{in: in, codec: c, pace: transports.Pacer{MaxAhead: in.opts.MaxAhead}}
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Debug("audio track ended", zap.Error(err))
			}
			return
		}
		if err := pkt.Unmarshal(buf[:n]); err != nil || len(pkt.Payload) == 0 {
			continue
		}
		r.packet(pkt.Payload)
	}
}

// audioReader turns one track's payloads into fixed-size frames. The
// decoder runs at the frames' rate when the codec can (Opus decodes to
// 16 kHz itself); otherwise the framer resamples its output.
type audioReader struct {
	in       *Input
	codec    codec.Codec
	dec      codec.Decoder
	pcm      []int16 // decoded, at the framer's input rate
	framer   *transports.AudioFramer
	format   *transports.InputFormat // what framer was made for
	failures int
	// pace drops what arrives ahead of real time (the zero pacer, which
	// the offline tests use, admits everything).
	pace transports.Pacer
}

// prepare makes the decoder and framer for frames of format f.
func (r *audioReader) prepare(f *transports.InputFormat) error {
	if r.dec != nil && r.format == f { // the format changes only at Start
		return nil
	}
	want := r.codec.NativeRate(f.SampleRate)
	dec, err := r.codec.NewDecoder(want)
	if err != nil {
		return err
	}
	framer, err := transports.NewAudioFramer(*f, want)
	if err != nil {
		return err
	}
	r.dec, r.framer, r.format = dec, framer, f
	r.pcm = make([]int16, codec.MaxDecodedSamples(want))
	return nil
}

func (r *audioReader) packet(payload []byte) {
	in := r.in
	f := in.format.Load()
	if f == nil || in.s.micOff.Load() {
		return // not started yet (or over), or the client muted: drop
	}
	if err := r.prepare(f); err != nil {
		if r.failures++; r.failures == 1 {
			in.s.log.Error("audio decoder", zap.Error(err))
		}
		return
	}
	// Pace before decoding: audio past real time costs no decoder time.
	// A payload whose length cannot be read is paced by what it decodes to.
	d, known := payloadDuration(r.codec.Params.MimeType, payload)
	if known && !r.admit(d) {
		return
	}
	n, err := r.dec.Decode(payload, r.pcm)
	if err != nil {
		if r.failures++; r.failures == 1 || r.failures%500 == 0 {
			in.s.log.Info("undecodable audio packet", zap.Error(err), zap.Int("failures", r.failures))
		}
		return
	}
	if !known && !r.admit(time.Duration(n)*time.Second/time.Duration(r.framer.InRate())) {
		return
	}
	if k := r.framer.Write(r.pcm[:n], in.out); k > 0 {
		in.frames.Add(uint64(k))
	}
	in.s.srv.assist.Help()
}

// admit passes a packet of d of audio through the track's pacer, counting
// and (sampled) logging what it drops.
func (r *audioReader) admit(d time.Duration) bool {
	if r.pace.Admit(d) {
		return true
	}
	r.in.paced.Add(1)
	if n := r.pace.Dropped(); n == 1 || n%1000 == 0 {
		r.in.s.messageLog().Warn("the client's audio arrives faster than real time; dropping what is ahead",
			zap.Duration("max_ahead", r.pace.MaxAhead), zap.Uint64("dropped", n))
	}
	return false
}
