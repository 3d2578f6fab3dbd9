package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/internal/natstest"
	"github.com/framewire/framewire/transports/websocket/websockettest"
)

// A worker run with -ws-addr serves the WebSocket transport: a /connect
// through the front door is answered with the worker's own socket URL
// (its -ws-addr listener, announced at start), exactly {"wsUrl"} as
// client-js wants it, and the conformance bot on that socket answers the
// RTVI handshake and plays its tone.
func TestWorkerServesWebSocketSessionsThroughTheFrontDoor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a NATS server, a worker and a front door")
	}
	url := natstest.Embedded(t)
	a := runCommand(t, workerCommand, []string{"-nats", url, "-id", "w1", "-loopback-only", "-grace", "2s",
		"-ws-addr", "127.0.0.1:0", "-ws-capacity", "3"}, "worker w1 websocket on ")
	public, _, _ := strings.Cut(a[0], " ")
	if !strings.HasPrefix(public, "ws://127.0.0.1:") || !strings.HasSuffix(public, "/ws") {
		t.Fatalf("the worker announced its socket URL %q, want ws://127.0.0.1:PORT/ws", public)
	}
	base := runCommand(t, frontdoorCommand, []string{"-nats", url, "-addr", "127.0.0.1:0", "-status-addr", ""}, "listening on ")[0]

	// The worker joins the queue group as it starts: until then the front
	// door answers 503, which the client retries.
	client := &http.Client{Timeout: 10 * time.Second}
	var raw []byte
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := client.Post(base+"/connect", "application/json", strings.NewReader(`{"user":"u1"}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("POST /connect: %d %s", resp.StatusCode, raw)
		}
	}
	var answer map[string]string
	if err := json.Unmarshal(raw, &answer); err != nil || len(answer) != 1 || !strings.HasPrefix(answer["wsUrl"], public+"?session=") {
		t.Fatalf("POST /connect answered %s, want exactly {\"wsUrl\": %q + \"?session=...\"}", raw, public)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := websockettest.Dial(ctx, websockettest.Options{URL: answer["wsUrl"]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ready, _ := json.Marshal(map[string]any{"label": "rtvi-ai", "type": "client-ready", "id": "ready001",
		"data": map[string]any{"version": "2.1.0", "about": map[string]any{"library": "go-test"}}})
	if err := c.Send(ctx, ready); err != nil {
		t.Fatal(err)
	}
	for botReady := false; !botReady; {
		select {
		case m := <-c.Messages():
			var v struct {
				Type string `json:"type"`
			}
			botReady = json.Unmarshal(m, &v) == nil && v.Type == "bot-ready"
		case <-c.Done():
			t.Fatalf("the socket closed before bot-ready: %v", c.Err())
		case <-ctx.Done():
			t.Fatal("no bot-ready")
		}
	}
	for c.AudioFramesIn.Load() < 10 {
		select {
		case <-c.Done():
			t.Fatalf("the socket closed: %v", c.Err())
		case <-ctx.Done():
			t.Fatalf("%d audio frames of the tone, want 10", c.AudioFramesIn.Load())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if rate := c.LastAudioRate.Load(); rate != 24000 {
		t.Errorf("the tone's frames say %d Hz, want 24000 (the client player's rate)", rate)
	}
}

func TestWorkerRefusesWebSocketFlagsThatMeanNothing(t *testing.T) {
	for _, args := range [][]string{{"-ws-public-url", "wss://w1.example/ws"}, {"-ws-addr", "127.0.0.1:0", "-ws-capacity", "0"}} {
		err := workerCommand(context.Background(), args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[len(args)-2]) {
			t.Errorf("worker %q: %v, want an error naming %s", args, err, args[len(args)-2])
		}
	}
}
