package websockettest_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/websocket"
	"github.com/framewire/framewire/transports/websocket/websockettest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo sends the user's audio back as the bot's and each message back.
type echo struct{}

func (echo) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	switch f := f.(type) {
	case *frames.InputAudioRaw:
		h.Push(&frames.OutputAudioRaw{Audio: f.Audio}, frames.Downstream)
	case *frames.InputTransportMessage:
		h.Consume()
		h.Push(&frames.OutputTransportMessageUrgent{Message: f.Message}, frames.Downstream)
	}
	return nil
}

// server serves a websocket.Server whose sessions echo; it returns the
// server's base URL.
func server(t *testing.T) string {
	t.Helper()
	srv, err := websocket.NewServer(websocket.Options{
		Logger: zap.NewNop(),
		NewPipeline: func(_ context.Context, s *websocket.Session) (*pipeline.Task, error) {
			return pipeline.NewTask(pipeline.New(s.Input(), echo{}, s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
	})
	return hs.URL
}

func dial(t *testing.T, opts websockettest.Options) *websockettest.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := websockettest.Dial(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestAClientStreamsInRealTimeAndCountsTheBotsAudio(t *testing.T) {
	c := dial(t, websockettest.Options{URL: server(t) + "/connect", Audio: websockettest.Tone(440, 8000, 16000, 2*time.Second)})
	time.Sleep(time.Second)
	// 16 ms frames up: 62.5 a second; the echo back as 20 ms frames at
	// the browser player's 24 kHz: 50 a second, 480 samples each.
	if out := c.FramesOut.Load(); out < 50 || out > 66 {
		t.Errorf("%d frames sent in a second, want about 62", out)
	}
	in, samples := c.AudioFramesIn.Load(), c.AudioSamplesIn.Load()
	if in < 35 || in > 52 {
		t.Errorf("%d audio frames received in a second, want about 50 (less the echo's start)", in)
	}
	if samples != 480*in {
		t.Errorf("%d samples in %d frames, want 480 each", samples, in)
	}
	if rate := c.LastAudioRate.Load(); rate != 24000 {
		t.Errorf("the audio says %d Hz, want 24000", rate)
	}
}

func TestAClientSendsAndReceivesMessages(t *testing.T) {
	c := dial(t, websockettest.Options{URL: "ws" + strings.TrimPrefix(server(t), "http") + "/ws"})
	if err := c.Send(context.Background(), []byte(`{"label":"rtvi-ai","type":"client-ready","id":"1"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-c.Messages():
		if want := `{"label":"rtvi-ai","type":"client-ready","id":"1"}`; string(m) != want {
			t.Errorf("got %s, want %s", m, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no message back")
	}
	if c.FramesOut.Load() != 0 {
		t.Error("a client without Audio sent audio")
	}
}

func TestAClientSeesTheServerClose(t *testing.T) {
	srv, err := websocket.NewServer(websocket.Options{
		Logger: zap.NewNop(),
		NewPipeline: func(_ context.Context, s *websocket.Session) (*pipeline.Task, error) {
			task := pipeline.NewTask(pipeline.New(s.Input(), s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()})
			task.EndWhenDone()
			return task, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	c := dial(t, websockettest.Options{URL: hs.URL + "/connect"})
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the socket stayed open after the pipeline ended")
	}
	if got := c.CloseStatus(); got != websocket.CloseNormal {
		t.Errorf("close status %v, want %v", got, websocket.CloseNormal)
	}
}

func TestARefusedConnectIsAStatusError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := websockettest.Dial(ctx, websockettest.Options{URL: server(t) + "/nothing"})
	var se *websockettest.StatusError
	if !errors.As(err, &se) || se.Code != 404 {
		t.Errorf("error %v, want a StatusError with 404", err)
	}
	if _, err := websockettest.Dial(ctx, websockettest.Options{URL: "ftp://x"}); err == nil {
		t.Error("an ftp URL was accepted")
	}
}
