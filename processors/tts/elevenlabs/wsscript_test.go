package elevenlabs

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/framewire/framewire/internal/wsfake"
)

// voice is the voice id the tests use; the fake serves its endpoint.
const voice = "voice-1"

// fakeElevenLabs plays testdata scripts (see testdata/README.md) with
// ElevenLabs' meaning for "<" lines, one per connection, in order (the last
// one again for any further connection), and records what clients sent.
type fakeElevenLabs struct {
	srv *wsfake.Server
	// reject, when set, answers handshake n instead (status, header, body);
	// a zero status lets it through.
	reject func(n int) (int, http.Header, string)

	mu       sync.Mutex
	received []string // raw client messages, in order
	query    []string
	keys     []string // xi-api-key of each handshake
}

func newFake(t testing.TB, scripts ...string) *fakeElevenLabs {
	t.Helper()
	f := &fakeElevenLabs{}
	opts := wsfake.Options{
		Path:      "/v1/text-to-speech/" + voice + "/multi-stream-input",
		Handshake: f.handshake, Reject: f.refuse, Expect: f.expect, AfterScript: f.afterScript,
		ReadLimit: 1 << 20,
	}
	for _, s := range scripts {
		opts.Scripts = append(opts.Scripts, wsfake.Load(t, "testdata/"+s))
	}
	f.srv = wsfake.New(t, opts)
	return f
}

// baseURL is the http:// root the client derives the ws:// URL from.
func (f *fakeElevenLabs) baseURL() string {
	u := strings.Replace(f.srv.URL(), "ws://", "http://", 1)
	return u[:strings.Index(u[len("http://"):], "/")+len("http://")]
}

func (f *fakeElevenLabs) connections() int { return f.srv.Connections() }

func (f *fakeElevenLabs) close() { f.srv.Close() }

// messages returns what clients sent, decoded.
func (f *fakeElevenLabs) messages(t testing.TB) []map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, raw := range f.received {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("client sent invalid JSON %q", raw)
		}
		out = append(out, m)
	}
	return out
}

func (f *fakeElevenLabs) handshake(_ int, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.query = append(f.query, r.URL.RawQuery)
	f.keys = append(f.keys, r.Header.Get("xi-api-key"))
}

func (f *fakeElevenLabs) refuse(n int, w http.ResponseWriter) bool {
	if f.reject == nil {
		return false
	}
	status, header, body := f.reject(n)
	if status == 0 {
		return false
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
	return true
}

// kind names a client message as the scripts do: "init" (a context's
// first message, a single space), "text", "close_context" or
// "close_socket".
func kind(m map[string]any) string {
	switch {
	case m["close_socket"] == true:
		return "close_socket"
	case m["close_context"] == true:
		return "close_context"
	case m["text"] == " ":
		return "init"
	case m["text"] != nil:
		return "text"
	}
	return "other"
}

// expect waits for the client's next message of the kind want, recording
// what comes before it. An init's context_id becomes $CTX in the messages
// sent after it; $A0, $A1 and $A2 are the fixture's audio in base64.
func (f *fakeElevenLabs) expect(c *wsfake.Conn, want string) bool {
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
		f.received = append(f.received, string(data))
		f.mu.Unlock()
		if kind(m) != want {
			continue
		}
		if want == "init" {
			id, _ := m["context_id"].(string)
			c.Set("CTX", id)
			for i, piece := range audioPieces(c.Errorf) {
				c.Set("A"+string(rune('0'+i)), base64.StdEncoding.EncodeToString(piece))
			}
		}
		return true
	}
}

// afterScript keeps the connection, recording what comes, until the client
// closes it.
func (f *fakeElevenLabs) afterScript(c *wsfake.Conn) {
	for {
		_, data, err := c.Read()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.received = append(f.received, string(data))
		f.mu.Unlock()
	}
}

// audioPieces splits the fixture into the three chunks the scripts send.
func audioPieces(fail func(string, ...any)) [][]byte {
	pcm, err := os.ReadFile("testdata/hello_world.pcm")
	if err != nil {
		fail("%v", err)
		return nil
	}
	third := len(pcm) / 3 &^ 1
	return [][]byte{pcm[:third], pcm[third : 2*third], pcm[2*third:]}
}

// expandScript replaces the scripts' placeholders, for the fuzz seeds and
// the benchmark.
func expandScript(t testing.TB, text string) string {
	for i, piece := range audioPieces(t.Fatalf) {
		text = strings.ReplaceAll(text, "$A"+string(rune('0'+i)), base64.StdEncoding.EncodeToString(piece))
	}
	return strings.ReplaceAll(text, "$CTX", "ctx-1")
}
