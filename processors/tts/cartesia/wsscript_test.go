package cartesia

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/framewire/framewire/internal/wsfake"
)

// fakeCartesia plays testdata scripts (see testdata/README.md) with
// Cartesia's meaning for "<" lines, one per connection, in order (the last
// one again for any further connection), and records what clients sent.
type fakeCartesia struct {
	srv *wsfake.Server
	// reject, when set, answers the handshake instead (status, body).
	reject func(n int) (int, string)

	// hungUp receives one value each time a connection that ran out of
	// script ends: the client closed it (or the test is ending).
	hungUp chan struct{}

	mu       sync.Mutex
	received []map[string]any
	query    []string
}

func newFake(t testing.TB, scripts ...string) *fakeCartesia {
	t.Helper()
	f := &fakeCartesia{hungUp: make(chan struct{}, 16)}
	opts := wsfake.Options{Path: "/tts/websocket", Handshake: f.handshake, Reject: f.refuse, Expect: f.expect, AfterScript: f.afterScript, ReadLimit: 1 << 20}
	for _, s := range scripts {
		opts.Scripts = append(opts.Scripts, wsfake.Load(t, "testdata/"+s))
	}
	f.srv = wsfake.New(t, opts)
	return f
}

func (f *fakeCartesia) url() string { return f.srv.URL() }

func (f *fakeCartesia) connections() int { return f.srv.Connections() }

func (f *fakeCartesia) messages() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.received...)
}

func (f *fakeCartesia) close() { f.srv.Close() }

func (f *fakeCartesia) handshake(_ int, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.query = append(f.query, r.URL.RawQuery)
}

func (f *fakeCartesia) refuse(n int, w http.ResponseWriter) bool {
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

// expect waits for the client's next generation request ("request") or
// cancel message ("cancel"), recording what comes before it. A request's
// context_id becomes $CTX in the messages sent after it.
func (f *fakeCartesia) expect(c *wsfake.Conn, want string) bool {
	for {
		_, data, err := c.Read()
		if err != nil {
			return false
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			c.Errorf("client sent invalid JSON %q", data)
			return false
		}
		f.mu.Lock()
		f.received = append(f.received, m)
		f.mu.Unlock()
		_, isCancel := m["cancel"]
		if (want == "cancel") == isCancel {
			if !isCancel {
				id, _ := m["context_id"].(string)
				c.Set("CTX", id)
			}
			return true
		}
	}
}

// afterScript keeps the connection, recording what comes, until the client
// closes it.
func (f *fakeCartesia) afterScript(c *wsfake.Conn) {
	for {
		_, data, err := c.Read()
		if err != nil {
			select {
			case f.hungUp <- struct{}{}:
			default:
			}
			return
		}
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		f.mu.Lock()
		f.received = append(f.received, m)
		f.mu.Unlock()
	}
}
