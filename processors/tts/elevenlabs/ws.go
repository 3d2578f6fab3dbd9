package elevenlabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/tts"
)

// drainWait is how long the client waits after the last audio of a
// context whose alignment has not yet covered its text (a normalised
// text, or a server that sends no alignment) before it closes the
// context, which makes the server finish with isFinal.
const drainWait = time.Second

// generate runs one attempt of a request over the websocket. started
// reports whether anything reached the consumer (then it cannot be
// retried).
func (c *Client) generate(ctx context.Context, text, ctxID string, rate int, yield func(tts.Chunk, error) bool) (started bool, err error) {
	open, body, err := c.openMessages(text, ctxID)
	if err != nil {
		return false, err
	}
	cn, err := c.connection(ctx, rate)
	if err != nil {
		return false, err
	}
	inbox := cn.register(ctxID)
	defer cn.unregister(ctxID)
	for i, msg := range [][]byte{open, body} {
		if err := cn.ws.Write(ctx, websocket.MessageText, msg); err != nil {
			if ctx.Err() != nil {
				if i > 0 { // the context is open on the server
					cn.closeContext(ctxID)
				}
				return false, nil
			}
			cn.close(websocket.StatusInternalError, "write failed")
			// The server may have answered the first message with an
			// error and closed before the second went out (a bad key):
			// that answer, not the failed write, is the request's error.
			if serr := serverError(inbox, cn); serr != nil {
				return false, serr
			}
			return false, &connError{fmt.Errorf("elevenlabs: sending the request: %w", err)}
		}
	}

	t := c.opts.Timeouts
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// arm starts the bound of the phase the request is in.
	var bound time.Duration
	arm := func(d time.Duration) {
		bound = d
		if d > 0 {
			timer.Reset(d)
		} else {
			timer.Stop()
		}
	}
	arm(t.FirstByte)

	var (
		m       message
		wb      wordBuilder
		target  = countSpoken(text)
		pushed  int // bytes of audio yielded
		closing bool
	)
	closeContext := func() {
		closing = true
		cn.closeContext(ctxID)
	}
	for {
		select {
		case <-ctx.Done():
			if !closing {
				closeContext()
			}
			return started, nil
		case <-timer.C:
			switch {
			case !started && !closing:
				closeContext()
				cn.close(websocket.StatusGoingAway, "no audio")
				return false, &llmhttp.TimeoutError{Provider: "elevenlabs", Phase: llmhttp.PhaseFirstByte, After: bound}
			case !closing:
				// The audio stopped before the alignment covered the text:
				// close the context so the server ends it.
				closeContext()
				arm(t.Idle)
			default:
				cn.close(websocket.StatusGoingAway, "stalled")
				return started, &llmhttp.TimeoutError{Provider: "elevenlabs", Phase: llmhttp.PhaseIdle, After: bound}
			}
		case data, ok := <-inbox:
			if !ok {
				return started, cn.lost()
			}
			if err := m.decode(data); err != nil {
				closeContext()
				return started, err
			}
			if m.isError() {
				return started, &APIError{Code: m.errCode, Message: m.errText}
			}
			var words []tts.Word
			if a := m.timing(); len(a.ends) > 0 {
				offset := time.Duration(int64(pushed/2) * int64(time.Second) / int64(rate))
				words = wb.add(nil, a, offset)
			}
			if m.final {
				words = wb.flush(words)
			}
			if len(m.audio) > 0 || len(words) > 0 {
				started = true
				pushed += len(m.audio)
				ch := tts.Chunk{Words: words}
				if len(m.audio) > 0 {
					ch.Audio, ch.SampleRate = m.audio, rate
				}
				if !yield(ch, nil) {
					if !closing {
						closeContext()
					}
					return started, errStopped
				}
			}
			if m.final {
				return started, nil
			}
			switch {
			case closing:
				arm(t.Idle)
			case wb.spoken >= target:
				closeContext()
				arm(t.Idle)
			case started:
				arm(min(drainWait, positive(t.Idle)))
			}
		}
	}
}

// positive returns d, or a long time for a disabled (negative) bound.
func positive(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Hour
	}
	return d
}

// wsURL is the websocket URL for output at rate.
func (c *Client) wsURL(rate int) string {
	q := make(url.Values, len(c.query)+1)
	for k, v := range c.query {
		q[k] = v
	}
	q.Set("output_format", "pcm_"+strconv.Itoa(rate))
	return c.ws + "?" + q.Encode()
}

// connection returns the open connection for rate, dialling one if there
// is none (or the open one has another rate).
func (c *Client) connection(ctx context.Context, rate int) (*conn, error) {
	if cn := c.current(rate); cn != nil {
		return cn, nil
	}
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	if cn := c.current(rate); cn != nil {
		return cn, nil
	}
	c.mu.Lock()
	closes := c.closes
	old := c.conn
	c.conn = nil
	c.mu.Unlock()
	if old != nil { // another rate
		old.shutdown()
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	if d := c.opts.Timeouts.Connect; d > 0 {
		t := time.AfterFunc(d, func() { timedOut.Store(true); cancel() })
		defer t.Stop()
	}
	ws, resp, err := websocket.Dial(dctx, c.wsURL(rate), &websocket.DialOptions{
		HTTPClient: c.opts.HTTPClient,
		HTTPHeader: http.Header{"xi-api-key": {c.opts.APIKey}},
	})
	if err != nil {
		switch {
		case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
			return nil, readAPIError(resp)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case timedOut.Load():
			return nil, &llmhttp.TimeoutError{Provider: "elevenlabs", Phase: llmhttp.PhaseConnect, After: c.opts.Timeouts.Connect}
		}
		return nil, &connError{fmt.Errorf("elevenlabs: connecting: %w", err)}
	}
	ws.SetReadLimit(maxMessageBytes)
	cn := newConn(ctx, ws, rate, c.opts.Logger)
	c.mu.Lock()
	if c.closes != closes {
		c.mu.Unlock()
		_ = ws.CloseNow()
		return nil, errors.New("elevenlabs: the client was closed while connecting")
	}
	c.conn = cn
	c.mu.Unlock()
	go cn.read() // the conn owns its reader: close waits for it
	return cn, nil
}

// current returns the connection if it is open at rate.
func (c *Client) current(rate int) *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && c.conn.dead() {
		c.conn = nil
	}
	if c.conn != nil && c.conn.rate != rate {
		return nil
	}
	return c.conn
}

// maxMessageBytes bounds one message from the server (a second of 48 kHz
// audio in base64 with its alignment is about 200 KB).
const maxMessageBytes = 4 << 20

// inboxSize bounds the messages buffered for one request; the reader waits
// when a consumer falls that far behind.
const inboxSize = 64

// conn is one websocket connection and the requests waiting on it. It
// outlives the request that dialled it (later requests share it) and lives
// until close, which waits for its reader goroutine.
type conn struct {
	ws   *websocket.Conn
	rate int
	log  *zap.Logger
	// ctx is the connection's lifetime: the dialling caller's context
	// without its cancellation (the connection outlives that request),
	// cancelled by close. The reader and the close messages run under it.
	ctx  context.Context
	stop context.CancelFunc

	mu       sync.Mutex
	contexts map[string]*inbox
	err      error
	done     chan struct{} // closed when the reader has stopped
}

// inbox holds the messages of one request. gone is closed when the
// request stops listening, so the reader never blocks on it.
type inbox struct {
	ch   chan []byte
	gone chan struct{}
}

func newConn(ctx context.Context, ws *websocket.Conn, rate int, log *zap.Logger) *conn {
	cn := &conn{ws: ws, rate: rate, log: log, contexts: map[string]*inbox{}, done: make(chan struct{})}
	cn.ctx, cn.stop = context.WithCancel(context.WithoutCancel(ctx))
	return cn
}

func (cn *conn) dead() bool {
	select {
	case <-cn.done:
		return true
	default:
		return false
	}
}

// lost is the error of a request whose connection ended under it: the
// server's reason when it closed with one (a bad key, a quota), else a
// transient connection error.
func (cn *conn) lost() error {
	cn.mu.Lock()
	err := cn.err
	cn.mu.Unlock()
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	return &connError{fmt.Errorf("elevenlabs: connection lost during the generation: %w", err)}
}

func (cn *conn) register(id string) <-chan []byte {
	in := &inbox{ch: make(chan []byte, inboxSize), gone: make(chan struct{})}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err != nil || cn.dead() {
		close(in.ch)
		return in.ch
	}
	if old, ok := cn.contexts[id]; ok {
		close(old.gone)
	}
	cn.contexts[id] = in
	return in.ch
}

func (cn *conn) unregister(id string) {
	cn.mu.Lock()
	if in, ok := cn.contexts[id]; ok {
		close(in.gone)
		delete(cn.contexts, id)
	}
	cn.mu.Unlock()
}

// closeContext asks the server to close a context, best effort and
// briefly: it finishes what it was flushing, then sends isFinal. An
// interrupted request has unregistered by then, so that audio is dropped.
func (cn *conn) closeContext(id string) {
	msg, _ := json.Marshal(closeMessage{ContextID: id, CloseContext: true})
	ctx, stop := context.WithTimeout(cn.ctx, time.Second)
	defer stop()
	if err := cn.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		cn.log.Debug("elevenlabs: sending close_context failed", zap.String("context_id", id), zap.Error(err))
	}
}

// shutdown ends the connection politely: close_socket, then the close
// handshake.
func (cn *conn) shutdown() {
	ctx, stop := context.WithTimeout(cn.ctx, time.Second)
	_ = cn.ws.Write(ctx, websocket.MessageText, []byte(`{"close_socket":true}`))
	stop()
	cn.close(websocket.StatusNormalClosure, "")
}

// close closes the connection (the close handshake is bounded by the
// websocket library), ends its context and waits for the reader.
func (cn *conn) close(code websocket.StatusCode, reason string) {
	_ = cn.ws.Close(code, reason)
	cn.stop()
	<-cn.done
}

// read hands the server's messages to the requests by context id until
// the connection ends, then fails the requests still waiting.
func (cn *conn) read() {
	var err error
	defer func() {
		cn.mu.Lock()
		cn.err = err
		for id, in := range cn.contexts {
			close(in.ch)
			delete(cn.contexts, id)
		}
		cn.mu.Unlock()
		cn.stop()
		close(cn.done)
	}()
	var r router
	for {
		var typ websocket.MessageType
		var data []byte
		typ, data, err = cn.ws.Read(cn.ctx)
		if err != nil {
			err = closeError(err)
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		id, isErr, perr := r.route(data)
		if perr != nil {
			cn.log.Warn("elevenlabs: ignoring a message it cannot parse", zap.Error(perr))
			continue
		}
		cn.dispatch(id, isErr, data)
	}
}

// dispatch hands data to the request of context id; an error without a
// context goes to every request.
func (cn *conn) dispatch(id []byte, isErr bool, data []byte) {
	cn.mu.Lock()
	var targets []*inbox
	if len(id) == 0 {
		if isErr {
			for _, in := range cn.contexts {
				targets = append(targets, in)
			}
		} else if len(cn.contexts) == 1 {
			// A message without a context id can only be for the one
			// request there is.
			for _, in := range cn.contexts {
				targets = append(targets, in)
			}
		}
	} else if in, ok := cn.contexts[string(id)]; ok {
		targets = append(targets, in)
	}
	cn.mu.Unlock()
	for _, in := range targets {
		select {
		case in.ch <- data: // waits while the request is behind
		case <-in.gone:
		case <-cn.ctx.Done():
		}
	}
}

// closeError turns the end of the connection into an error: an
// [APIError] when the server closed it with a reason other than a normal
// closure (ElevenLabs closes with 1008 and the reason for a bad key or an
// exhausted quota), else the read error.
func closeError(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code != websocket.StatusNormalClosure && ce.Reason != "" {
			return &APIError{CloseCode: int(ce.Code), Message: ce.Reason}
		}
		return fmt.Errorf("closed by the server with status %d", int(ce.Code))
	}
	return err
}

// serverError returns the error the server sent for a request whose
// connection has ended (its reader is done, so inbox holds what was
// delivered and is closed): an error message in inbox, else the server's
// close reason, else nil.
func serverError(inbox <-chan []byte, cn *conn) error {
	var m message
	for data := range inbox {
		if m.decode(data) == nil && m.isError() {
			return &APIError{Code: m.errCode, Message: m.errText}
		}
	}
	var ae *APIError
	if err := cn.lost(); errors.As(err, &ae) {
		return ae
	}
	return nil
}
