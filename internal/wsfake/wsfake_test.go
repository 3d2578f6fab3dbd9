package wsfake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, text string) Script {
	t.Helper()
	s, err := Parse("test.ws", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recorder is a testing.TB that keeps failures instead of reporting them,
// so that a test can check the failure a Server reports.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// echoExpect matches an expect step whose text is the client's next message.
func echoExpect(c *Conn, want string) bool {
	_, data, err := c.Read()
	if err != nil {
		return false
	}
	if string(data) != want {
		c.Errorf("got %q, want %q", data, want)
		return false
	}
	return true
}

func dial(t *testing.T, s *Server) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(context.Background(), s.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

func TestParseReadsEachKindOfLine(t *testing.T) {
	s := mustParse(t, "# a comment\n\n< request\n> {\"a\":1}\nclose 4000 too slow\nclose 1000\n")
	want := []Step{
		{Kind: Expect, Text: "request", Line: 3},
		{Kind: Send, Text: `{"a":1}`, Line: 4},
		{Kind: Close, Code: 4000, Text: "too slow", Line: 5},
		{Kind: Close, Code: 1000, Line: 6},
	}
	if diff := cmp.Diff(want, s.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if got := s.Steps[2].String(); got != "close 4000 too slow" {
		t.Errorf("a step prints as %q, want its script line", got)
	}
}

func TestParseNamesTheBadLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"> ok\nhello\n", `test.ws:2: unknown script line "hello"`},
		{"close abc\n", `test.ws:1: bad close line "close abc"`},
	} {
		_, err := Parse("test.ws", strings.NewReader(tc.text))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) = %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestServerPlaysTheScript(t *testing.T) {
	s := New(t, Options{
		Path:    "/v1/listen",
		Scripts: []Script{mustParse(t, "< hello\n> hi $WHO\nclose 4001 bye\n")},
		Expect: func(c *Conn, want string) bool {
			c.Set("WHO", "you")
			return echoExpect(c, want)
		},
	})
	if !strings.HasPrefix(s.URL(), "ws://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/v1/listen") {
		t.Errorf("URL %q, want ws:// on loopback ending in the path", s.URL())
	}
	ws := dial(t, s)
	if err := ws.Write(context.Background(), websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	_, data, err := ws.Read(context.Background())
	if err != nil || string(data) != "hi you" {
		t.Fatalf("read %q, %v; want the sent line with $WHO replaced", data, err)
	}
	_, _, err = ws.Read(context.Background())
	if st := websocket.CloseStatus(err); st != 4001 {
		t.Errorf("close status %d (%v), want the script's 4001", st, err)
	}
	if n := s.Connections(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestEachConnectionGetsTheNextScriptAndTheLastRepeats(t *testing.T) {
	s := New(t, Options{Scripts: []Script{mustParse(t, "> one\n"), mustParse(t, "> two\n")}})
	for _, want := range []string{"one", "two", "two"} {
		ws := dial(t, s)
		if _, data, err := ws.Read(context.Background()); err != nil || string(data) != want {
			t.Errorf("read %q, %v; want %q", data, err, want)
		}
		ws.Close(websocket.StatusNormalClosure, "")
	}
}

func TestRejectRefusesTheHandshake(t *testing.T) {
	var seen []string
	s := New(t, Options{
		Scripts:   []Script{mustParse(t, "> hello\n")},
		Handshake: func(n int, r *http.Request) { seen = append(seen, fmt.Sprint(n, r.URL.Query().Get("k"))) },
		Reject: func(n int, w http.ResponseWriter) bool {
			if n > 0 {
				return false
			}
			http.Error(w, "no", http.StatusTooManyRequests)
			return true
		},
	})
	_, resp, err := websocket.Dial(context.Background(), s.URL()+"?k=a", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("first dial: err %v, response %v; want a 429 refusal", err, resp)
	}
	ws, _, err := websocket.Dial(context.Background(), s.URL()+"?k=b", nil)
	if err != nil {
		t.Fatalf("second dial: %v", err)
	}
	defer ws.CloseNow()
	if _, data, err := ws.Read(context.Background()); err != nil || string(data) != "hello" {
		t.Errorf("read %q, %v", data, err)
	}
	if diff := cmp.Diff([]string{"0a", "1b"}, seen); diff != "" {
		t.Errorf("handshakes seen (-want +got):\n%s", diff)
	}
}

func TestAnUnmatchedStepFailsTheTestByName(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec, Options{Scripts: []Script{mustParse(t, "# greeting\n< hello\n> hi\n")}, Expect: echoExpect})
	ws := dial(t, s)
	ws.Close(websocket.StatusNormalClosure, "") // leaves without saying hello
	s.Close()
	want := []string{`wsfake: test.ws:2: connection 0 ended before "< hello" was matched`}
	if diff := cmp.Diff(want, rec.failures()); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

func TestAWrongMessageIsReportedWithTheScriptName(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec, Options{Scripts: []Script{mustParse(t, "< hello\n")}, Expect: echoExpect})
	ws := dial(t, s)
	if err := ws.Write(context.Background(), websocket.MessageText, []byte("bonjour")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(context.Background()); err == nil {
		t.Fatal("the server kept the session after a wrong message")
	}
	s.Close()
	got := rec.failures()
	if len(got) != 2 || got[0] != `wsfake: test.ws (connection 0): got "bonjour", want "hello"` || got[1] != `wsfake: test.ws:1: connection 0 ended before "< hello" was matched` {
		t.Errorf("failures %q, want the mismatch and the unplayed step", got)
	}
}

func TestAllowPartialAcceptsASessionEndedEarly(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec, Options{Scripts: []Script{mustParse(t, "< hello\n")}, Expect: echoExpect})
	s.AllowPartial()
	ws := dial(t, s)
	ws.Close(websocket.StatusNormalClosure, "")
	s.Close()
	if got := rec.failures(); len(got) != 0 {
		t.Errorf("failures %q, want none", got)
	}
}

func TestCloseEndsOpenSessionsAndRefusesNewOnes(t *testing.T) {
	s := New(t, Options{Scripts: []Script{mustParse(t, "> hello\n")}})
	ws := dial(t, s)
	if _, _, err := ws.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The client stays connected; Close must still return, ending the
	// session (goleak in TestMain checks nothing is left running).
	s.Close()
	if _, _, err := ws.Read(context.Background()); err == nil {
		t.Error("the session is still open after Close")
	}
	s.Close() // a second Close is harmless
	if _, _, err := websocket.Dial(context.Background(), s.URL(), nil); err == nil {
		t.Error("a dial after Close succeeded")
	}
}

func TestLoadFailsTheTestOnAMissingFile(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Load(rec, "testdata/missing.ws")
	}()
	<-done
	if !rec.failed || !errors.Is(rec.err, errFatal) {
		t.Error("Load of a missing file did not fail the test")
	}
}

var errFatal = errors.New("fatal")

// fatalRecorder records a Fatal and ends its goroutine, as testing does.
type fatalRecorder struct {
	testing.TB
	failed bool
	err    error
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatal(args ...any) {
	r.failed, r.err = true, errFatal
	runtime.Goexit()
}
