package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	wswire "github.com/framewire/framewire/transports/websocket/wire"
)

// wsClient is a Go client of the bot's WebSocket transport, speaking the
// browser client's frames (conformance-bot.md §14).
type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

// connectWS does what startBotAndConnect does: POST /connect, then open
// the wsUrl of the answer, which must be its only member.
func connectWS(t *testing.T, base string) *wsClient {
	t.Helper()
	resp, err := testHTTP.Post(base+"/connect", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/connect: %s, %v", resp.Status, err)
	}
	if len(answer) != 1 || !strings.HasPrefix(answer["wsUrl"], "ws://") {
		t.Fatalf("/connect answered %v, want exactly {wsUrl}", answer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectWait)
	defer cancel()
	c, _, err := websocket.Dial(ctx, answer["wsUrl"], nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(4 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &wsClient{t: t, c: c}
}

func (w *wsClient) rtvi(typ, id string, data any) {
	w.t.Helper()
	msg := map[string]any{"label": "rtvi-ai", "type": typ, "id": id}
	if data != nil {
		msg["data"] = data
	}
	b, _ := json.Marshal(msg)
	if err := w.c.Write(context.Background(), websocket.MessageBinary, wswire.AppendMessage(nil, b)); err != nil {
		w.t.Fatal(err)
	}
}

// next reads frames until match accepts one, counting the audio on the way.
func (w *wsClient) next(ctx context.Context, audio func(wswire.Frame), match func(map[string]any) bool) map[string]any {
	w.t.Helper()
	for {
		typ, b, err := w.c.Read(ctx)
		if err != nil {
			w.t.Fatalf("reading: %v", err)
		}
		if typ != websocket.MessageBinary {
			w.t.Fatal("the bot sent a text frame")
		}
		f, err := wswire.Decode(b)
		if err != nil {
			w.t.Fatal(err)
		}
		switch f.Kind {
		case wswire.KindAudio:
			if audio != nil {
				audio(f)
			}
		case wswire.KindMessage:
			var m map[string]any
			if err := json.Unmarshal(f.Data, &m); err != nil {
				w.t.Fatalf("message %q: %v", f.Data, err)
			}
			if match(m) {
				return m
			}
		default:
			w.t.Fatalf("the bot sent a %s frame; the browser client reads audio and messages only", f.Kind)
		}
	}
}

func typeIs(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

// rms of s16le PCM, x = int16/32768.
func rms(pcm []byte) float64 {
	var sum float64
	for i := 0; i+1 < len(pcm); i += 2 {
		x := float64(int16(binary.LittleEndian.Uint16(pcm[i:]))) / 32768
		sum += x * x
	}
	return math.Sqrt(sum / float64(len(pcm)/2))
}

func TestOverWebSocketTheBotAnswersTheHandshakePlaysAToneAndCountsTheUsersAudio(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startRun(t, ctx)
	base := strings.TrimPrefix(strings.TrimSpace(line), "listening on ")
	w := connectWS(t, base)
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()

	w.rtvi("client-ready", "ready001", map[string]any{"version": "2.1.0", "about": map[string]any{"library": "go-test"}})
	w.next(rctx, nil, typeIs("bot-ready"))

	// The tone: 24 kHz mono s16le, 20–40 ms a frame, audible, at real time.
	frames, start := 0, time.Now()
	var level float64
	w.rtvi("client-message", "echo0001", map[string]any{"t": "echo", "d": map[string]any{"n": 1}})
	echo := w.next(rctx, nil, typeIs("server-response"))
	if d, _ := json.Marshal(echo["data"]); string(d) != `{"d":{"n":1},"t":"echo"}` {
		t.Errorf("echo answered %s", d)
	}
	for time.Since(start) < time.Second {
		typ, b, err := w.c.Read(rctx)
		if err != nil || typ != websocket.MessageBinary {
			t.Fatal(err)
		}
		f, err := wswire.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind != wswire.KindAudio {
			continue
		}
		if f.SampleRate != 24000 || f.Channels != 1 || len(f.Audio) < 960 || len(f.Audio) > 1920 {
			t.Fatalf("audio frame: %d Hz × %d, %d bytes; want 20–40 ms of 24 kHz mono", f.SampleRate, f.Channels, len(f.Audio))
		}
		frames++
		level = max(level, rms(f.Audio))
	}
	if frames < 40 || frames > 60 {
		t.Errorf("%d audio frames in a second, want about 50 (real time)", frames)
	}
	if level < 0.1 {
		t.Errorf("the tone's RMS is %.3f, want it audible (over 0.1)", level)
	}

	// A second of the user's audio at 16 kHz, as the browser sends it.
	for i := range 62 {
		pcm := make([]byte, 512)
		for j := range 256 {
			v := int16(8000 * math.Sin(2*math.Pi*440*float64(i*256+j)/16000))
			binary.LittleEndian.PutUint16(pcm[2*j:], uint16(v))
		}
		if err := w.c.Write(rctx, websocket.MessageBinary, wswire.AppendAudio(nil, pcm, 16000, 1)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(16 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	w.rtvi("client-message", "stats001", map[string]any{"t": "audio-stats"})
	resp := w.next(rctx, nil, func(m map[string]any) bool { return m["type"] == "server-response" && m["id"] == "stats001" })
	d := resp["data"].(map[string]any)["d"].(map[string]any)
	samples, _ := d["samples"].(float64)
	// 62 frames of 256 samples, cut into 20 ms frames: all but the last
	// partial frame.
	if samples < 15500 || samples > 62*256 || d["sample_rate"] != 16000.0 || d["num_channels"] != 1.0 {
		t.Errorf("audio-stats = %v, want about 15,872 samples at 16 kHz mono", d)
	}
	if r, _ := d["rms"].(float64); math.Abs(r-8000.0/32768/math.Sqrt2) > 0.01 {
		t.Errorf("rms = %v, want %.4f (a sine of amplitude 8000)", d["rms"], 8000.0/32768/math.Sqrt2)
	}
	// Shut down as the browser sees it: the socket is closed with 1001
	// (going away) once the session has ended.
	code := make(chan websocket.StatusCode, 1)
	go func() {
		for {
			if _, _, err := w.c.Read(context.Background()); err != nil {
				code <- websocket.CloseStatus(err)
				return
			}
		}
	}()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run returned %v", err)
	}
	if got := <-code; got != websocket.StatusGoingAway {
		t.Errorf("the socket was closed with %v, want going away", got)
	}
}

func TestOverWebSocketAnUpgradeFromAnotherOriginIsRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startRun(t, ctx)
	base := strings.TrimPrefix(strings.TrimSpace(line), "listening on ")
	dctx, dcancel := context.WithTimeout(context.Background(), connectWait)
	defer dcancel()
	u := "ws" + strings.TrimPrefix(base, "http") + "/ws"
	_, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upgrade from another origin: %v, %v; want a 403", err, resp)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run returned %v", err)
	}
}
