package telephony

import (
	"context"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	ws "github.com/framewire/framewire/transports/websocket"
)

// Session is one call: its stream's socket and its pipeline.
type Session struct {
	srv    *Server
	id     string
	log    *zap.Logger
	msgLog *zap.Logger
	stream Stream
	in     *Input
	out    *transports.Output
	conn   *outputConn

	sock *ws.Socket
	ctx  context.Context
	ev   Event // the reader's: the message being handled

	// started is closed when the stream's start message has been read and
	// its token checked; call is set before.
	started     chan struct{}
	call        Call
	streamID    string
	startedOnce sync.Once
	running     atomic.Bool // the pipeline is built: events go to it
	hungUp      atomic.Bool // the stream stopped: the caller hung up

	mu   sync.Mutex
	task *pipeline.Task
}

func newSession(srv *Server, id string) *Session {
	s := &Session{
		srv:     srv,
		id:      id,
		log:     srv.log.With(zap.String("session", id), zap.String("transport", "telephony")),
		stream:  srv.provider.NewStream(),
		started: make(chan struct{}),
	}
	s.msgLog = logsample.Logger(s.log)
	s.in = &Input{s: s, opts: srv.opts.Input}
	s.in.audioIn.Pacer.MaxAhead = s.in.opts.MaxAhead
	s.conn = &outputConn{s: s}
	oo := srv.opts.Output
	oo.Assist, oo.Name = srv.assist, srv.provider.Name()+"Output#"+id[:8]
	s.out = transports.NewOutput(s.conn, oo)
	return s
}

// ID returns the session's identifier.
func (s *Session) ID() string { return s.id }

// Call returns what the stream's start said of the call.
func (s *Session) Call() Call { return s.call }

// Input returns the call's input transport, for the head of its pipeline.
func (s *Session) Input() *Input { return s.in }

// Output returns the call's output transport, for the end of its
// pipeline (before the assistant aggregator, if any).
func (s *Session) Output() *transports.Output { return s.out }

// Context returns a context that ends with the call.
func (s *Session) Context() context.Context { return s.ctx }

// Reason returns why the call's session ended, or "" while it lives.
func (s *Session) Reason() string { return s.sock.Reason() }

// serve runs the call: it reads the stream until its start, builds the
// pipeline, runs it until it ends, then closes the socket.
func (s *Session) serve(_ *http.Request, c *websocket.Conn) {
	o := s.srv.opts
	s.sock = ws.NewSocket(s.srv.ctx, c, ws.SocketOptions{
		MaxMessageBytes: o.MaxMessageBytes, PingInterval: o.PingInterval, PingTimeout: o.PingTimeout,
		WriteTimeout: o.WriteTimeout, MaxOutboundBytes: o.MaxOutboundBytes, Logger: s.log, OnEnd: s.ended,
	}, s.receive)
	s.ctx = s.sock.Context()
	s.sock.Start() // the start message comes before the pipeline
	t := time.NewTimer(o.StartTimeout)
	select {
	case <-s.started:
		t.Stop()
	case <-t.C:
		s.sock.End("the stream did not start in time", ws.ClosePolicyViolation, false)
	case <-s.ctx.Done():
		t.Stop()
	}
	if s.ctx.Err() != nil {
		s.sock.Close()
		return
	}
	s.log = s.log.With(zap.String("call", s.call.CallID))
	task, err := o.NewPipeline(s.ctx, s)
	if err != nil {
		s.log.Warn("building the call's pipeline failed", zap.Error(err))
		s.sock.End("the pipeline could not be built", ws.CloseInternalError, false)
		s.sock.Close()
		return
	}
	s.mu.Lock()
	s.task = task
	s.mu.Unlock()
	if reason := s.Reason(); reason != "" {
		task.Cancel(reason)
	}
	s.running.Store(true)
	runner := pipeline.Runner{Logger: s.log, GracePeriod: o.ShutdownGrace}
	code := ws.CloseNormal
	if err := runner.Run(s.srv.drain, task); err != nil {
		s.log.Warn("pipeline failed", zap.Error(err))
		code = ws.CloseInternalError
	}
	if s.srv.drain.Err() != nil && code == ws.CloseNormal {
		code = ws.CloseGoingAway
	}
	s.sock.End("pipeline ended", code, false)
	s.sock.Close()
	s.hangUp()
}

// hangUpTimeout bounds the provider's hang-up request.
const hangUpTimeout = 10 * time.Second

// hangUp ends, through the provider's REST API, a call whose pipeline
// ended before the caller hung up.
func (s *Session) hangUp() {
	h, ok := s.srv.provider.(HangUpper)
	if !ok || s.hungUp.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), hangUpTimeout)
	defer cancel()
	if err := h.HangUp(ctx, s.call); err != nil {
		s.log.Warn("hanging up the call failed", zap.Error(err))
	}
}

// ended is the socket's OnEnd: the call's pipeline ends.
func (s *Session) ended(reason string) {
	s.mu.Lock()
	task := s.task
	s.mu.Unlock()
	if task != nil {
		task.Cancel(reason)
	}
}

// receive is the socket's reader: it decodes each message of the stream
// and acts on it.
func (s *Session) receive(typ websocket.MessageType, msg []byte) {
	ev := &s.ev
	if err := s.stream.Decode(typ, msg, ev); err != nil {
		s.msgLog.Info("the provider sent a message that is not valid", zap.Error(err))
		s.sock.End("the provider sent a message that is not valid", ws.CloseInvalidFrame, false)
		return
	}
	if ev.Kind == EventStart {
		s.start(ev)
		return
	}
	select {
	case <-s.started:
	default:
		if ev.Kind == EventOther {
			return // "connected", before the start
		}
		s.msgLog.Info("the stream sent an event before its start", zap.String("event", ev.Name))
		s.sock.End("the stream sent "+ev.Name+" before its start", ws.ClosePolicyViolation, false)
		return
	}
	if ev.StreamID != "" && ev.StreamID != s.streamID {
		s.msgLog.Info("a message names another stream", zap.String("event", ev.Name))
		s.sock.End("a message named another stream", ws.ClosePolicyViolation, false)
		return
	}
	switch ev.Kind {
	case EventAudio:
		if s.running.Load() {
			s.in.audio(ev.Audio, s.call.SampleRate)
		}
		s.srv.assist.Help()
	case EventDTMF:
		if s.running.Load() {
			s.in.outlet.Push(&frames.InputDTMF{Button: ev.Digit}, frames.Downstream)
		}
	case EventMark:
		if pos, err := strconv.ParseInt(ev.Mark, 10, 64); err == nil {
			s.out.Played(pos)
		}
	case EventStop:
		s.hungUp.Store(true)
		s.sock.End("the call hung up", ws.CloseNormal, true) // nothing more will play
	}
}

// start takes the stream's start: its token must be one the server issued.
func (s *Session) start(ev *Event) {
	first := false
	s.startedOnce.Do(func() { first = true })
	if !first {
		s.sock.End("the stream started twice", ws.ClosePolicyViolation, false)
		return
	}
	call := ev.Call
	token := call.Parameters[TokenParameter]
	if token == "" || !s.srv.takeToken(token) {
		s.msgLog.Info("a stream without a valid token was refused")
		s.sock.End("the stream has no valid token", ws.ClosePolicyViolation, false)
		return
	}
	call.Parameters = maps.Clone(call.Parameters)
	delete(call.Parameters, TokenParameter)
	call.Provider = s.srv.provider.Name()
	s.call, s.streamID = call, call.StreamID
	close(s.started)
}

// Input is the call's input transport, the first processor of its
// pipeline: it pushes the caller's audio as frames.InputAudioRaw (paced,
// resampled to the pipeline's rate, in fixed-size frames) and each key
// pressed as frames.InputDTMF.
type Input struct {
	s       *Session
	opts    transports.InputOptions
	outlet  pipeline.Outlet
	format  atomic.Pointer[transports.InputFormat]
	frames  atomic.Uint64
	dropped atomic.Uint64
	audioIn transports.AudioIn // the reader's
}

// Name implements pipeline.Namer.
func (in *Input) Name() string { return in.s.srv.provider.Name() + "Input#" + in.s.id[:8] }

// Setup implements pipeline.Setupper.
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
// from Start and passes every frame through.
func (in *Input) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if st, ok := f.(*frames.Start); ok {
		in.format.Store(in.opts.Format(st.AudioInSampleRate))
	}
	return nil
}

// FramesPushed returns how many audio frames the input has pushed.
func (in *Input) FramesPushed() uint64 { return in.frames.Load() }

// AudioDropped returns how many of the caller's audio messages were
// dropped for arriving more than MaxAhead ahead of real time.
func (in *Input) AudioDropped() uint64 { return in.dropped.Load() }

func (in *Input) audio(samples []int16, rate int) {
	n, admitted, err := in.audioIn.Write(in.format.Load(), samples, rate, &in.outlet)
	switch {
	case err != nil:
		in.s.msgLog.Warn("cannot take the caller's audio", zap.Int("rate", rate), zap.Error(err))
	case !admitted:
		in.dropped.Add(1)
	}
	in.frames.Add(uint64(n))
}

// outputConn is the call's connection for the output: each 20 ms frame
// becomes one media message, marks follow the audio they acknowledge, and
// an interruption sends the provider's clear. WriteAudio runs on the
// output's clock, one goroutine at a time.
type outputConn struct {
	s    *Session
	name []byte // scratch: a mark's name
}

// OpenAudio implements transports.Conn: the call's rate.
func (c *outputConn) OpenAudio(int) (int, error) { return c.s.call.SampleRate, nil }

// WriteAudio implements transports.Conn: silence is not sent (the
// provider plays silence by itself).
func (c *outputConn) WriteAudio(pcm []int16, t transports.Tick) error {
	s := c.s
	audio, control := s.stream.MessageTypes()
	if pcm != nil {
		s.sock.SendFrame(s.stream.AppendAudio(s.sock.Frame(audio, 64+4*len(pcm)), pcm))
	}
	if t.Mark {
		c.name = strconv.AppendInt(c.name[:0], t.Position+int64(len(pcm)), 10)
		s.sock.SendFrame(s.stream.AppendMark(s.sock.Frame(control, 128), string(c.name)))
	}
	return nil
}

// ReportsPlayback implements transports.PlaybackReporter: the provider
// echoes marks.
func (c *outputConn) ReportsPlayback() {}

// FlushAudio implements transports.AudioFlusher: the provider drops what
// it has not played.
func (c *outputConn) FlushAudio() {
	_, control := c.s.stream.MessageTypes()
	c.s.sock.SendFrameWait(c.s.stream.AppendClear(c.s.sock.Frame(control, 128)), 0)
}

// SendMessage implements transports.Conn: a phone line carries no
// transport messages (RTVI); they are dropped.
func (c *outputConn) SendMessage([]byte, uint64) {}

// End implements transports.Conn.
func (c *outputConn) End(reason string) { c.s.sock.End(reason, ws.ClosePolicyViolation, false) }
