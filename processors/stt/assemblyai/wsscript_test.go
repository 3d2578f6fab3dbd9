package assemblyai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/internal/wsfake"
)

// fakeAssemblyAI plays testdata scripts (see testdata/README.md) with
// AssemblyAI's meaning for "<" lines, one per connection, in order (the
// last one again for any further connection), and records what clients
// sent.
type fakeAssemblyAI struct {
	srv *wsfake.Server
	// reject, when set, refuses handshake n with a status and a body.
	reject func(n int) (int, string)

	mu      sync.Mutex
	urls    []*url.URL
	auth    []string
	texts   []string   // the client's text messages, in order, all connections
	sent    [][]string // per connection: "audio N" and text messages, in order
	audio   []int      // bytes of audio per connection
	endings []string   // per connection: how the client's side ended
}

func newFake(t testing.TB, scripts ...string) *fakeAssemblyAI {
	t.Helper()
	f := &fakeAssemblyAI{}
	opts := wsfake.Options{Path: "/v3/ws", Handshake: f.handshake, Reject: f.refuse, Expect: f.expect, AfterScript: f.afterScript}
	for _, s := range scripts {
		opts.Scripts = append(opts.Scripts, wsfake.Load(t, "testdata/"+s))
	}
	f.srv = wsfake.New(t, opts)
	return f
}

// base is the base URL a client is given: the fake's address without the
// endpoint path, which the client adds.
func (f *fakeAssemblyAI) base() string { return strings.TrimSuffix(f.srv.URL(), "/v3/ws") }

func (f *fakeAssemblyAI) connections() int { return f.srv.Connections() }

// textTypes returns the types of the client's text messages so far.
func (f *fakeAssemblyAI) textTypes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, s := range f.texts {
		var m struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(s), &m)
		out = append(out, m.Type)
	}
	return out
}

// ending returns how connection n ended on the client's side, "" while it
// is open.
func (f *fakeAssemblyAI) ending(n int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n >= len(f.endings) {
		return ""
	}
	return f.endings[n]
}

func (f *fakeAssemblyAI) handshake(_ int, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.urls = append(f.urls, r.URL)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.audio = append(f.audio, 0)
	f.sent = append(f.sent, nil)
	f.endings = append(f.endings, "")
}

func (f *fakeAssemblyAI) refuse(n int, w http.ResponseWriter) bool {
	if f.reject == nil {
		return false
	}
	status, body := f.reject(n)
	if status == 0 {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
	return true
}

// next reads one client message, recording it, and reports its kind:
// "audio" or the type of a text message. It holds binary messages to
// AssemblyAI's bounds of 50 ms to 1 s.
func (f *fakeAssemblyAI) next(c *wsfake.Conn) (kind string, ok bool) {
	typ, data, err := c.Read()
	if err != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.endings[c.N] == "" {
			f.endings[c.N] = ended(err)
		}
		return "", false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if typ == websocket.MessageBinary {
		rate, _ := strconv.Atoi(c.Request.URL.Query().Get("sample_rate"))
		if len(data) < rate/10 || len(data) > 2*rate {
			c.Errorf("audio message of %d bytes at %d Hz: outside 50 ms..1 s (AssemblyAI closes with 3007)", len(data), rate)
		}
		f.audio[c.N] += len(data)
		f.sent[c.N] = append(f.sent[c.N], fmt.Sprintf("audio %d", len(data)))
		return "audio", true
	}
	var m struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		c.Errorf("client sent invalid JSON %q", data)
		return "", false
	}
	f.texts = append(f.texts, string(data))
	f.sent[c.N] = append(f.sent[c.N], string(data))
	return m.Type, true
}

// ended says how a read error ended the client's side.
func ended(err error) string {
	if code := websocket.CloseStatus(err); code != -1 {
		return "close " + strconv.Itoa(int(code))
	}
	return "dropped"
}

// expect waits for "audio N" more bytes of audio, for the client's
// ForceEndpoint, Terminate, KeepAlive or UpdateConfiguration message, or
// ("cut") drops the connection.
func (f *fakeAssemblyAI) expect(c *wsfake.Conn, want string) bool {
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
	if want == "cut" {
		f.srv.AllowPartial()
		return false // wsfake drops the connection without a close frame
	}
	typ, known := map[string]string{"force_endpoint": "ForceEndpoint", "terminate": "Terminate", "keepalive": "KeepAlive", "update": "UpdateConfiguration"}[want]
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

// afterScript ends a session that ran out of script as AssemblyAI does
// on Terminate, with a normal close (wsfake cannot send after the script,
// so scripts that check the Termination message send it themselves).
func (f *fakeAssemblyAI) afterScript(c *wsfake.Conn) {
	for {
		kind, ok := f.next(c)
		if !ok {
			return
		}
		if kind == "Terminate" {
			_ = c.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}
