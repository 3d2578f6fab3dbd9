package openairealtime

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/internal/wsfake"
)

// fakeRealtime plays testdata scripts (see testdata/README.md) as the
// Realtime API would, one per connection, and records what clients send.
// Its "<" lines mean: "< TYPE" waits for a client event of that type,
// "< audio N" for N bytes of appended audio in all (decoded, 24 kHz PCM),
// "< until NAME" for the test's condition NAME to hold,
// "< has TEXT" for an event (sent already, or next) whose JSON holds TEXT,
// "< played MS" for the played tap to count MS milliseconds of the
// model's audio; "< send bytes N" is no wait: it sends an audio delta
// event of N bytes. Send lines may use $AUDIO_100MS, 100 ms of a 440 Hz tone
// at 24 kHz in base64.
//
// Like the real service, the fake runs one response at a time per
// conversation: from a response.create it accepts, or a response.created
// its script sends, until the response.done its script sends, it answers
// another response.create with the error the service sends then
// (activeResponseRefusal). A test fails when that happens.
type fakeRealtime struct {
	srv *wsfake.Server
	// reject, when set, refuses handshake n with a status, headers and a body.
	reject func(n int) (int, http.Header, string)
	// played reports what the tap counted, for "< played".
	played func() time.Duration
	// until are the named conditions "< until NAME" waits for.
	until map[string]func() bool
	// loses, when set, makes the fake lose the response.create it
	// accepts: it starts no response (a server that never answers).
	loses bool

	mu       sync.Mutex
	busy     map[int]string // per connection, the response the server runs ("pending": accepted, not announced yet)
	refused  []string       // event ids of the refused response.create
	serverEv int
	events   []clientEvent
	audio    map[int]int
	auth     []string
	urls     []string
}

// clientEvent is one event a client sent.
type clientEvent struct {
	Conn int
	Type string
	Raw  json.RawMessage
}

// tone100ms is 100 ms of a 440 Hz tone at 24 kHz, PCM16.
var tone100ms = func() []byte {
	b := make([]byte, 2*2400)
	for i := range 2400 {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/24000))
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return b
}()

func newFake(t testing.TB, scripts ...string) *fakeRealtime {
	t.Helper()
	f := &fakeRealtime{audio: map[int]int{}, busy: map[int]string{}}
	opts := wsfake.Options{Path: "/v1/realtime", Handshake: f.handshake, Reject: f.refuse, Expect: f.expect,
		AfterScript: f.afterScript, ReadLimit: 1 << 20, Sent: f.scriptSent}
	for _, s := range scripts {
		opts.Scripts = append(opts.Scripts, wsfake.Load(t, "testdata/"+s))
	}
	f.srv = wsfake.New(t, opts)
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.refused) > 0 {
			t.Errorf("the client sent response.create while a response was active (refused: %q)", f.refused)
		}
	})
	return f
}

// refusedCreates returns the event ids of the response.create events the
// fake refused.
func (f *fakeRealtime) refusedCreates() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refused...)
}

// scriptSent follows the responses the script starts and ends.
func (f *fakeRealtime) scriptSent(c *wsfake.Conn, msg []byte) {
	var ev struct {
		Type     string `json:"type"`
		Response struct {
			ID string `json:"id"`
		} `json:"response"`
	}
	if json.Unmarshal(msg, &ev) != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch ev.Type {
	case "response.created":
		f.busy[c.N] = ev.Response.ID
	case "response.done":
		delete(f.busy, c.N)
	}
}

// activeResponseRefusal is the error event the Realtime API sends for a
// response.create while a response is active. Its shape is the
// reference's server event "error" (type, event_id, and error with type,
// code, message, param and event_id: "the event_id of the client event
// that caused the error, if applicable"); the code, type and message are
// what the service answers (as reported in openai/openai-agents-python
// issue 1466 and tleyden/arty issue 81: "Conversation already has an
// active response in progress: resp_…. Wait until the response is
// finished before creating a new one."). The bytes are pinned by
// testdata/active_response_refusal.golden.json.
func activeResponseRefusal(serverEventID, clientEventID, responseID string) []byte {
	type apiErr struct {
		Type    string  `json:"type"`
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Param   *string `json:"param"`
		EventID *string `json:"event_id"`
	}
	e := struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
		Error   apiErr `json:"error"`
	}{"error", serverEventID, apiErr{
		Type: "invalid_request_error", Code: "conversation_already_has_active_response",
		Message: "Conversation already has an active response in progress: " + responseID + ". Wait until the response is finished before creating a new one.",
	}}
	if clientEventID != "" {
		e.Error.EventID = &clientEventID
	}
	b, _ := json.Marshal(e)
	return b
}

// baseURL is what Options.BaseURL takes to reach the fake.
func (f *fakeRealtime) baseURL() string {
	return "http" + strings.TrimSuffix(strings.TrimPrefix(f.srv.URL(), "ws"), "/realtime")
}

func (f *fakeRealtime) handshake(_ int, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.urls = append(f.urls, r.URL.String())
}

func (f *fakeRealtime) refuse(n int, w http.ResponseWriter) bool {
	if f.reject == nil {
		return false
	}
	status, h, body := f.reject(n)
	if status == 0 {
		return false
	}
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
	return true
}

// next reads one client event and records it.
func (f *fakeRealtime) next(c *wsfake.Conn) (clientEvent, bool) {
	typ, data, err := c.Read()
	if err != nil {
		return clientEvent{}, false
	}
	if typ != websocket.MessageText {
		c.Errorf("client sent a binary message")
		return clientEvent{}, false
	}
	var head struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
		Audio   string `json:"audio"`
	}
	if err := json.Unmarshal(data, &head); err != nil || head.Type == "" {
		c.Errorf("client sent %q, not a JSON event", data)
		return clientEvent{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if head.Type == "input_audio_buffer.append" {
		pcm, err := base64.StdEncoding.DecodeString(head.Audio)
		if err != nil {
			c.Errorf("audio is not base64: %v", err)
			return clientEvent{}, false
		}
		f.audio[c.N] += len(pcm)
		return clientEvent{Conn: c.N, Type: head.Type}, true
	}
	ev := clientEvent{Conn: c.N, Type: head.Type, Raw: append(json.RawMessage(nil), data...)}
	f.events = append(f.events, ev)
	if head.Type == "response.create" {
		if active, ok := f.busy[c.N]; ok {
			f.refused = append(f.refused, head.EventID)
			f.serverEv++
			if err := c.Write(activeResponseRefusal("event_refusal_"+strconv.Itoa(f.serverEv), head.EventID, active)); err != nil {
				return clientEvent{}, false
			}
			return ev, true
		}
		if !f.loses {
			f.busy[c.N] = "resp_pending"
		}
	}
	return ev, true
}

func (f *fakeRealtime) expect(c *wsfake.Conn, want string) bool {
	c.Set("AUDIO_100MS", base64.StdEncoding.EncodeToString(tone100ms))
	switch {
	case strings.HasPrefix(want, "audio "):
		n, err := strconv.Atoi(strings.TrimPrefix(want, "audio "))
		if err != nil {
			c.Errorf("bad line %q", "< "+want)
			return false
		}
		for {
			f.mu.Lock()
			have := f.audio[c.N]
			f.mu.Unlock()
			if have >= n {
				return true
			}
			if _, ok := f.next(c); !ok {
				return false
			}
		}
	case strings.HasPrefix(want, "send bytes "):
		// Not a wait: sends one audio delta event of that many bytes.
		n, err := strconv.Atoi(strings.TrimPrefix(want, "send bytes "))
		if err != nil {
			c.Errorf("bad line %q", "< "+want)
			return false
		}
		const head, tail = `{"type":"response.output_audio.delta","delta":"`, `"}`
		msg := append([]byte(head), strings.Repeat("A", max(n-len(head)-len(tail), 0))...)
		return c.Write(append(msg, tail...)) == nil
	case strings.HasPrefix(want, "until "):
		cond := f.until[strings.TrimPrefix(want, "until ")]
		if cond == nil {
			c.Errorf("no condition for %q", "< "+want)
			return false
		}
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				c.Errorf("%q never held", want)
				return false
			}
			time.Sleep(time.Millisecond)
		}
		return true
	case strings.HasPrefix(want, "has "):
		sub := strings.TrimPrefix(want, "has ")
		for {
			f.mu.Lock()
			for _, e := range f.events {
				if e.Conn == c.N && strings.Contains(string(e.Raw), sub) {
					f.mu.Unlock()
					return true
				}
			}
			f.mu.Unlock()
			if _, ok := f.next(c); !ok {
				return false
			}
		}
	case strings.HasPrefix(want, "played "):
		ms, err := strconv.Atoi(strings.TrimPrefix(want, "played "))
		if err != nil || f.played == nil {
			c.Errorf("bad line %q (or no played func)", "< "+want)
			return false
		}
		deadline := time.Now().Add(5 * time.Second)
		for f.played() < time.Duration(ms)*time.Millisecond {
			if time.Now().After(deadline) {
				c.Errorf("the tap counted %v, never %d ms", f.played(), ms)
				return false
			}
			time.Sleep(time.Millisecond)
		}
		return true
	}
	for {
		ev, ok := f.next(c)
		if !ok {
			return false
		}
		if ev.Type == want {
			return true
		}
	}
}

func (f *fakeRealtime) afterScript(c *wsfake.Conn) {
	for {
		if _, ok := f.next(c); !ok {
			return
		}
	}
}

// sent returns the client events of the types given (all but audio when
// none), in order.
func (f *fakeRealtime) sent(types ...string) []clientEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []clientEvent
	for _, e := range f.events {
		if len(types) == 0 {
			out = append(out, e)
			continue
		}
		for _, t := range types {
			if e.Type == t {
				out = append(out, e)
			}
		}
	}
	return out
}

func (f *fakeRealtime) audioBytes(conn int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.audio[conn]
}
