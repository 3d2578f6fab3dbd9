package deepgram

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/internal/wsfake"
)

// fakeDeepgram plays testdata scripts (see testdata/README.md) with
// Deepgram's meaning for "<" lines, one per connection, in order (the last
// one again for any further connection), and records what clients sent.
type fakeDeepgram struct {
	srv *wsfake.Server
	// reject, when set, refuses handshake n with a status and a body.
	reject func(n int) (int, string)
	// hungUp receives one value each time a connection that ran out of
	// script ends without a CloseStream: the client closed it (or the test
	// is ending).
	hungUp chan struct{}

	mu      sync.Mutex
	queries []url.Values
	auth    []string
	texts   []string // the types of the client's text messages, in order
	audio   []int    // bytes of audio per connection
}

func newFake(t testing.TB, scripts ...string) *fakeDeepgram {
	t.Helper()
	f := &fakeDeepgram{hungUp: make(chan struct{}, 16)}
	opts := wsfake.Options{Path: "/v1/listen", Handshake: f.handshake, Reject: f.refuse, Expect: f.expect, AfterScript: f.afterScript}
	for _, s := range scripts {
		opts.Scripts = append(opts.Scripts, wsfake.Load(t, "testdata/"+s))
	}
	f.srv = wsfake.New(t, opts)
	return f
}

func (f *fakeDeepgram) url() string { return f.srv.URL() }

func (f *fakeDeepgram) connections() int { return f.srv.Connections() }

func (f *fakeDeepgram) textTypes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.texts...)
}

func (f *fakeDeepgram) handshake(_ int, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, r.URL.Query())
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.audio = append(f.audio, 0)
}

func (f *fakeDeepgram) refuse(n int, w http.ResponseWriter) bool {
	if f.reject == nil {
		return false
	}
	status, body := f.reject(n)
	if status == 0 {
		return false
	}
	w.Header().Set("dg-request-id", "req-"+strconv.Itoa(n))
	w.Header().Set("dg-error", "refused by the fake")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
	return true
}

// next reads one client message, recording it, and reports its kind:
// "audio" or the type of a text message.
func (f *fakeDeepgram) next(c *wsfake.Conn) (kind string, ok bool) {
	typ, data, err := c.Read()
	if err != nil {
		return "", false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if typ == websocket.MessageBinary {
		f.audio[c.N] += len(data)
		return "audio", true
	}
	var m struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		c.Errorf("client sent invalid JSON %q", data)
		return "", false
	}
	f.texts = append(f.texts, m.Type)
	return m.Type, true
}

// expect waits for "audio N" more bytes of audio, or for the client's
// "finalize" (Finalize) or "close" (CloseStream) message.
func (f *fakeDeepgram) expect(c *wsfake.Conn, want string) bool {
	if n, ok := strings.CutPrefix(want, "audio "); ok {
		bytes, err := strconv.Atoi(n)
		if err != nil {
			c.Errorf("bad line %q", "< "+want)
			return false
		}
		f.mu.Lock()
		target := f.audio[c.N] + bytes
		f.mu.Unlock()
		for {
			f.mu.Lock()
			have := f.audio[c.N]
			f.mu.Unlock()
			if have >= target {
				return true
			}
			if _, ok := f.next(c); !ok {
				return false
			}
		}
	}
	typ, known := map[string]string{"finalize": "Finalize", "close": "CloseStream"}[want]
	if !known {
		c.Errorf("unknown expectation %q", "< "+want)
		return false
	}
	for {
		kind, ok := f.next(c)
		if !ok {
			return false
		}
		if kind == typ {
			return true
		}
	}
}

// afterScript behaves like Deepgram: CloseStream ends the session with a
// normal close.
func (f *fakeDeepgram) afterScript(c *wsfake.Conn) {
	for {
		kind, ok := f.next(c)
		if !ok {
			select {
			case f.hungUp <- struct{}{}:
			default:
			}
			return
		}
		if kind == "CloseStream" {
			_ = c.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}
