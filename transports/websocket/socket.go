package websocket

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/transports"
)

// SocketOptions bound one [Socket]. A zero field takes the default in its
// comment.
type SocketOptions struct {
	// MaxMessageBytes bounds one message from the client; a larger one
	// ends the socket with 1009. Default: 1 MiB.
	MaxMessageBytes int
	// PingInterval is how often the client is pinged; PingTimeout how
	// long its pong may take. Defaults: 10s and 10s; a negative
	// PingInterval turns pinging off.
	PingInterval time.Duration
	PingTimeout  time.Duration
	// WriteTimeout bounds one write: a client that takes nothing for that
	// long has stopped reading. Default: 10s.
	WriteTimeout time.Duration
	// MaxOutboundBytes bounds what waits to be written. Default: 4 MiB.
	MaxOutboundBytes int
	// Logger receives the socket's logs. Default: none.
	Logger *zap.Logger
	// OnEnd, if set, is called once, when the socket's session ends for
	// the first time (its first cause), on the goroutine that ended it.
	OnEnd func(reason string)
}

func (o SocketOptions) withDefaults() SocketOptions {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 1 << 20
	}
	if o.PingInterval == 0 {
		o.PingInterval = 10 * time.Second
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = 10 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.MaxOutboundBytes <= 0 {
		o.MaxOutboundBytes = 4 << 20
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}

// A Socket is one accepted WebSocket as a session transport uses it,
// whatever its messages mean: Pipecat's protobuf frames here, a telephony
// provider's media stream elsewhere. It reads the client's messages in
// order on a goroutine of its own, writes one queue (audio frames and
// messages, in the order queued) on another within a write deadline,
// pings the client, and ends its session, with a close code that says
// why, when the client leaves, stops reading or answering, or the owner
// says so. Close tears it down and waits for its goroutines.
type Socket struct {
	c       *websocket.Conn
	opts    SocketOptions
	receive func(typ websocket.MessageType, msg []byte)

	// ctx ends when the session ends; connCtx only once the socket is
	// closed (or parent ends), which closes the connection. Reads and
	// writes take a context without a Done channel, so that
	// coder/websocket arms no timer per message (a fifth of a streaming
	// socket's CPU); the write deadline is one timer of the socket's, and
	// what ends a read is the connection's closing.
	ctx        context.Context
	cancel     context.CancelFunc
	connCtx    context.Context
	connCancel context.CancelFunc
	closeOnEnd func() bool
	bg         sync.WaitGroup
	started    sync.Once
	writerDone chan struct{}

	mu      sync.Mutex
	cause   *endCause
	ob      transports.Outbox
	free    [][]byte      // written buffers, for reuse
	wake    chan struct{} // tells the writer there is something to write
	closing bool          // no more writes are queued
	dropped uint64        // frames dropped for a full queue
	// stalled is set when a write outlasted WriteTimeout and the socket
	// was closed for it: the reads and writes that fail then failed
	// because the client stopped reading.
	stalled atomic.Bool
}

// endCause is why a socket's session ended and how the socket is closed.
type endCause struct {
	reason string
	code   websocket.StatusCode
	// abrupt: close the socket at once, without a close handshake or a
	// flush (the client left or stopped reading).
	abrupt bool
}

// Each queued message carries its WebSocket message type in its first
// byte, so that one queue keeps the order of text and binary messages.
const typeBytes = 1

// NewSocket takes over c, an accepted WebSocket: its writer starts at
// once; its reader and pinger start with Start. When parent ends (the
// server closes) the session ends and the socket is closed at once, with
// no flush; Close after End flushes first. receive is called by the
// reader with each message, in order; msg is valid only during the call.
func NewSocket(parent context.Context, c *websocket.Conn, opts SocketOptions, receive func(typ websocket.MessageType, msg []byte)) *Socket {
	s := &Socket{c: c, opts: opts.withDefaults(), receive: receive, wake: make(chan struct{}, 1), writerDone: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(parent)
	s.connCtx, s.connCancel = context.WithCancel(parent)
	c.SetReadLimit(int64(s.opts.MaxMessageBytes))
	// When parent ends (the server closes), the connection closes at once,
	// which ends the reads and writes in progress.
	s.closeOnEnd = context.AfterFunc(s.connCtx, func() { _ = c.CloseNow() })
	s.bg.Go(func() { defer close(s.writerDone); s.writeLoop() })
	return s
}

// Context returns a context that ends when the socket's session ends.
func (s *Socket) Context() context.Context { return s.ctx }

// Start starts reading the client's messages and pinging it; what the
// client sent before waits in the socket. It is idempotent.
func (s *Socket) Start() {
	s.started.Do(func() {
		s.bg.Go(s.readLoop)
		s.bg.Go(s.pingLoop)
	})
}

// End ends the socket's session for reason: the first cause is kept, and
// the socket will be closed with its code (at once, without a close
// handshake or a flush, when abrupt).
func (s *Socket) End(reason string, code websocket.StatusCode, abrupt bool) {
	s.mu.Lock()
	first := s.cause == nil
	if first {
		s.cause = &endCause{reason: reason, code: code, abrupt: abrupt}
		s.opts.Logger.Info("session ending", zap.String("reason", reason))
	}
	s.mu.Unlock()
	s.cancel()
	if first && s.opts.OnEnd != nil {
		s.opts.OnEnd(reason)
	}
}

// Reason returns why the session ended, or "" while it lives.
func (s *Socket) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause == nil {
		return ""
	}
	return s.cause.reason
}

// Send queues msg, a message of type typ, for the client. It waits while
// the queue is over MaxOutboundBytes, until the client takes some or the
// session ends (then the message is queued anyway: its owner must not
// block on its way out, and Close bounds what is flushed); nothing is
// dropped for a client that reads. A non-zero supersede key replaces the
// queued message with the same key (see transports.Outbox).
func (s *Socket) Send(typ websocket.MessageType, msg []byte, supersede uint64) {
	s.SendFrameWait(append(s.Frame(typ, len(msg)), msg...), supersede)
}

// SendFrameWait is Send for a message built in a buffer from Frame (no
// copy): it waits for room as Send does, where SendFrame drops.
func (s *Socket) SendFrameWait(b []byte, supersede uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closing && s.ctx.Err() == nil && s.ob.Bytes() > 0 && s.ob.Bytes()+len(b) > s.opts.MaxOutboundBytes {
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
	s.ob.Push(b, supersede, time.Now())
	s.kick()
}

// Frame returns an empty buffer for a message of type typ and up to n
// bytes, reusing one the writer has written: append the message to it
// and queue it with SendFrame (which drops when the queue is full: a
// clock that must not wait, the output's, sends its audio so) or
// SendFrameWait (which waits for room, as Send does).
func (s *Socket) Frame(typ websocket.MessageType, n int) []byte {
	s.mu.Lock()
	var b []byte
	for len(s.free) > 0 && b == nil {
		last := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		if cap(last) >= typeBytes+n {
			b = last[:typeBytes]
		}
	}
	s.mu.Unlock()
	if b == nil {
		b = make([]byte, typeBytes, typeBytes+n)
	}
	b[0] = byte(typ)
	return b
}

// maxFree bounds the buffers kept for reuse: a second of 20 ms frames;
// maxFrameBytes, their size (20 ms of 48 kHz stereo PCM is 3.75 KiB).
const (
	maxFree       = 50
	maxFrameBytes = 8 << 10
)

// SendFrame queues a message built in a buffer from Frame, or drops it
// when the queue is full (the client is not reading), and reports
// whether it was queued. It never waits.
func (s *Socket) SendFrame(b []byte) bool {
	s.mu.Lock()
	if s.closing || s.ob.Bytes()+len(b) > s.opts.MaxOutboundBytes {
		s.dropped++
		if len(s.free) < maxFree && cap(b) <= maxFrameBytes {
			s.free = append(s.free, b[:0])
		}
		s.mu.Unlock()
		return false
	}
	s.ob.Push(b, 0, time.Now())
	s.mu.Unlock()
	s.kick()
	return true
}

// SocketStats counts what a socket wrote.
type SocketStats struct {
	// QueueHighWater is the most messages that waited at once.
	QueueHighWater int
	// Dropped counts frames SendFrame dropped for a full queue.
	Dropped uint64
}

// Stats returns the socket's counters.
func (s *Socket) Stats() SocketStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SocketStats{QueueHighWater: s.ob.HighWater(), Dropped: s.dropped}
}

func (s *Socket) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// flushBound bounds how long a socket whose session ended waits for its
// client to take what is queued before it is closed.
const flushBound = time.Second

// Close ends the session if it has not ended ("closed"), flushes what is
// queued (within a second, unless the cause was abrupt), closes the
// socket with the cause's code and waits for the socket's goroutines.
func (s *Socket) Close() {
	s.End("closed", CloseNormal, false)
	s.mu.Lock()
	s.closing = true
	cause := *s.cause
	s.mu.Unlock()
	s.kick()
	if !cause.abrupt && s.connCtx.Err() == nil {
		select {
		case <-s.writerDone:
		case <-time.After(flushBound):
		}
		// The close handshake waits for the client's answer, which the
		// reader reads (or coder/websocket itself, before Start); it
		// bounds the wait.
		_ = s.c.Close(cause.code, closeReason(cause.reason))
	}
	s.closeOnEnd()
	s.connCancel()
	_ = s.c.CloseNow()
	s.bg.Wait()
	s.mu.Lock()
	s.ob.Reset()
	s.free = nil
	s.mu.Unlock()
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

// readLoop reads the client's messages until the socket fails or closes.
func (s *Socket) readLoop() {
	buf := make([]byte, 0, 4<<10)
	for {
		typ, rd, err := s.c.Reader(context.WithoutCancel(s.connCtx))
		if err != nil {
			s.readFailed(err)
			return
		}
		buf, err = readAll(buf[:0], rd)
		if err != nil {
			s.readFailed(err)
			return
		}
		s.receive(typ, buf)
		if s.ctx.Err() != nil {
			return // the receiver ended the session
		}
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
// the socket, stopped reading, or sent a message over the limit.
func (s *Socket) readFailed(err error) {
	if s.connCtx.Err() != nil {
		return // the socket is being closed
	}
	if s.stalled.Load() {
		s.End("the client stopped reading", CloseNormal, true)
		return
	}
	switch websocket.CloseStatus(err) {
	case -1:
		if errors.Is(err, websocket.ErrMessageTooBig) {
			s.End("the client sent a message over the size limit", CloseMessageTooBig, true)
			return
		}
		s.End("the client's connection failed", CloseNormal, true)
	default:
		s.End("the client closed the connection", CloseNormal, true)
	}
}

// pingLoop pings the client every PingInterval and ends the session when
// a pong does not come within PingTimeout.
func (s *Socket) pingLoop() {
	every := s.opts.PingInterval
	if every < 0 {
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
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.PingTimeout)
		err := s.c.Ping(ctx)
		cancel()
		if err != nil && s.ctx.Err() == nil {
			s.End("the client stopped answering pings", CloseNormal, true)
			return
		}
	}
}

// writeLoop writes the queue to the socket in order, one message at a
// time, each within WriteTimeout. It returns when the socket is closing
// and the queue is empty, or when a write fails.
func (s *Socket) writeLoop() {
	wctx := context.WithoutCancel(s.connCtx)
	// The write deadline: a write still blocked when it fires has a
	// client that takes nothing; closing the connection ends the write.
	deadline := time.AfterFunc(time.Hour, func() {
		s.stalled.Store(true)
		_ = s.c.CloseNow()
	})
	deadline.Stop()
	defer deadline.Stop()
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
		deadline.Reset(s.opts.WriteTimeout)
		err := s.c.Write(wctx, websocket.MessageType(msg[0]), msg[typeBytes:])
		deadline.Stop()
		if err != nil {
			if s.stalled.Load() {
				s.End("the client stopped reading", CloseNormal, true)
			} else if s.connCtx.Err() == nil {
				s.End("writing to the client failed", CloseNormal, true)
			}
			return
		}
		s.mu.Lock()
		s.ob.Pop(time.Now())
		if len(s.free) < maxFree && cap(msg) <= maxFrameBytes {
			s.free = append(s.free, msg[:0])
		}
		s.ob.Notify()
		s.mu.Unlock()
	}
}
