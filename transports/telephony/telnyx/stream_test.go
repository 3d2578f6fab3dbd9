package telnyx

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/telephony"
)

// greeter answers each key with 100 ms of a tone and then a text, which
// the output holds until the caller heard the tone.
type greeter struct {
	keys     chan string
	answered chan struct{}
}

func (g *greeter) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	switch f := f.(type) {
	case *frames.InputDTMF:
		g.keys <- f.Button
		pcm := make([]byte, 2*2400)
		for i := range 2400 {
			binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(8000*math.Sin(2*math.Pi*440*float64(i)/24000))))
		}
		h.Push(&frames.TTSAudioRaw{Audio: frames.Audio{PCM: pcm, SampleRate: 24000, Channels: 1}}, frames.Downstream)
		h.Push(&frames.Text{Text: "answered"}, frames.Downstream)
	case *frames.Text:
		if f.Text == "answered" && h.Name() == "after" {
			close(g.answered)
		}
	}
	return nil
}

type named struct {
	pipeline.Processor
	name string
}

func (n named) Name() string { return n.name }

// The shapes are those of Telnyx's "Stream call media over WebSocket"
// reference, as this package's golden messages (testdata/wire-in-*.json).
func TestATelnyxCallInPCMUIsHeardKeyedAndMarked(t *testing.T) {
	g := &greeter{keys: make(chan string, 1), answered: make(chan struct{})}
	calls := make(chan telephony.Call, 1)
	srv, err := telephony.NewServer(Provider{}, telephony.Options{Logger: zap.NewNop(),
		NewPipeline: func(_ context.Context, s *telephony.Session) (*pipeline.Task, error) {
			calls <- s.Call()
			return pipeline.NewTask(pipeline.New(s.Input(), g, s.Output(), named{g, "after"}), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	const sid = "32DE0DEA-53CB-4B21-89A4-9E1819C043BC"
	send := func(m map[string]any) {
		b, _ := json.Marshal(m)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"event": "connected", "version": "1.0.0"})
	send(map[string]any{"event": "start", "sequence_number": "1", "stream_id": sid, "start": map[string]any{
		"user_id": "U1", "call_control_id": "v2:call", "from": "+13122010094", "to": "+13122123456",
		"custom_parameters": map[string]string{telephony.TokenParameter: srv.NewToken(), "customer_id": "c1"},
		"media_format":      map[string]any{"encoding": "PCMU", "sample_rate": 8000, "channels": 1},
	}})
	call := <-calls
	if call.CallID != "v2:call" || call.From != "+13122010094" || call.Parameters["customer_id"] != "c1" || call.Provider != "telnyx" {
		t.Errorf("call %+v", call)
	}
	payload := base64.StdEncoding.EncodeToString(telephony.CodecULaw.AppendPayload(nil, make([]int16, 160)))
	for i := range 10 {
		send(map[string]any{"event": "media", "stream_id": sid, "media": map[string]any{"track": "inbound", "chunk": i + 1, "payload": payload}})
	}
	send(map[string]any{"event": "dtmf", "stream_id": sid, "dtmf": map[string]any{"digit": "7"}})
	if k := <-g.keys; k != "7" {
		t.Errorf("key %q, want 7", k)
	}
	media := 0
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Event string `json:"event"`
			Media struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark struct {
				Name string `json:"name"`
			} `json:"mark"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Event == "media" {
			if p, _ := base64.StdEncoding.DecodeString(m.Media.Payload); len(p) != 160 {
				t.Fatalf("media of %d bytes, want 20 ms of PCMU", len(p))
			}
			media++
			continue
		}
		if m.Event == "mark" {
			send(map[string]any{"event": "mark", "stream_id": sid, "mark": map[string]any{"name": m.Mark.Name}})
			break
		}
	}
	select {
	case <-g.answered:
	case <-ctx.Done():
		t.Fatal("the text behind the audio never came out after the mark's echo")
	}
	if media < 4 || media > 6 {
		t.Errorf("%d media messages for 100 ms, want 5", media)
	}
}

func TestAStreamInACodecFramewireDoesNotCarryIsRefused(t *testing.T) {
	s := Provider{}.NewStream()
	var ev telephony.Event
	msg := `{"event":"start","stream_id":"s","start":{"call_control_id":"c","media_format":{"encoding":"OPUS","sample_rate":16000,"channels":1}}}`
	if err := s.Decode(websocket.MessageText, []byte(msg), &ev); err == nil || !strings.Contains(err.Error(), "OPUS") {
		t.Errorf("Decode = %v, want the codec named", err)
	}
}
