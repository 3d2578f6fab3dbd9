package websocket

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/websocket/wire"
)

// harness is a Server on a loopback HTTP server.
type harness struct {
	srv  *Server
	http *httptest.Server
	url  string // http://127.0.0.1:port
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	return &harness{srv: srv, http: hs, url: hs.URL}
}

// wsURL is the harness's socket URL without a /connect.
func (h *harness) wsURL() string { return "ws" + strings.TrimPrefix(h.url, "http") + "/ws" }

// dial opens a socket to url as a Go client would.
func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c.SetReadLimit(4 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// sendMessage sends an RTVI message frame carrying msg.
func sendMessage(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.Write(context.Background(), websocket.MessageBinary, wire.AppendMessage(nil, []byte(msg))); err != nil {
		t.Fatalf("sending %q: %v", msg, err)
	}
}

// sendAudio sends one audio frame of mono samples at rate.
func sendAudio(t *testing.T, c *websocket.Conn, samples []int16, rate int) {
	t.Helper()
	pcm := make([]byte, 2*len(samples))
	for i, v := range samples {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
	}
	if err := c.Write(context.Background(), websocket.MessageBinary, wire.AppendAudio(nil, pcm, rate, 1)); err != nil {
		t.Fatalf("sending audio: %v", err)
	}
}

// readFrame reads and decodes one frame from the server.
func readFrame(ctx context.Context, c *websocket.Conn) (wire.Frame, error) {
	typ, b, err := c.Read(ctx)
	if err != nil {
		return wire.Frame{}, err
	}
	if typ != websocket.MessageBinary {
		return wire.Frame{}, errors.New("the server sent a text message")
	}
	return wire.Decode(b)
}

// echo is a processor that sends every client message back to the client
// as an urgent transport message, and keeps what reached it.
type echo struct {
	mu  sync.Mutex
	got []frames.Frame
	in  *Input
}

func (e *echo) input() *Input { return e.in }

func (e *echo) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, dir frames.Direction) error {
	switch f := f.(type) {
	case *frames.InputTransportMessage:
		h.Consume()
		h.Push(&frames.OutputTransportMessageUrgent{Message: f.Message}, frames.Downstream)
	case *frames.InputAudioRaw, *frames.Text, *frames.Transcription, *frames.InputTransportRefused:
		e.mu.Lock()
		e.got = append(e.got, f)
		e.mu.Unlock()
	}
	return nil
}

func (e *echo) frames() []frames.Frame {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]frames.Frame(nil), e.got...)
}

// echoOptions are options whose pipelines are input, an echo, output;
// each new session's echo and request data are sent on the channels.
func echoOptions(echoes chan<- *echo, data chan<- json.RawMessage) Options {
	return Options{NewPipeline: func(_ context.Context, s *Session) (*pipeline.Task, error) {
		e := &echo{in: s.Input()}
		if echoes != nil {
			echoes <- e
		}
		if data != nil {
			data <- s.RequestData()
		}
		return pipeline.NewTask(pipeline.New(s.Input(), e, s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
	}}
}

// tone returns n samples of a 440 Hz tone at rate from sample offset.
func tone(rate, n, offset int) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(offset+i)/float64(rate)))
	}
	return s
}

// ttsFrame is d of a tone at 24 kHz, as a TTS service pushes it.
func ttsFrame(d time.Duration) *frames.TTSAudioRaw {
	samples := tone(24000, int(24000*d/time.Second), 0)
	pcm := make([]byte, 2*len(samples))
	for i, v := range samples {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
	}
	return &frames.TTSAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 24000, Channels: 1}}
}

// post sends a JSON body to the harness's path.
func post(t *testing.T, h *harness, path, body string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
