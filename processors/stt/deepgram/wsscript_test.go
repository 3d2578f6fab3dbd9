package deepgram

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// step is one line of a session script (see testdata/README.md).
type step struct {
	kind  string // "audio", "finalize", "close-stream", "send", "close"
	bytes int
	arg   string
	code  int
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
		case strings.HasPrefix(line, "< audio "):
			n, err := strconv.Atoi(strings.TrimPrefix(line, "< audio "))
			if err != nil {
				t.Fatalf("%s: bad line %q", name, line)
			}
			steps = append(steps, step{kind: "audio", bytes: n})
		case line == "< finalize":
			steps = append(steps, step{kind: "finalize"})
		case line == "< close":
			steps = append(steps, step{kind: "close-stream"})
		case strings.HasPrefix(line, "> "):
			steps = append(steps, step{kind: "send", arg: line[2:]})
		case strings.HasPrefix(line, "close "):
			fields := strings.SplitN(line, " ", 3)
			code, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatalf("%s: bad close line %q", name, line)
			}
			s := step{kind: "close", code: code}
			if len(fields) == 3 {
				s.arg = fields[2]
			}
			steps = append(steps, s)
		default:
			t.Fatalf("%s: unknown script line %q", name, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

// fakeDeepgram plays one script per connection, in order (the last one
// again for any further connection), and records what clients sent.
type fakeDeepgram struct {
	t       testing.TB
	srv     *httptest.Server
	scripts [][]step
	// reject, when set, refuses handshake n with a status and a body.
	reject func(n int) (int, string)

	mu      sync.Mutex
	conns   int
	queries []url.Values
	auth    []string
	texts   []string // the types of the client's text messages, in order
	audio   []int    // bytes of audio per connection
}

func newFake(t testing.TB, scripts ...string) *fakeDeepgram {
	f := &fakeDeepgram{t: t}
	for _, s := range scripts {
		f.scripts = append(f.scripts, loadScript(t, s))
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDeepgram) url() string {
	return "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/v1/listen"
}

func (f *fakeDeepgram) connections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns
}

func (f *fakeDeepgram) textTypes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.texts...)
}

func (f *fakeDeepgram) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := f.conns
	f.conns++
	f.queries = append(f.queries, r.URL.Query())
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.audio = append(f.audio, 0)
	f.mu.Unlock()
	if f.reject != nil {
		if status, body := f.reject(n); status != 0 {
			w.Header().Set("dg-request-id", "req-"+strconv.Itoa(n))
			w.Header().Set("dg-error", "refused by the fake")
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
	ctx := r.Context()
	// next reads one client message, recording it, and reports its kind.
	next := func() (kind string, ok bool) {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return "", false
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if typ == websocket.MessageBinary {
			f.audio[n] += len(data)
			return "audio", true
		}
		var m struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			f.t.Errorf("client sent invalid JSON %q", data)
			return "", false
		}
		f.texts = append(f.texts, m.Type)
		return m.Type, true
	}
	script := f.scripts[min(n, len(f.scripts)-1)]
	for _, st := range script {
		switch st.kind {
		case "audio":
			f.mu.Lock()
			target := f.audio[n] + st.bytes
			f.mu.Unlock()
			for {
				f.mu.Lock()
				have := f.audio[n]
				f.mu.Unlock()
				if have >= target {
					break
				}
				if _, ok := next(); !ok {
					return
				}
			}
		case "finalize", "close-stream":
			want := map[string]string{"finalize": "Finalize", "close-stream": "CloseStream"}[st.kind]
			for {
				kind, ok := next()
				if !ok {
					return
				}
				if kind == want {
					break
				}
			}
		case "send":
			if err := ws.Write(ctx, websocket.MessageText, []byte(st.arg)); err != nil {
				return
			}
		case "close":
			_ = ws.Close(websocket.StatusCode(st.code), st.arg)
			return
		}
	}
	// After the script, behave like Deepgram: CloseStream ends the session
	// with a normal close.
	for {
		kind, ok := next()
		if !ok {
			return
		}
		if kind == "CloseStream" {
			_ = ws.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}
