package wsmux

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// server is a websocket peer the test drives: what it is given on send it
// writes, and closing end closes the connection with a status.
type server struct {
	srv  *httptest.Server
	send chan string
	end  chan websocket.StatusCode
}

func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{send: make(chan string), end: make(chan websocket.StatusCode, 1)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		gone := make(chan struct{})
		defer func() { _ = ws.CloseNow(); <-gone }()
		go func() { // drain what the client writes, until it goes
			defer close(gone)
			for {
				if _, _, err := ws.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		for {
			select {
			case m := <-s.send:
				if err := ws.Write(r.Context(), websocket.MessageText, []byte(m)); err != nil {
					return
				}
			case code := <-s.end:
				_ = ws.Close(code, "bye")
				return
			case <-gone:
				return
			}
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// say sends m from the server, failing the test if nothing takes it.
func (s *server) say(t *testing.T, m string) {
	t.Helper()
	select {
	case s.send <- m:
	case <-time.After(5 * time.Second):
		t.Fatalf("the server could not send %s", m)
	}
}

// route reads messages of the form "id:text"; an id of "*" is for every
// request, "!" makes a message that cannot be read.
func route(data []byte) (string, []byte, bool, error) {
	id, text, ok := bytes.Cut(data, []byte(":"))
	switch {
	case !ok || string(id) == "!":
		return "", nil, false, errors.New("unreadable")
	case string(id) == "*":
		return string(text), nil, true, nil
	}
	return string(text), id, false, nil
}

func dial(t *testing.T, s *server, lone bool) *Conn[string] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(ctx, ws, Options[string]{Route: route, Lone: lone, Name: "test"})
}

// next returns the next message of in, or "closed".
func next(t *testing.T, in <-chan string) string {
	t.Helper()
	select {
	case m, ok := <-in:
		if !ok {
			return "closed"
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
		return ""
	}
}

func TestMessagesGoToTheirRequestByContextID(t *testing.T) {
	s := newServer(t)
	cn := dial(t, s, false)
	defer cn.Close(websocket.StatusNormalClosure, "")
	a, b := cn.Register("a"), cn.Register("b")
	for _, m := range []string{"b:1", "x:lost", "!:garbage", "a:2", ":no id", "*:everyone", "a:3"} {
		s.say(t, m)
	}
	var got []string
	for range 3 {
		got = append(got, "a "+next(t, a))
	}
	for range 2 {
		got = append(got, "b "+next(t, b))
	}
	want := []string{"a 2", "a everyone", "a 3", "b 1", "b everyone"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
}

func TestLoneHandsMessagesWithoutAnIDToTheOnlyRequest(t *testing.T) {
	s := newServer(t)
	cn := dial(t, s, true)
	defer cn.Close(websocket.StatusNormalClosure, "")
	a := cn.Register("a")
	s.say(t, ":for a")
	if got := next(t, a); got != "for a" {
		t.Fatalf("the only request got %q", got)
	}
	b := cn.Register("b")
	s.say(t, ":for nobody")
	s.say(t, "b:for b")
	if got := next(t, b); got != "for b" {
		t.Fatalf("with two requests an id-less message was not dropped: b got %q", got)
	}
	select {
	case m := <-a:
		t.Fatalf("with two requests an id-less message went to a: %q", m)
	default:
	}
}

func TestAnUnregisteredRequestGetsNothingAndNeverBlocksTheReader(t *testing.T) {
	s := newServer(t)
	cn := dial(t, s, false)
	defer cn.Close(websocket.StatusNormalClosure, "")
	cn.Register("a") // never read: the reader must not wait on it once it is gone
	b := cn.Register("b")
	for range InboxSize {
		s.say(t, "a:x")
	}
	cn.Unregister("a")
	s.say(t, "a:after")
	s.say(t, "b:y")
	if got := next(t, b); got != "y" {
		t.Fatalf("b got %q", got)
	}
}

func TestTheEndOfTheConnectionClosesEveryInboxAndKeepsTheError(t *testing.T) {
	s := newServer(t)
	cn := dial(t, s, false)
	a := cn.Register("a")
	if cn.Err() != nil || cn.Dead() {
		t.Fatalf("an open connection: err %v, dead %v", cn.Err(), cn.Dead())
	}
	s.end <- websocket.StatusPolicyViolation
	if got := next(t, a); got != "closed" {
		t.Fatalf("a got %q, want its inbox closed", got)
	}
	for !cn.Dead() {
		time.Sleep(time.Millisecond)
	}
	var ce websocket.CloseError
	if !errors.As(cn.Err(), &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "bye" {
		t.Errorf("Err() = %v, want the server's close status", cn.Err())
	}
	if got := next(t, cn.Register("late")); got != "closed" {
		t.Errorf("a request registered after the end got %q", got)
	}
	cn.Close(websocket.StatusNormalClosure, "") // closing a dead connection returns
}

func TestCloseWaitsForTheReaderEvenWhenARequestIsBehind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(*Conn[string])
	}{
		{"close", func(cn *Conn[string]) { cn.Close(websocket.StatusNormalClosure, "") }},
		{"abort", func(cn *Conn[string]) { cn.Abort() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			cn := dial(t, s, false)
			a := cn.Register("a")
			for range InboxSize + 1 { // the last one waits in the reader
				s.say(t, "a:x")
			}
			done := make(chan struct{})
			go func() { tc.close(cn); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("closing waited on a request that was behind")
			}
			if !cn.Dead() || cn.ctx.Err() == nil {
				t.Error("the reader still runs, or the connection's lifetime goes on, after closing")
			}
			n := 0
			for range a {
				n++
			}
			if n > InboxSize+1 {
				t.Errorf("%d messages in the inbox", n)
			}
		})
	}
}

func TestWritesReachTheServerAndSilenceIsMeasuredFromTheLastMessage(t *testing.T) {
	s := newServer(t)
	cn := dial(t, s, false)
	defer cn.Close(websocket.StatusNormalClosure, "")
	a := cn.Register("a")
	if err := cn.Write(context.Background(), []byte("hello")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := cn.WriteBrief([]byte("bye")); err != nil {
		t.Fatalf("WriteBrief: %v", err)
	}
	time.Sleep(20 * time.Millisecond)
	before := cn.SilentFor()
	s.say(t, "a:x")
	next(t, a)
	if after := cn.SilentFor(); after >= before || before < 20*time.Millisecond {
		t.Errorf("silent for %v before the message and %v after it", before, after)
	}
	cn.Close(websocket.StatusNormalClosure, "")
	if err := cn.WriteBrief([]byte("late")); err == nil {
		t.Error("a write after Close succeeded")
	}
}
