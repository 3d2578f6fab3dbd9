package websocket

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
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
	msgLog *zap.Logger
	in     *Input
	out    *transports.Output
	oc     *outputConn

	// ctx is the session's: it ends when the session ends. Socket
	// operations use connCtx, which ends only once the socket is closed,
	// because coder/websocket closes a socket whose read's context ends.
	ctx        context.Context
	cancel     context.CancelFunc
	connCtx    context.Context
	connCancel context.CancelFunc
	c          *websocket.Conn
	limiter    *transports.MessageLimiter
	bg         sync.WaitGroup // the reader, writer, pinger and timers

	// attached is closed when the input has seen Start: the reader waits
	// for it, so nothing the client sends arrives before the pipeline can
	// take it (it waits in the socket meanwhile).
	attached     chan struct{}
	attachedOnce sync.Once

	mu      sync.Mutex
	cause   *endCause
	task    *pipeline.Task
	ob      transports.Outbox
	free    [][]byte      // audio buffers the writer has written, for reuse
	wake    chan struct{} // tells the writer there is something to write
	closing bool          // no more writes are queued
	// writeSince is when the write in progress began (unix nanoseconds),
	// 0 between writes: a read that fails while a write has outlasted
	// WriteTimeout failed because the client stopped reading.
	writeSince atomic.Int64
	dropped    uint64 // audio frames dropped for a full outbox
}

// endCause is why a session ended and how the socket is closed.
type endCause struct {
	reason string
	code   websocket.StatusCode
	// abrupt: close the socket at once, without a close handshake or a
	// flush (the client left or stopped reading).
	abrupt bool
}

func newSession(srv *Server, data json.RawMessage) *Session {
	id := uuid.NewString()
	s := &Session{
		srv:      srv,
		id:       id,
		data:     data,
		log:      srv.log.With(zap.String("session", id), zap.String("transport", "websocket")),
		attached: make(chan struct{}),
		wake:     make(chan struct{}, 1),
	}
	s.msgLog = logsample.Logger(s.log)
	s.ctx, s.cancel = context.WithCancel(srv.ctx)
	s.connCtx, s.connCancel = context.WithCancel(srv.ctx)
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
func (s *Session) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause == nil {
		return ""
	}
	return s.cause.reason
}

// Send queues msg for the client as a transport message (for RTVI, a
// whole JSON envelope). It waits while the outbound queue is over
// Options.MaxOutboundBytes, until the client takes some or the session
// ends; nothing is dropped for a client that reads.
func (s *Session) Send(msg []byte) { s.send(msg, 0) }

// end records the first cause and cancels the session; serve then tears
// it down.
func (s *Session) end(reason string, code websocket.StatusCode, abrupt bool) {
	s.mu.Lock()
	if s.cause == nil {
		s.cause = &endCause{reason: reason, code: code, abrupt: abrupt}
		s.log.Info("session ending", zap.String("reason", reason))
	}
	task := s.task
	s.mu.Unlock()
	s.cancel()
	if task != nil {
		task.Cancel(reason)
	}
}

// serve runs the session on the handshake's goroutine, which the server
// owns: it builds the pipeline, starts the reader, writer and pinger, runs
// the pipeline until it ends, then closes the socket and waits for
// everything the session started.
func (s *Session) serve(r *http.Request, c *websocket.Conn) {
	s.c = c
	c.SetReadLimit(int64(s.srv.opts.MaxMessageBytes))
	defer s.connCancel()
	task, err := s.srv.opts.NewPipeline(s.ctx, s)
	if err != nil {
		s.log.Warn("building the session's pipeline failed", zap.Error(err))
		s.end("the pipeline could not be built", CloseInternalError, false)
		_ = c.Close(CloseInternalError, "internal error")
		s.cancel()
		return
	}
	s.mu.Lock()
	s.task = task
	ended := s.cause != nil
	s.mu.Unlock()
	if ended {
		task.Cancel(s.Reason())
	}
	s.announce(SessionEvent{Kind: SessionStarted, Session: s, Request: r})
	s.bg.Add(3)
	writerDone := make(chan struct{})
	go func() { defer s.bg.Done(); defer close(writerDone); s.writeLoop() }()
	go func() { defer s.bg.Done(); s.readLoop() }()
	go func() { defer s.bg.Done(); s.pingLoop() }()

	runner := pipeline.Runner{Logger: s.log, GracePeriod: s.srv.opts.ShutdownGrace}
	code := CloseNormal
	if err := runner.Run(s.srv.drain, task); err != nil {
		s.log.Warn("pipeline failed", zap.Error(err))
		code = CloseInternalError
	}
	if s.srv.drain.Err() != nil && code == CloseNormal {
		code = CloseGoingAway
	}
	s.end("pipeline ended", code, false)
	s.teardown(writerDone)
	s.announce(SessionEvent{Kind: SessionEnded, Session: s, Reason: s.Reason()})
}

// flushBound bounds how long a session that ends waits for its client to
// take what is queued for it before the socket is closed.
const flushBound = time.Second

// teardown flushes what is queued (unless the client left), closes the
// socket with the cause's code and waits for the session's goroutines.
func (s *Session) teardown(writerDone <-chan struct{}) {
	s.mu.Lock()
	s.closing = true
	cause := *s.cause
	s.mu.Unlock()
	s.kick()
	if !cause.abrupt {
		select {
		case <-writerDone:
		case <-time.After(flushBound):
		}
		// The close handshake waits for the client's answer, which the
		// reader reads; coder/websocket bounds the wait.
		_ = s.c.Close(cause.code, closeReason(cause.reason))
	}
	s.connCancel()
	_ = s.c.CloseNow()
	s.bg.Wait()
	s.mu.Lock()
	s.ob.Reset()
	s.free = nil
	s.mu.Unlock()
	s.reportOutput()
}

// closeReason fits a reason into a close frame (123 bytes of UTF-8 at
// most), cutting at a character boundary.
func closeReason(r string) string {
	const limit = 123
	if len(r) <= limit {
		return r
	}
	for i := limit; i > 0; i-- {
		if r[i]&0xC0 != 0x80 {
			return r[:i]
		}
	}
	return ""
}

// announce tells Options.OnSession of ev.
func (s *Session) announce(ev SessionEvent) {
	if f := s.srv.opts.OnSession; f != nil {
		f(ev)
	}
}

// readLoop reads the client's messages until the socket fails or closes.
// It waits for the pipeline to start first: what the client sends before
// that waits in the socket.
func (s *Session) readLoop() {
	select {
	case <-s.attached:
	case <-s.ctx.Done():
		return
	}
	buf := make([]byte, 0, 4<<10)
	dec := wire.Decoder{MaxMessageBytes: s.srv.opts.MaxMessageBytes}
	for {
		typ, rd, err := s.c.Reader(s.connCtx)
		if err != nil {
			s.readFailed(err)
			return
		}
		buf, err = readAll(buf[:0], rd)
		if err != nil {
			s.readFailed(err)
			return
		}
		if typ != websocket.MessageBinary {
			s.msgLog.Info("the client sent a text message; the transport's frames are binary")
			s.end("the client sent a text message", CloseUnsupportedData, false)
			return
		}
		f, err := dec.Decode(buf)
		if err != nil {
			s.msgLog.Info("the client sent an invalid frame", zap.Error(err))
			s.end("the client sent an invalid frame", CloseInvalidFrame, false)
			return
		}
		s.in.receive(&f, len(buf))
		s.srv.assist.Help()
	}
}

// readAll reads r to its end into buf, growing it as the message needs
// (the read limit bounds it).
func readAll(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// readFailed ends the session for a read that failed: the client closed
// the socket, or sent a message over the limit.
func (s *Session) readFailed(err error) {
	if s.connCtx.Err() != nil {
		return // the session is closing the socket itself
	}
	if since := s.writeSince.Load(); since != 0 && time.Since(time.Unix(0, since)) >= s.srv.opts.WriteTimeout {
		s.end("the client stopped reading", CloseNormal, true)
		return
	}
	switch websocket.CloseStatus(err) {
	case -1:
		if errors.Is(err, websocket.ErrMessageTooBig) {
			s.end("the client sent a message over the size limit", CloseMessageTooBig, true)
			return
		}
		s.end("the client's connection failed", CloseNormal, true)
	default:
		s.end("the client closed the connection", CloseNormal, true)
	}
}

// pingLoop pings the client every PingInterval and ends the session when
// a pong does not come within PingTimeout.
func (s *Session) pingLoop() {
	every := s.srv.opts.PingInterval
	if every < 0 {
		return
	}
	// A pong is read by the reader, which starts with the pipeline.
	select {
	case <-s.attached:
	case <-s.ctx.Done():
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.srv.opts.PingTimeout)
		err := s.c.Ping(ctx)
		cancel()
		if err != nil && s.ctx.Err() == nil {
			s.end("the client stopped answering pings", CloseNormal, true)
			return
		}
	}
}

// send queues a transport message (msg is its JSON) for the writer,
// waiting for room past MaxOutboundBytes; a message with a non-zero
// supersede key replaces the queued one with the same key.
func (s *Session) send(msg []byte, supersede uint64) {
	frame := wire.AppendMessage(make([]byte, 0, wire.MessageSize(len(msg))), msg)
	limit := s.srv.opts.MaxOutboundBytes
	s.mu.Lock()
	defer s.mu.Unlock()
	// Wait for room while the writer makes progress. Once the session
	// has ended the message is queued anyway: the pipeline must not
	// block on its way out, and teardown bounds what is flushed.
	for !s.closing && s.ctx.Err() == nil && s.ob.Bytes() > 0 && s.ob.Bytes()+len(frame) > limit {
		wait := s.ob.Wait()
		s.mu.Unlock()
		select {
		case <-wait:
		case <-s.ctx.Done():
		}
		s.mu.Lock()
	}
	if s.closing {
		return
	}
	if supersede != 0 {
		s.ob.Supersede(supersede)
	}
	s.ob.Push(frame, supersede, time.Now())
	s.kick()
}

// queueAudio queues one encoded audio frame, or drops it when the
// outbound queue is full (the client is not reading); it reports whether
// it was queued. It never waits: the output's clock calls it.
func (s *Session) queueAudio(frame []byte) bool {
	s.mu.Lock()
	if s.closing || s.ob.Bytes()+len(frame) > s.srv.opts.MaxOutboundBytes {
		s.dropped++
		if len(s.free) < maxFree {
			s.free = append(s.free, frame[:0])
		}
		s.mu.Unlock()
		return false
	}
	s.ob.Push(frame, 0, time.Now())
	s.mu.Unlock()
	s.kick()
	return true
}

// audioBuffer returns a buffer for an audio frame of n bytes, reusing one
// the writer has written.
func (s *Session) audioBuffer(n int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.free) > 0 {
		b := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		if cap(b) >= n {
			return b[:0]
		}
	}
	return make([]byte, 0, n)
}

// maxFree bounds the audio buffers kept for reuse: a second of frames.
const maxFree = 50

func (s *Session) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the outbound queue to the socket in order, one message
// at a time, each within WriteTimeout. It returns when the session is
// closing and the queue is empty, or when a write fails.
func (s *Session) writeLoop() {
	timeout := s.srv.opts.WriteTimeout
	for {
		s.mu.Lock()
		msg, ok := s.ob.Peek()
		closing := s.closing
		s.mu.Unlock()
		if !ok {
			if closing {
				return
			}
			select {
			case <-s.wake:
			case <-s.connCtx.Done():
				return
			}
			continue
		}
		ctx, cancel := context.WithTimeout(s.connCtx, timeout)
		s.writeSince.Store(time.Now().UnixNano())
		err := s.c.Write(ctx, websocket.MessageBinary, msg)
		late := ctx.Err() != nil && s.connCtx.Err() == nil
		if err == nil {
			s.writeSince.Store(0) // a failed write's start stays, for readFailed
		}
		cancel()
		if err != nil {
			if late {
				s.end("the client stopped reading", CloseNormal, true)
			} else if s.connCtx.Err() == nil {
				s.end("writing to the client failed", CloseNormal, true)
			}
			return
		}
		s.mu.Lock()
		s.ob.Pop(time.Now())
		if cap(msg) == s.oc.frameCap && len(s.free) < maxFree {
			s.free = append(s.free, msg[:0])
		}
		s.ob.Notify()
		s.mu.Unlock()
	}
}

// attach is called by the input at Start: the reader may start.
func (s *Session) attach() { s.attachedOnce.Do(func() { close(s.attached) }) }

// reportOutput reports what the session's output counted, at its end.
func (s *Session) reportOutput() {
	m := s.srv.metrics
	ctx := context.WithoutCancel(s.ctx)
	m.lateFrames.Add(ctx, 0, m.transport...)
	m.underruns.Add(ctx, 0, m.transport...)
	s.mu.Lock()
	high, dropped := s.ob.HighWater(), s.dropped
	s.mu.Unlock()
	m.droppedAudio.Add(ctx, int64(dropped), m.transport...)
	m.queueHighWater.Record(ctx, int64(high), m.outbound...)
}
