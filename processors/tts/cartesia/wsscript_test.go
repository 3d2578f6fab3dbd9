package cartesia

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// step is one line of a websocket script (see testdata/README.md).
type step struct {
	kind string // "expect", "send", "close"
	arg  string
	code int
}

func loadScript(t testing.TB, name string) []step {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []step
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "< "):
			steps = append(steps, step{kind: "expect", arg: line[2:]})
		case strings.HasPrefix(line, "> "):
			steps = append(steps, step{kind: "send", arg: line[2:]})
		case strings.HasPrefix(line, "close "):
			fields := strings.SplitN(line, " ", 3)
			code, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatalf("%s: bad close line %q", name, line)
			}
			reason := ""
			if len(fields) == 3 {
				reason = fields[2]
			}
			steps = append(steps, step{kind: "close", code: code, arg: reason})
		default:
			t.Fatalf("%s: unknown script line %q", name, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

// fakeCartesia plays one script per connection, in order (the last one
// again for any further connection), and records what clients sent.
type fakeCartesia struct {
	t       testing.TB
	srv     *httptest.Server
	scripts [][]step
	// reject, when set, answers the handshake instead (status, body).
	reject func(n int) (int, string)

	mu       sync.Mutex
	conns    int
	received []map[string]any
	query    []string
}

func newFake(t testing.TB, scripts ...string) *fakeCartesia {
	f := &fakeCartesia{t: t}
	for _, s := range scripts {
		f.scripts = append(f.scripts, loadScript(t, s))
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

func (f *fakeCartesia) url() string {
	return "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/tts/websocket"
}

func (f *fakeCartesia) connections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns
}

func (f *fakeCartesia) messages() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.received...)
}

func (f *fakeCartesia) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := f.conns
	f.conns++
	f.query = append(f.query, r.URL.RawQuery)
	f.mu.Unlock()
	if f.reject != nil {
		if status, body := f.reject(n); status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return
		}
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	ctx := r.Context()
	script := f.scripts[min(n, len(f.scripts)-1)]
	ctxID := ""
	for _, st := range script {
		switch st.kind {
		case "expect":
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					return
				}
				var m map[string]any
				if err := json.Unmarshal(data, &m); err != nil {
					f.t.Errorf("client sent invalid JSON %q", data)
					return
				}
				f.mu.Lock()
				f.received = append(f.received, m)
				f.mu.Unlock()
				_, isCancel := m["cancel"]
				if (st.arg == "cancel") == isCancel {
					if !isCancel {
						ctxID, _ = m["context_id"].(string)
					}
					break
				}
			}
		case "send":
			msg := strings.ReplaceAll(st.arg, "$CTX", ctxID)
			if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				return
			}
		case "close":
			_ = ws.Close(websocket.StatusCode(st.code), st.arg)
			return
		}
	}
	// The script is over: keep the connection, recording what comes, until
	// the client closes it.
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		f.mu.Lock()
		f.received = append(f.received, m)
		f.mu.Unlock()
	}
}

func (f *fakeCartesia) close() { f.srv.Close() }
