package elevenlabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/wsmux"
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
	inbox := cn.Register(ctxID)
	defer cn.Unregister(ctxID)
	for i, msg := range [][]byte{open, body} {
		if err := cn.Write(ctx, msg); err != nil {
			if ctx.Err() != nil {
				if i > 0 { // the context is open on the server
					cn.closeContext(ctxID)
				}
				return false, nil
			}
			cn.Close(websocket.StatusInternalError, "write failed")
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
				cn.Close(websocket.StatusGoingAway, "no audio")
				return false, &llmhttp.TimeoutError{Provider: "elevenlabs", Phase: llmhttp.PhaseFirstByte, After: bound}
			case !closing:
				// The audio stopped before the alignment covered the text:
				// close the context so the server ends it.
				closeContext()
				arm(t.Idle)
			default:
				cn.Close(websocket.StatusGoingAway, "stalled")
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
		cn.Abort()
		return nil, errors.New("elevenlabs: the client was closed while connecting")
	}
	c.conn = cn
	c.mu.Unlock()
	return cn, nil
}

// current returns the connection if it is open at rate.
func (c *Client) current(rate int) *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && c.conn.Dead() {
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

// conn is the shared websocket connection at one output rate, with
// ElevenLabs' control messages and error words on top. Server messages
// reach the requests as their raw JSON.
type conn struct {
	*wsmux.Conn[[]byte]
	rate int
	log  *zap.Logger
}

// newConn starts the connection's reader on ws.
func newConn(ctx context.Context, ws *websocket.Conn, rate int, log *zap.Logger) *conn {
	var r router
	route := func(data []byte) ([]byte, []byte, bool, error) {
		id, isErr, err := r.route(data)
		return data, id, isErr, err
	}
	// A message without a context id can only be for the one request
	// there is (Lone).
	mc := wsmux.New(ctx, ws, wsmux.Options[[]byte]{Route: route, Lone: true, Name: "elevenlabs", Logger: log})
	return &conn{Conn: mc, rate: rate, log: log}
}

// lost is the error of a request whose connection ended under it: the
// server's reason when it closed with one (a bad key, a quota), else a
// transient connection error.
func (cn *conn) lost() error {
	err := closeError(cn.Err())
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	return &connError{fmt.Errorf("elevenlabs: connection lost during the generation: %w", err)}
}

// closeContext asks the server to close a context, best effort and
// briefly: it finishes what it was flushing, then sends isFinal. An
// interrupted request has unregistered by then, so that audio is dropped.
func (cn *conn) closeContext(id string) {
	msg, _ := json.Marshal(closeMessage{ContextID: id, CloseContext: true})
	if err := cn.WriteBrief(msg); err != nil {
		cn.log.Debug("elevenlabs: sending close_context failed", zap.String("context_id", id), zap.Error(err))
	}
}

// shutdown ends the connection politely: close_socket, then the close
// handshake.
func (cn *conn) shutdown() {
	_ = cn.WriteBrief([]byte(`{"close_socket":true}`))
	cn.Close(websocket.StatusNormalClosure, "")
}

// closeError turns the end of the connection into an error: an
// [APIError] when the server closed it with a reason other than a normal
// closure (ElevenLabs closes with 1008 and the reason for a bad key or an
// exhausted quota), else the read error.
func closeError(err error) error {
	if err == nil {
		return nil
	}
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
