package websocket

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/logsample"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/websocket/wire"
)

// Close codes the server ends a socket with (RFC 6455, section 7.4.1). The
// browser client reports only the code, so each says one thing.
const (
	// CloseNormal: the session's pipeline ended (the bot finished, or the
	// application closed the session).
	CloseNormal = websocket.StatusNormalClosure // 1000
	// CloseGoingAway: the server is shutting down.
	CloseGoingAway = websocket.StatusGoingAway // 1001
	// CloseUnsupportedData: the client sent a text message; the
	// transport's frames are binary protobuf.
	CloseUnsupportedData = websocket.StatusUnsupportedData // 1003
	// CloseInvalidFrame: the client sent a message that is not a valid
	// frame (bad protobuf, an unsupported audio format).
	CloseInvalidFrame = websocket.StatusInvalidFramePayloadData // 1007
	// ClosePolicyViolation: the client stayed far over its message rate.
	ClosePolicyViolation = websocket.StatusPolicyViolation // 1008
	// CloseMessageTooBig: a message over Options.MaxMessageBytes.
	CloseMessageTooBig = websocket.StatusMessageTooBig // 1009
	// CloseInternalError: the session's pipeline could not be built or
	// failed.
	CloseInternalError = websocket.StatusInternalError // 1011
)

// Session is one client's socket and pipeline.
type Session struct {
	srv  *Server
	id   string
	data json.RawMessage
	log  *zap.Logger
	// msgLog is log sampled: the lines a client's messages can cause.
	msgLog  *zap.Logger
	in      *Input
	out     *transports.Output
	oc      *outputConn
	limiter *transports.MessageLimiter
	dec     wire.Decoder

	// sock is the client's socket; ctx, its context, ends when the
	// session ends. Both are set when the socket is accepted.
	sock *Socket
	ctx  context.Context
	bg   sync.WaitGroup // timers the session starts

	mu   sync.Mutex
	task *pipeline.Task
}

func newSession(srv *Server, data json.RawMessage) *Session {
	id := uuid.NewString()
	s := &Session{
		srv:  srv,
		id:   id,
		data: data,
		log:  srv.log.With(zap.String("session", id), zap.String("transport", "websocket")),
		dec:  wire.Decoder{MaxMessageBytes: srv.opts.MaxMessageBytes},
	}
	s.msgLog = logsample.Logger(s.log)
	s.limiter = transports.NewMessageLimiter(srv.opts.Inbound, srv.opts.MaxMessageBytes, time.Now())
	s.in = newInput(s)
	s.out, s.oc = newOutput(s)
	return s
}

// ID returns the session's identifier.
func (s *Session) ID() string { return s.id }

// RequestData returns the body the client posted to /connect (its
// requestData), or nil when there was none.
func (s *Session) RequestData() json.RawMessage { return s.data }

// Input returns the session's input transport, for the head of its pipeline.
func (s *Session) Input() *Input { return s.in }

// Output returns the session's output transport (the base's paced
// output, transports.Output), for the end of its pipeline (before the
// assistant aggregator, if any).
func (s *Session) Output() *transports.Output { return s.out }

// Context returns a context that ends with the session.
func (s *Session) Context() context.Context { return s.ctx }

// Close ends the session: its pipeline is cancelled and the socket closed
// with CloseNormal.
func (s *Session) Close(reason string) { s.end(reason, CloseNormal, false) }

// Reason returns why the session ended, or "" while it lives.
func (s *Session) Reason() string { return s.sock.Reason() }

// Send queues msg for the client as a transport message (for RTVI, a
// whole JSON envelope). It waits while the outbound queue is over
// Options.MaxOutboundBytes, until the client takes some or the session
// ends; nothing is dropped for a client that reads.
func (s *Session) Send(msg []byte) { s.send(msg, 0) }

// send queues a transport message as a protobuf message frame.
func (s *Session) send(msg []byte, supersede uint64) {
	s.sock.SendFrameWait(wire.AppendMessage(s.sock.Frame(websocket.MessageBinary, wire.MessageSize(len(msg))), msg), supersede)
}

// end ends the session for reason; the socket closes with code.
func (s *Session) end(reason string, code websocket.StatusCode, abrupt bool) {
	s.sock.End(reason, code, abrupt)
}

// ended is the socket's OnEnd: the session's pipeline ends.
func (s *Session) ended(reason string) {
	s.mu.Lock()
	task := s.task
	s.mu.Unlock()
	if task != nil {
		task.Cancel(reason)
	}
}

// serve runs the session on the handshake's goroutine, which the server
// owns: it builds the pipeline, runs it until it ends (the socket's
// reader starts when the pipeline has), then closes the socket and waits
// for everything the session started.
func (s *Session) serve(r *http.Request, c *websocket.Conn) {
	o := s.srv.opts
	// The server's lifetime bounds the socket's: Close closes it at once.
	s.sock = NewSocket(s.srv.ctx, c, SocketOptions{
		MaxMessageBytes: o.MaxMessageBytes, PingInterval: o.PingInterval, PingTimeout: o.PingTimeout,
		WriteTimeout: o.WriteTimeout, MaxOutboundBytes: o.MaxOutboundBytes, Logger: s.log, OnEnd: s.ended,
	}, s.receive)
	s.ctx = s.sock.Context()
	task, err := o.NewPipeline(s.ctx, s)
	if err != nil {
		s.log.Warn("building the session's pipeline failed", zap.Error(err))
		s.end("the pipeline could not be built", CloseInternalError, false)
		s.sock.Close()
		return
	}
	s.mu.Lock()
	s.task = task
	s.mu.Unlock()
	if reason := s.Reason(); reason != "" {
		task.Cancel(reason)
	}
	s.announce(SessionEvent{Kind: SessionStarted, Session: s, Request: r})
	runner := pipeline.Runner{Logger: s.log, GracePeriod: o.ShutdownGrace}
	code := CloseNormal
	if err := runner.Run(s.srv.drain, task); err != nil {
		s.log.Warn("pipeline failed", zap.Error(err))
		code = CloseInternalError
	}
	if s.srv.drain.Err() != nil && code == CloseNormal {
		code = CloseGoingAway
	}
	s.end("pipeline ended", code, false)
	s.sock.Close()
	s.bg.Wait()
	s.reportOutput()
	s.announce(SessionEvent{Kind: SessionEnded, Session: s, Reason: s.Reason()})
}

// announce tells Options.OnSession of ev.
func (s *Session) announce(ev SessionEvent) {
	if f := s.srv.opts.OnSession; f != nil {
		f(ev)
	}
}

// receive is the socket's reader: it decodes each client message and
// hands it to the input.
func (s *Session) receive(typ websocket.MessageType, msg []byte) {
	if typ != websocket.MessageBinary {
		s.msgLog.Info("the client sent a text message; the transport's frames are binary")
		s.end("the client sent a text message", CloseUnsupportedData, false)
		return
	}
	f, err := s.dec.Decode(msg)
	if err != nil {
		s.msgLog.Info("the client sent an invalid frame", zap.Error(err))
		s.end("the client sent an invalid frame", CloseInvalidFrame, false)
		return
	}
	s.in.receive(&f, len(msg))
	s.srv.assist.Help()
}

// reportOutput reports what the session's output counted, at its end.
func (s *Session) reportOutput() {
	m := s.srv.metrics
	ctx := context.WithoutCancel(s.ctx)
	m.output.SessionEnded(ctx)
	st := s.sock.Stats()
	m.output.DroppedFrames(ctx, int64(st.Dropped))
	m.output.HighWater(ctx, int64(st.QueueHighWater), m.outbound)
}
