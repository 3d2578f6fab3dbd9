package vonage

import (
	"context"
	"encoding/json"
	"net/http"
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

// The NCCO's shape is the one of Vonage's "Connect to a WebSocket"
// tutorial (developer.vonage.com/en/tutorials/connect-to-a-websocket).
func TestAnAnswerIsAnNCCOThatConnectsTheSocket(t *testing.T) {
	got := string(Answer("wss://bot.example.com/vonage/socket", 16000, map[string]string{"framewire_token": "t0k", "uuid": "u1"}))
	want := `[{"action":"connect","endpoint":[{"type":"websocket","uri":"wss://bot.example.com/vonage/socket",` +
		`"content-type":"audio/l16;rate=16000","headers":{"framewire_token":"t0k","uuid":"u1"}}]}]`
	if got != want {
		t.Errorf("Answer =\n%s\nwant\n%s", got, want)
	}
}

// keys is a pipeline step that reports the keys pressed.
type keys chan string

func (k keys) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	if d, ok := f.(*frames.InputDTMF); ok {
		k <- d.Button
	}
	return nil
}

// A call as Vonage makes it: the answer webhook (GET with the call's
// uuid, from and to), then the socket with websocket:connected carrying
// the NCCO's headers, binary audio, a key, a notify's echo.
func TestAVonageCallIsAnsweredConnectedAndKeyed(t *testing.T) {
	calls := make(chan telephony.Call, 1)
	pressed := make(keys, 1)
	srv, err := telephony.NewServer(Provider{}, telephony.Options{Logger: zap.NewNop(),
		NewPipeline: func(_ context.Context, s *telephony.Session) (*pipeline.Task, error) {
			calls <- s.Call()
			return pipeline.NewTask(pipeline.New(s.Input(), pressed, s.Output()), pipeline.TaskOptions{Logger: zap.NewNop()}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer srv.Close()
	mux.Handle("GET /vonage/answer", &Webhook{Verifier: Verifier{Insecure: true}, Server: srv, StreamURL: "ws" + strings.TrimPrefix(hs.URL, "http") + "/vonage/socket"})
	mux.Handle("GET /vonage/socket", srv)

	resp, err := http.Get(hs.URL + "/vonage/answer?uuid=CALL-1&from=447700900000&to=447700900001")
	if err != nil {
		t.Fatal(err)
	}
	var answer ncco
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || len(answer) != 1 || len(answer[0].Endpoint) != 1 {
		t.Fatalf("NCCO %+v, %v", answer, err)
	}
	resp.Body.Close()
	ep := answer[0].Endpoint[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, ep.URI, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	connected := map[string]string{"event": "websocket:connected", "content-type": ep.ContentType}
	for k, v := range ep.Headers {
		connected[k] = v
	}
	b, _ := json.Marshal(connected)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	call := <-calls
	if call.CallID != "CALL-1" || call.From != "447700900000" || call.To != "447700900001" || call.SampleRate != 16000 || call.Provider != "vonage" {
		t.Errorf("call %+v", call)
	}
	if err := c.Write(ctx, websocket.MessageBinary, make([]byte, FrameBytes(16000))); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"event":"websocket:dtmf","digit":"4","duration":250}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case k := <-pressed:
		if k != "4" {
			t.Errorf("key %q, want 4", k)
		}
	case <-ctx.Done():
		t.Fatal("the key never reached the pipeline")
	}
}
