package assemblyai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/processors/stt"
)

// Session is one open streaming session: what [Client.Connect] returns as
// an stt.Stream. Recv runs on its own goroutine; SendAudio, Finalize,
// KeepAlive and Close are called from one other goroutine (the writer);
// UpdateConfiguration, ID, ExpiresAt and Abort may be called from any.
type Session struct {
	ws          *websocket.Conn
	formatTurns bool
	idle        time.Duration // Timeouts.Idle; negative: unbounded

	// Set by Connect before the session is handed out; read-only after.
	id      string
	expires time.Time

	// Owned by the writer.
	chunk    []byte // audio gathered for the next message, cap = one message
	minBytes int    // the shortest message AssemblyAI accepts
	stall    *time.Timer
	stalled  atomic.Bool // the stall timer closed the socket

	// Owned by the reader (Recv).
	p       parser
	rbuf    []byte
	failure *serverError // the last Error message, for the close after it
}

var _ stt.Stream = (*Session)(nil)

// ID returns the session id from the server's Begin message, for support.
func (s *Session) ID() string { return s.id }

// ExpiresAt returns when the server will end the session (its maximum
// duration), or the zero time if it did not say.
func (s *Session) ExpiresAt() time.Time { return s.expires }

var (
	msgForceEndpoint = []byte(`{"type":"ForceEndpoint"}`)
	msgKeepAlive     = []byte(`{"type":"KeepAlive"}`)
	msgTerminate     = []byte(`{"type":"Terminate"}`)
)

// newSession wraps an open socket; the session starts with begin.
func newSession(ws *websocket.Conn, formatTurns bool, idle time.Duration, chunkBytes, minBytes int) *Session {
	s := &Session{ws: ws, formatTurns: formatTurns, idle: idle, chunk: make([]byte, 0, max(chunkBytes, minBytes)), minBytes: minBytes}
	// A write the server does not take within the idle timeout closes the
	// socket, which fails the write. The timer is reset for each write and
	// stopped after it; its callback only closes the socket.
	s.stall = time.AfterFunc(time.Hour, func() {
		s.stalled.Store(true)
		_ = s.ws.CloseNow()
	})
	s.stall.Stop()
	return s
}

// begin waits for the Begin message that opens the session.
func (s *Session) begin(ctx context.Context) error {
	for {
		typ, data, err := s.read(ctx)
		if err != nil {
			return s.closeError(ctx, err)
		}
		if typ != websocket.MessageText {
			continue
		}
		kind, err := s.p.parse(data)
		if err != nil {
			continue
		}
		switch kind {
		case msgBegin:
			s.id = s.p.msg.ID
			s.expires = s.p.expiresAt()
			return nil
		case msgError:
			s.failure = s.p.serverError()
		}
	}
}

// write sends one message, failing the session if the server does not
// take it within the idle timeout. Only the writer calls it.
func (s *Session) write(ctx context.Context, typ websocket.MessageType, b []byte) error {
	if s.idle <= 0 {
		return s.ws.Write(ctx, typ, b)
	}
	s.stall.Reset(s.idle)
	err := s.ws.Write(ctx, typ, b)
	s.stall.Stop()
	if err != nil && s.stalled.Load() {
		return &transient{fmt.Errorf("assemblyai: the server took no data for %v", s.idle)}
	}
	return err
}

// SendAudio implements stt.Stream: it gathers audio into messages of the
// client's Chunk length and sends each one as it fills.
func (s *Session) SendAudio(ctx context.Context, pcm []byte) error {
	for len(pcm) > 0 {
		n := min(cap(s.chunk)-len(s.chunk), len(pcm))
		s.chunk = append(s.chunk, pcm[:n]...)
		pcm = pcm[n:]
		if len(s.chunk) == cap(s.chunk) {
			if err := s.flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush sends the audio gathered so far, padded with silence to the
// shortest message AssemblyAI accepts.
func (s *Session) flush(ctx context.Context) error {
	if len(s.chunk) == 0 {
		return nil
	}
	for len(s.chunk) < s.minBytes {
		s.chunk = append(s.chunk, 0)
	}
	err := s.write(ctx, websocket.MessageBinary, s.chunk)
	s.chunk = s.chunk[:0]
	return err
}

// Finalize implements stt.Stream: the audio gathered so far goes out, then
// ForceEndpoint ends the turn, so its final transcript comes at once.
func (s *Session) Finalize(ctx context.Context) error {
	if err := s.flush(ctx); err != nil {
		return err
	}
	return s.write(ctx, websocket.MessageText, msgForceEndpoint)
}

// KeepAlive implements stt.Stream: it sends KeepAlive (which resets the
// server's inactivity timeout) and pings, failing the session when the
// pong does not come within the idle timeout.
func (s *Session) KeepAlive(ctx context.Context) error {
	if err := s.write(ctx, websocket.MessageText, msgKeepAlive); err != nil {
		return err
	}
	pctx, cancel := withBound(ctx, s.idle)
	defer cancel()
	if err := s.ws.Ping(pctx); err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			return &transient{fmt.Errorf("assemblyai: no answer to a ping within %v", s.idle)}
		}
		return err
	}
	return nil
}

// Close implements stt.Stream: the audio gathered so far goes out, then
// Terminate asks the server for its last turns, the Termination message
// and a normal close.
func (s *Session) Close(ctx context.Context) error {
	if err := s.flush(ctx); err != nil {
		return err
	}
	return s.write(ctx, websocket.MessageText, msgTerminate)
}

// Abort implements stt.Stream.
func (s *Session) Abort() error {
	s.stall.Stop()
	return s.ws.CloseNow()
}

// UpdateConfiguration changes the turn detection of the open session
// (UpdateConfiguration); zero fields keep their current values.
func (s *Session) UpdateConfiguration(ctx context.Context, td TurnDetection) error {
	b := []byte(`{"type":"UpdateConfiguration"`)
	if td.EndOfTurnConfidence > 0 {
		b = append(b, `,"end_of_turn_confidence_threshold":`...)
		b = strconv.AppendFloat(b, td.EndOfTurnConfidence, 'f', -1, 64)
	}
	if td.MinTurnSilence > 0 {
		b = append(b, `,"min_turn_silence":`...)
		b = strconv.AppendInt(b, td.MinTurnSilence.Milliseconds(), 10)
	}
	if td.MaxTurnSilence > 0 {
		b = append(b, `,"max_turn_silence":`...)
		b = strconv.AppendInt(b, td.MaxTurnSilence.Milliseconds(), 10)
	}
	b = append(b, '}')
	wctx, cancel := withBound(ctx, s.idle)
	defer cancel()
	return s.ws.Write(wctx, websocket.MessageText, b)
}

// Recv implements stt.Stream. Turns come as interim and final events,
// SpeechStarted as a speech-started event; Begin, Termination, Warning,
// unknown types and messages that do not parse are skipped. An Error
// message is kept for the close that follows it.
func (s *Session) Recv(ctx context.Context) (stt.Event, error) {
	for {
		typ, data, err := s.read(ctx)
		if err != nil {
			return stt.Event{}, s.closeError(ctx, err)
		}
		if typ != websocket.MessageText {
			continue
		}
		kind, err := s.p.parse(data)
		if err != nil {
			continue
		}
		switch kind {
		case msgTurn:
			if ev, ok := s.p.event(s.formatTurns); ok {
				return ev, nil
			}
		case msgSpeechStarted:
			return stt.Event{Kind: stt.EventSpeechStarted}, nil
		case msgError:
			s.failure = s.p.serverError()
		}
	}
}

// read reads one message into the session's buffer, which it reuses: the
// bytes are valid until the next read.
func (s *Session) read(ctx context.Context) (websocket.MessageType, []byte, error) {
	typ, r, err := s.ws.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	buf := s.rbuf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			s.rbuf = buf[:0]
			return 0, nil, err
		}
	}
	s.rbuf = buf
	return typ, buf, nil
}

// closeError maps the end of a session: a normal close is io.EOF, a close
// with a status a *CloseError with what the Error message before it said.
func (s *Session) closeError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == websocket.StatusNormalClosure {
			return io.EOF
		}
		e := &CloseError{Code: int(ce.Code), Reason: ce.Reason, SessionID: s.id}
		if s.failure != nil {
			e.Message = s.failure.text
		}
		return e
	}
	if s.failure != nil && s.failure.code != 0 {
		// The Error message came, the close frame did not.
		return &CloseError{Code: s.failure.code, Message: s.failure.text, SessionID: s.id}
	}
	return &transient{fmt.Errorf("assemblyai: connection lost: %w", err)}
}
