package wsfake

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// Options configure a Server. Only Scripts is required.
type Options struct {
	// Path is what URL ends with: the endpoint the client dials, such as
	// "/v1/listen".
	Path string
	// Scripts are played one per connection, in order; the last one plays
	// again for any further connection.
	Scripts []Script
	// Handshake, when set, sees every handshake request before it is
	// answered, one at a time and in order; n counts from 0. It is the
	// place to record queries and headers.
	Handshake func(n int, r *http.Request)
	// Reject, when set, may refuse handshake n: it writes the whole answer
	// to w and returns true, or returns false to let the session start.
	Reject func(n int, w http.ResponseWriter) bool
	// Expect waits until the client has sent what want (an Expect step's
	// Text) asks for, reading through c. It returns false when the
	// connection ended first, or after reporting with c.Errorf a message
	// that can never match. A script with Expect steps needs it.
	Expect func(c *Conn, want string) bool
	// AfterScript runs when a script ran out without closing. Nil reads
	// and drops messages until the client closes.
	AfterScript func(c *Conn)
	// ReadLimit bounds one client message; 0 keeps coder/websocket's
	// default of 32 KiB.
	ReadLimit int64
	// Sent, when set, sees each message a Send step has sent, for a fake
	// that keeps the state a server would (a response in progress, say).
	Sent func(c *Conn, msg []byte)
}

// Server is a WebSocket server on the loopback interface that plays scripts.
// Start it with New; it closes when the test ends.
type Server struct {
	t    testing.TB
	opts Options
	srv  *httptest.Server
	ctx  context.Context // ends the sessions when the Server closes
	stop context.CancelFunc

	mu       sync.Mutex
	closed   bool
	partial  bool
	conns    int
	sessions sync.WaitGroup
	unplayed []string // one line per connection that ended early
}

// New starts a Server for the test t and closes it when t ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if len(opts.Scripts) == 0 {
		t.Fatal("wsfake: a server needs at least one script")
	}
	s := &Server{t: t, opts: opts}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// URL is the ws:// address clients dial: the server and Options.Path.
func (s *Server) URL() string {
	return "ws" + strings.TrimPrefix(s.srv.URL, "http") + s.opts.Path
}

// Connections counts the handshakes so far, refused ones included.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// AllowPartial lets connections end before their script is done, for a
// test that stops a session early on purpose. Without it such a connection
// fails the test when the Server closes, naming the step never reached.
func (s *Server) AllowPartial() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = true
}

// Close ends every session, waits for them, and stops the server. A
// connection that ended before its script was done fails the test here,
// unless AllowPartial was called. Close may be called more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.sessions.Wait()
	s.srv.Close()
	if !s.partial {
		for _, u := range s.unplayed {
			s.t.Errorf("wsfake: %s", u)
		}
	}
}

// Conn is one client connection, as Options.Expect and Options.AfterScript
// see it.
type Conn struct {
	// N counts connections from 0, refused handshakes included.
	N int
	// Request is the handshake request.
	Request *http.Request

	s      *Server
	ws     *websocket.Conn
	ctx    context.Context
	script Script
	vars   map[string]string
}

// Read returns the client's next message; an error means the connection
// has ended (or the Server is closing).
func (c *Conn) Read() (websocket.MessageType, []byte, error) {
	return c.ws.Read(c.ctx)
}

// Write sends msg as a text message now, outside the script: what a
// server answers by itself (an error for a client event it refuses).
func (c *Conn) Write(msg []byte) error {
	return c.ws.Write(c.ctx, websocket.MessageText, msg)
}

// Set makes "$name" stand for value in the messages Send steps send from
// now on, such as a context id the client chose.
func (c *Conn) Set(name, value string) {
	if c.vars == nil {
		c.vars = map[string]string{}
	}
	c.vars[name] = value
}

// Close closes the connection with a status and a reason.
func (c *Conn) Close(code websocket.StatusCode, reason string) error {
	return c.ws.Close(code, reason)
}

// Errorf fails the test with a message that names the script and the
// connection.
func (c *Conn) Errorf(format string, args ...any) {
	c.s.t.Errorf("wsfake: %s (connection %d): %s", c.script.Name, c.N, fmt.Sprintf(format, args...))
}

func (c *Conn) expand(msg string) string {
	for name, v := range c.vars {
		msg = strings.ReplaceAll(msg, "$"+name, v)
	}
	return msg
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "wsfake: closed", http.StatusServiceUnavailable)
		return
	}
	n := s.conns
	s.conns++
	if s.opts.Handshake != nil {
		s.opts.Handshake(n, r)
	}
	s.sessions.Add(1)
	s.mu.Unlock()
	defer s.sessions.Done()
	if s.opts.Reject != nil && s.opts.Reject(n, w) {
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	if s.opts.ReadLimit != 0 {
		ws.SetReadLimit(s.opts.ReadLimit)
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	c := &Conn{N: n, Request: r, s: s, ws: ws, ctx: ctx, script: s.opts.Scripts[min(n, len(s.opts.Scripts)-1)]}
	if i, why := c.play(); i < len(c.script.Steps) {
		st := c.script.Steps[i]
		s.mu.Lock()
		s.unplayed = append(s.unplayed, fmt.Sprintf("%s:%d: connection %d ended before %q %s", c.script.Name, st.Line, n, st.String(), why))
		s.mu.Unlock()
		return
	}
	if s.opts.AfterScript != nil {
		s.opts.AfterScript(c)
		return
	}
	for {
		if _, _, err := c.Read(); err != nil {
			return
		}
	}
}

// play runs the script; it returns len(Steps) when it ran to the end or
// closed the connection as the script says, or else the index of the step
// it stopped at and what did not happen to it.
func (c *Conn) play() (int, string) {
	for i, st := range c.script.Steps {
		switch st.Kind {
		case Expect:
			if c.s.opts.Expect == nil {
				c.Errorf("%d: an expect step, but Options.Expect is nil", st.Line)
				return i, "could be matched"
			}
			if !c.s.opts.Expect(c, st.Text) {
				return i, "was matched"
			}
		case Send:
			msg := []byte(c.expand(st.Text))
			if err := c.ws.Write(c.ctx, websocket.MessageText, msg); err != nil {
				return i, "was sent: " + err.Error()
			}
			if c.s.opts.Sent != nil {
				c.s.opts.Sent(c, msg)
			}
		case Close:
			_ = c.ws.Close(st.Code, st.Text)
			return len(c.script.Steps), ""
		}
	}
	return len(c.script.Steps), ""
}
