package webrtc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// bot is the test pipeline's middle: it answers client-ready with
// bot-ready and records the audio and messages that reach it.
type bot struct {
	mu       sync.Mutex
	audio    []*frames.InputAudioRaw
	messages []string
}

func (b *bot) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.InputAudioRaw:
		b.mu.Lock()
		b.audio = append(b.audio, f)
		b.mu.Unlock()
	case *frames.InputTransportMessage:
		b.mu.Lock()
		b.messages = append(b.messages, string(f.Message))
		b.mu.Unlock()
		var m struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if json.Unmarshal(f.Message, &m) == nil && m.Type == "client-ready" {
			h.Push(&frames.OutputTransportMessageUrgent{Message: []byte(
				`{"label":"rtvi-ai","type":"bot-ready","id":"` + m.ID + `","data":{"version":"2.1.0","about":{"library":"framewire"}}}`)},
				frames.Downstream)
		}
	}
	return nil
}

func (b *bot) takeAudio() []*frames.InputAudioRaw {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.audio
	b.audio = nil
	return a
}

func (b *bot) gotMessages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.messages...)
}

// harness is a server on an httptest listener whose sessions run
// Input -> bot -> Output.
type harness struct {
	t    *testing.T
	srv  *Server
	http *httptest.Server

	mu       sync.Mutex
	bots     map[*Session]*bot
	tasks    map[*Session]*pipeline.Task
	sessions []*Session
	built    int
	// onSession, if set, runs in the factory for each new session.
	onSession func(*Session)
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, bots: map[*Session]*bot{}, tasks: map[*Session]*pipeline.Task{}}
	if opts.Logger == nil {
		opts.Logger = zaptest.NewLogger(t).WithOptions()
	}
	if opts.Settings == nil {
		opts.Settings = webrtctest.LoopbackOnly
	}
	if opts.NewPipeline == nil {
		opts.NewPipeline = func(_ context.Context, s *Session) (*pipeline.Task, error) {
			b := &bot{}
			task := pipeline.NewTask(pipeline.New(s.Input(), b, s.Output()), pipeline.TaskOptions{})
			h.mu.Lock()
			h.bots[s], h.tasks[s] = b, task
			h.sessions = append(h.sessions, s)
			h.built++
			hook := h.onSession
			h.mu.Unlock()
			if hook != nil {
				hook(s)
			}
			return task, nil
		}
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	h.http = httptest.NewServer(srv)
	t.Cleanup(h.close)
	return h
}

func (h *harness) close() {
	h.http.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		h.t.Error(err)
	}
}

// forgetSessions drops the harness's references to ended sessions, so
// heap measurements see only what the server keeps.
func (h *harness) forgetSessions() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.bots)
	clear(h.tasks)
	h.sessions = nil
}

func nopLogger() *zap.Logger { return zap.NewNop() }

func (h *harness) url(path string) string { return h.http.URL + path }

// dial connects a client that the test's cleanup closes.
func (h *harness) dial(ctx context.Context, opts webrtctest.Options) *webrtctest.Client {
	h.t.Helper()
	c := h.dialUnmanaged(ctx, opts)
	h.t.Cleanup(c.Close)
	return c
}

// dialUnmanaged connects a client that the caller must close.
func (h *harness) dialUnmanaged(ctx context.Context, opts webrtctest.Options) *webrtctest.Client {
	h.t.Helper()
	if opts.OfferURL == "" {
		opts.OfferURL = h.url("/api/offer")
	}
	c, err := webrtctest.Dial(ctx, opts)
	if err != nil {
		h.t.Fatalf("dial: %v", err)
	}
	if err := c.WaitOpen(ctx); err != nil {
		c.Close()
		h.t.Fatal(err)
	}
	return c
}

// session returns the session of the client's pc_id.
func (h *harness) session(c *webrtctest.Client) (*Session, *bot, *pipeline.Task) {
	h.t.Helper()
	s, ok := h.srv.Session(c.PCID())
	if !ok {
		h.t.Fatalf("no session for pc_id %s", c.PCID())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return s, h.bots[s], h.tasks[s]
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goertzel returns the power of freq in x, normalised by length.
func goertzel(x []int16, freq float64, rate int) float64 {
	w := 2 * math.Cos(2*math.Pi*freq/float64(rate))
	var s1, s2 float64
	for _, v := range x {
		s0 := float64(v) + w*s1 - s2
		s2, s1 = s1, s0
	}
	return (s1*s1 + s2*s2 - w*s1*s2) / float64(len(x)*len(x))
}

// dominant checks that freq carries far more power than the probes.
func dominant(t *testing.T, x []int16, rate int, freq float64, probes ...float64) {
	t.Helper()
	p := goertzel(x, freq, rate)
	for _, q := range probes {
		if pq := goertzel(x, q, rate); p < 100*pq {
			t.Errorf("%.0f Hz power %.3g is not 20 dB above %.0f Hz power %.3g", freq, p, q, pq)
		}
	}
	if p == 0 {
		t.Errorf("no power at %.0f Hz", freq)
	}
}

func samples(a *frames.Audio) []int16 {
	out := make([]int16, len(a.PCM)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(a.PCM[2*i:]))
	}
	return out
}

func toneFrame(freq float64, rate, n, offset int, amp float64) *frames.OutputAudioRaw {
	pcm := make([]byte, 2*n)
	for i := range n {
		v := int16(amp * math.Sin(2*math.Pi*freq*float64(offset+i)/float64(rate)))
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
	}
	return &frames.OutputAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: rate, Channels: 1}}
}

func isType(kind string) func(string) bool {
	return func(m string) bool { return strings.Contains(m, `"type":"`+kind+`"`) }
}

// localRequest is httptest.NewRequest for the server's default Host
// allowlist: httptest names example.com, which the server refuses.
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "localhost"
	return r
}
