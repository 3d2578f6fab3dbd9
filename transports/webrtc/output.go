package webrtc

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
)

// OutputOptions configure the output transport of every session.
type OutputOptions struct {
	// StopSpeakingAfter is how long the bot's audio must have stopped before
	// BotStoppedSpeaking. Default: 350 ms (Pipecat's BOT_VAD_STOP_SECS).
	StopSpeakingAfter time.Duration
	// BotSpeakingInterval is the period of BotSpeaking while audio plays.
	// Default: 200 ms.
	BotSpeakingInterval time.Duration
	// OpusBitrate is the target bitrate of the bot's audio in bits per
	// second. Default: 32,000, what browsers send for a microphone.
	//
	// The encoder is tuned for playback (libopus's audio application, as
	// reference servers encode bot audio): from about 24 kbps it uses
	// Opus's transform coder, CELT, which costs less than half the CPU of
	// the speech coder a microphone's encoder uses; below that libopus
	// switches to the speech coder by itself.
	OpusBitrate int
	// OpusComplexity trades the Opus encoder's CPU for quality, from 1 to
	// 10, while the machine keeps up. Default: 5. Encoding is most of what
	// a streaming session costs, and complexity 0 costs about a third of
	// 5 (on a 2-core EPYC VM, 22 against 75 µs per 20 ms of a tone at
	// 24 kHz).
	// -1 keeps libopus's own default and turns adaptation off.
	//
	// When the outputs' 20 ms ticks start running late because the machine
	// is short of CPU, every output of the server lowers its complexity,
	// down to 0, and raises it back a step at a time once the ticks have
	// been on time for a few seconds and through a garbage collection: an
	// overloaded server sounds slightly coarser instead of cutting out.
	OpusComplexity int
	// FixedOpusComplexity keeps OpusComplexity under load.
	FixedOpusComplexity bool
}

// withDefaults fills in the codec's defaults; the base output fills in
// its own (StopSpeakingAfter, BotSpeakingInterval).
func (o OutputOptions) withDefaults() OutputOptions {
	if o.OpusBitrate <= 0 {
		o.OpusBitrate = 32000
	}
	if o.OpusComplexity == 0 {
		o.OpusComplexity = 5
	}
	o.OpusComplexity = min(o.OpusComplexity, 10)
	return o
}

// Output is the session's output transport, the last processor of its
// pipeline (or the one before the assistant aggregator): the base's
// paced output ([transports.Output]: the 20 ms clock, the queue of frames
// behind the audio, interruptions, speaking state), playing into the
// session's audio track as Opus (or PCMU) and sending messages on its data
// channel.
type Output struct {
	*transports.Output
	s    *Session
	conn *outputConn
}

func newOutput(s *Session) *Output {
	c := &outputConn{s: s, opts: s.srv.opts.Output}
	c.complexityNow.Store(-1)
	return &Output{
		Output: transports.NewOutput(c, transports.OutputOptions{
			StopSpeakingAfter:   c.opts.StopSpeakingAfter,
			BotSpeakingInterval: c.opts.BotSpeakingInterval,
			Assist:              s.srv.assist,
			Name:                "WebRTCOutput#" + s.id[:8],
		}),
		s:    s,
		conn: c,
	}
}

// OutputStats counts the output's audio: the base's counters and the
// encoder's complexity.
type OutputStats struct {
	transports.OutputStats
	// OpusComplexity is the complexity the encoder uses, or -1 before the
	// output has started and for codecs that have none.
	OpusComplexity int
}

// Stats returns the output's counters.
func (o *Output) Stats() OutputStats {
	return OutputStats{OutputStats: o.Output.Stats(), OpusComplexity: int(o.conn.complexityNow.Load())}
}

// outputConn is the output's connection: it encodes each 20 ms frame and
// writes it on the session's track, adapts the encoder's complexity to the
// load, counts the output's lateness in the transport's metrics, and sends
// messages on the data channel. The output's clock calls WriteAudio, one
// goroutine at a time.
type outputConn struct {
	s    *Session
	opts OutputOptions

	c          codec.Codec
	enc        codec.Encoder
	complexity int // the complexity last asked of the encoder; -1 before
	payload    []byte
	// complexityNow is the encoder's complexity, for Stats.
	complexityNow atomic.Int32
}

// OpenAudio implements transports.Conn: it makes the encoder at the rate
// closest to the pipeline's output rate that the codec takes (Opus
// encodes from the pipeline's 24 kHz itself; PCMU needs 8 kHz), tuned for
// playback at the configured bitrate and complexity.
func (c *outputConn) OpenAudio(rate int) (int, error) {
	c.c = c.s.srv.codec
	rate = c.c.NativeRate(rate)
	c.payload = make([]byte, c.c.MaxPayload)
	c.complexity = -1
	enc, err := c.c.NewEncoder(rate, codec.EncoderOptions{Application: codec.Playback, Bitrate: c.opts.OpusBitrate})
	if err != nil {
		return rate, err
	}
	c.enc = enc
	if c.opts.OpusComplexity >= 0 {
		c.setComplexity(c.opts.OpusComplexity)
	}
	return rate, nil
}

// WriteAudio implements transports.Conn: it encodes pcm (the codec's
// silence for nil) and writes it on the track.
func (c *outputConn) WriteAudio(pcm []int16, t transports.Tick) error {
	s := c.s
	m := s.srv.metrics
	if t.Underruns > 0 {
		// Counted as they happen, so a scrape during a session sees them.
		m.output.Underruns(s.ctx, int64(t.Underruns))
	}
	if t.Skipped > 0 {
		s.skipAudio(t.Skipped)
	}
	if g := s.srv.governor; g != nil {
		c.setComplexity(g.tick(t.Now, t.Late, t.Assisted))
	}
	if t.Assisted {
		m.output.LateFrames(s.ctx, 1)
	}
	payload := c.c.Silence
	if pcm != nil && c.enc != nil {
		k, err := c.enc.Encode(pcm, c.payload)
		if err != nil {
			s.log.Warn("encoding audio", zap.Error(err))
		} else {
			payload = c.payload[:k]
		}
	}
	return s.writeAudio(payload)
}

// SendMessage implements transports.Conn.
func (c *outputConn) SendMessage(msg []byte, supersede uint64) { c.s.SendSuperseding(msg, supersede) }

// End implements transports.Conn.
func (c *outputConn) End(reason string) { c.s.end(reason, false) }

// setComplexity sets the encoder's complexity if it has one and it differs.
func (c *outputConn) setComplexity(level int) {
	if level == c.complexity {
		return
	}
	cs, ok := c.enc.(codec.ComplexitySetter)
	if !ok {
		return
	}
	// Either way this level is not asked for again, so a failure is logged
	// once rather than on every tick.
	c.complexity = level
	if err := cs.SetComplexity(level); err != nil {
		c.s.log.Warn("encoder complexity", zap.Int("complexity", level), zap.Error(err))
		return
	}
	c.complexityNow.Store(int32(level))
}
