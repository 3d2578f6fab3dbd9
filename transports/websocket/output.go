package websocket

import (
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/websocket/wire"
)

// OutputOptions configure the output transport of every session.
type OutputOptions struct {
	// SampleRate is the rate of the audio sent to the client: the rate its
	// player runs at, which the wire does not tell (the browser client
	// plays every frame at its playerSampleRate, whatever the frame says).
	// Default: 24000, the browser client's default.
	SampleRate int
	// StopSpeakingAfter is how long the bot's audio must have stopped
	// before BotStoppedSpeaking. Default: 350 ms.
	StopSpeakingAfter time.Duration
	// BotSpeakingInterval is the period of BotSpeaking while audio plays.
	// Default: 200 ms.
	BotSpeakingInterval time.Duration
}

func (o OutputOptions) withDefaults() OutputOptions {
	if o.SampleRate <= 0 {
		o.SampleRate = 24000
	}
	return o
}

// newOutput returns the session's output transport: the base's paced
// output, playing one binary audio frame per 20 ms to the socket and
// sending transport messages in order with it.
func newOutput(s *Session) (*transports.Output, *outputConn) {
	opts := s.srv.opts.Output
	n := transports.FrameSamples(opts.SampleRate)
	c := &outputConn{s: s, rate: opts.SampleRate, frameCap: wire.AudioSize(2*n, opts.SampleRate, 1)}
	out := transports.NewOutput(c, transports.OutputOptions{
		StopSpeakingAfter:   opts.StopSpeakingAfter,
		BotSpeakingInterval: opts.BotSpeakingInterval,
		Assist:              s.srv.assist,
		Name:                "WebSocketOutput#" + s.id[:8],
	})
	return out, c
}

// outputConn is the output's connection to the socket: each 20 ms frame
// becomes one protobuf audio frame queued for the session's writer.
// WriteAudio runs on the output's clock, one goroutine at a time.
type outputConn struct {
	s        *Session
	rate     int
	frameCap int // the size of one encoded frame
}

// OpenAudio implements transports.Conn: the client's player rate,
// whatever the pipeline's.
func (c *outputConn) OpenAudio(int) (int, error) { return c.rate, nil }

// WriteAudio implements transports.Conn: silence is not sent (the
// client's player waits for the next audio by itself).
func (c *outputConn) WriteAudio(pcm []int16, t transports.Tick) error {
	s := c.s
	m := s.srv.metrics
	if t.Underruns > 0 {
		m.output.Underruns(s.ctx, int64(t.Underruns))
	}
	if t.Assisted {
		m.output.LateFrames(s.ctx, 1)
	}
	if pcm == nil {
		return nil
	}
	s.sock.SendFrame(wire.AppendAudioSamples(s.sock.Frame(websocket.MessageBinary, c.frameCap), pcm, c.rate, 1))
	return nil
}

// SendMessage implements transports.Conn.
func (c *outputConn) SendMessage(msg []byte, supersede uint64) { c.s.send(msg, supersede) }

// End implements transports.Conn: the session ends for a client far over
// its message rate, once the pipeline has said why.
func (c *outputConn) End(reason string) { c.s.end(reason, ClosePolicyViolation, false) }
