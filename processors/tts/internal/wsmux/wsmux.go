package wsmux

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"
)

// InboxSize bounds the messages buffered for one request; the reader waits
// when a consumer falls that far behind.
const InboxSize = 64

// Route reads what the reader needs from one text message: the message to
// hand on, the context id of the request it is for (valid until the next
// call), and whether it is for every request (an error for the whole
// connection). A message it cannot read returns an error and is logged
// and dropped. The reader calls it from one goroutine, so it may keep
// scratch between calls.
type Route[M any] func(data []byte) (m M, id []byte, all bool, err error)

// Options configure a [Conn]. Route is required.
type Options[M any] struct {
	// Route reads each text message; binary messages are dropped.
	Route Route[M]
	// Lone hands a message without a context id that is not for every
	// request to the one request there is, when there is exactly one;
	// otherwise such a message is dropped.
	Lone bool
	// Name starts the connection's log messages, such as "cartesia".
	Name string
	// Logger receives the messages that could not be read. Default: none.
	Logger *zap.Logger
}

// Conn is one websocket connection and the requests waiting on it. It
// outlives the request that dialled it (later requests share it) and
// lives until Close or Abort, which wait for its reader goroutine, or
// until the server ends it.
type Conn[M any] struct {
	ws   *websocket.Conn
	opts Options[M]
	// ctx is the connection's lifetime: the dialling caller's context
	// without its cancellation (the connection outlives that request),
	// cancelled by Close and Abort. The reader and WriteBrief run under it.
	ctx  context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	inboxes map[string]*inbox[M]
	err     error
	done    chan struct{} // closed when the reader has stopped

	born     time.Time    // the clock's origin for lastRead
	lastRead atomic.Int64 // when the last message came, since born
}

// inbox holds the messages of one request. gone is closed when the
// request stops listening, so the reader never blocks on it.
type inbox[M any] struct {
	ch   chan M
	gone chan struct{}
}

// New starts the reader of ws, which hands the messages to the registered
// requests until the connection ends. ctx gives the connection its values
// (not its cancellation).
func New[M any](ctx context.Context, ws *websocket.Conn, o Options[M]) *Conn[M] {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	cn := &Conn[M]{ws: ws, opts: o, inboxes: map[string]*inbox[M]{}, done: make(chan struct{}), born: time.Now()}
	cn.ctx, cn.stop = context.WithCancel(context.WithoutCancel(ctx))
	go cn.read() // the Conn owns its reader: Close and Abort wait for it
	return cn
}

// Dead reports whether the connection has ended (its reader has stopped).
func (cn *Conn[M]) Dead() bool {
	select {
	case <-cn.done:
		return true
	default:
		return false
	}
}

// Err returns the read error the connection ended with (a
// websocket.CloseError when the server closed it), or nil while it is
// open.
func (cn *Conn[M]) Err() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.err
}

// Register starts listening for the messages of context id and returns
// them; the channel is closed when the connection ends (at once if it has
// already). A second Register of the same id replaces the first.
func (cn *Conn[M]) Register(id string) <-chan M {
	in := &inbox[M]{ch: make(chan M, InboxSize), gone: make(chan struct{})}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err != nil || cn.Dead() {
		close(in.ch)
		return in.ch
	}
	if old, ok := cn.inboxes[id]; ok {
		close(old.gone)
	}
	cn.inboxes[id] = in
	return in.ch
}

// Unregister stops listening for context id; its later messages are
// dropped.
func (cn *Conn[M]) Unregister(id string) {
	cn.mu.Lock()
	if in, ok := cn.inboxes[id]; ok {
		close(in.gone)
		delete(cn.inboxes, id)
	}
	cn.mu.Unlock()
}

// Write sends a text message under ctx.
func (cn *Conn[M]) Write(ctx context.Context, msg []byte) error {
	return cn.ws.Write(ctx, websocket.MessageText, msg)
}

// briefWrite bounds a WriteBrief.
const briefWrite = time.Second

// WriteBrief sends a text message under the connection's lifetime,
// bounded by a second: for control messages a request sends on its way
// out, after its own context has ended.
func (cn *Conn[M]) WriteBrief(msg []byte) error {
	ctx, stop := context.WithTimeout(cn.ctx, briefWrite)
	defer stop()
	return cn.Write(ctx, msg)
}

// SilentFor returns how long ago the last message of any request came
// (or the connection opened).
func (cn *Conn[M]) SilentFor() time.Duration {
	return time.Since(cn.born) - time.Duration(cn.lastRead.Load())
}

// Close closes the connection with code and reason (the close handshake
// is bounded by the websocket library), ends its lifetime and waits for
// the reader.
func (cn *Conn[M]) Close(code websocket.StatusCode, reason string) {
	_ = cn.ws.Close(code, reason)
	cn.stop()
	<-cn.done
}

// Abort closes the connection at once, without a close handshake (the
// server is not answering), and waits for the reader.
func (cn *Conn[M]) Abort() {
	_ = cn.ws.CloseNow()
	cn.stop()
	<-cn.done
}

// read hands the server's messages to the requests by context id until
// the connection ends, then closes the inboxes still open.
func (cn *Conn[M]) read() {
	var err error
	defer func() {
		cn.mu.Lock()
		cn.err = err
		for id, in := range cn.inboxes {
			close(in.ch)
			delete(cn.inboxes, id)
		}
		cn.mu.Unlock()
		cn.stop()
		close(cn.done)
	}()
	for {
		var typ websocket.MessageType
		var data []byte
		typ, data, err = cn.ws.Read(cn.ctx)
		if err != nil {
			return
		}
		cn.lastRead.Store(int64(time.Since(cn.born)))
		if typ != websocket.MessageText {
			continue
		}
		m, id, all, perr := cn.opts.Route(data)
		if perr != nil {
			cn.opts.Logger.Warn(cn.opts.Name+": ignoring a message it cannot parse", zap.Error(perr))
			continue
		}
		cn.dispatch(m, id, all)
	}
}

// dispatch hands m to the request of context id; a message for all goes
// to every request.
func (cn *Conn[M]) dispatch(m M, id []byte, all bool) {
	cn.mu.Lock()
	var one *inbox[M]
	var targets []*inbox[M]
	switch {
	case len(id) > 0:
		one = cn.inboxes[string(id)]
	case all:
		targets = make([]*inbox[M], 0, len(cn.inboxes))
		for _, in := range cn.inboxes {
			targets = append(targets, in)
		}
	case cn.opts.Lone && len(cn.inboxes) == 1:
		// A message without a context id can only be for the one
		// request there is.
		for _, in := range cn.inboxes {
			one = in
		}
	}
	cn.mu.Unlock()
	if one != nil {
		cn.deliver(one, m)
	}
	for _, in := range targets {
		cn.deliver(in, m)
	}
}

// deliver waits while the request is behind, until it takes m, stops
// listening or the connection ends.
func (cn *Conn[M]) deliver(in *inbox[M], m M) {
	select {
	case in.ch <- m:
	case <-in.gone:
	case <-cn.ctx.Done():
	}
}
