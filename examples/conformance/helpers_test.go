package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/framewire/framewire/examples/internal/conformancebot"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// wait bounds every wait of the pipeline-level tests: generous, so that
// only a real failure (a reply that never comes) trips it.
const wait = 10 * time.Second

// msg is one RTVI message the bot sent, decoded.
type msg struct {
	Label string          `json:"label"`
	Type  string          `json:"type"`
	ID    *string         `json:"id"`
	Data  json.RawMessage `json:"data"`
	raw   string
}

// data decodes the message's data into a generic map.
func (m msg) data(t testing.TB) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(m.Data, &d); err != nil {
		t.Fatalf("data of %s: %v", m.raw, err)
	}
	return d
}

func decodeMsg(t testing.TB, raw string) msg {
	t.Helper()
	var m msg
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("the bot sent invalid JSON %q: %v", raw, err)
	}
	m.raw = raw
	return m
}

// wire stands in for the output transport: it records every transport
// message the bot sends, in order, and lets the other frames through.
type wire struct {
	mu     sync.Mutex
	msgs   []string
	signal chan struct{}
}

func newWire() *wire { return &wire{signal: make(chan struct{}, 1)} }

func (w *wire) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	var b []byte
	switch f := f.(type) {
	case *frames.OutputTransportMessageUrgent:
		b = f.Message
	case *frames.OutputTransportMessage:
		b = f.Message
	default:
		return nil
	}
	w.mu.Lock()
	w.msgs = append(w.msgs, string(b))
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
	return nil
}

// bot runs newBot between a pass-through input and a wire.
type bot struct {
	t    testing.TB
	task *pipeline.Task
	wire *wire
	done chan error
	seen int // messages already returned by next
}

// passThrough stands in for the input transport.
type passThrough struct{}

func (passThrough) ProcessFrame(context.Context, *pipeline.Handle, frames.Frame, frames.Direction) error {
	return nil
}

// startBot runs a bot until the test ends.
func startBot(t testing.TB) *bot {
	t.Helper()
	b := &bot{t: t, wire: newWire(), done: make(chan error, 1)}
	b.task = conformancebot.New(passThrough{}, b.wire, zap.NewNop(), conformancebot.Options{})
	started := make(chan struct{})
	b.task.OnStarted(func() { close(started) })
	go func() { b.done <- b.task.Run(context.Background()) }()
	select {
	case <-started:
	case err := <-b.done:
		t.Fatalf("the bot's task ended at once: %v", err)
	case <-time.After(wait):
		t.Fatal("the bot's task did not start")
	}
	t.Cleanup(func() {
		b.task.EndWhenDone()
		select {
		case <-b.done:
		case <-time.After(wait):
			b.task.Cancel("test over")
			<-b.done
		}
	})
	return b
}

// sendRaw queues a data-channel message as the input transport would.
func (b *bot) sendRaw(text string) {
	b.task.QueueFrame(&frames.InputTransportMessage{Message: []byte(text)})
}

// send queues an RTVI message.
func (b *bot) send(typ, id string, data any) {
	m := map[string]any{"label": "rtvi-ai", "type": typ, "id": id}
	if data != nil {
		m["data"] = data
	}
	raw, err := json.Marshal(m)
	if err != nil {
		b.t.Fatal(err)
	}
	b.sendRaw(string(raw))
}

// ready runs the handshake as a client of the given RTVI version.
func (b *bot) ready(version string) msg {
	b.t.Helper()
	b.send("client-ready", "ready001", map[string]any{"version": version, "about": map[string]any{"library": "go-test"}})
	return b.next(func(m msg) bool { return m.Type == "bot-ready" })
}

// next returns the next message after those already returned that
// satisfies match (nil: any), waiting for it.
func (b *bot) next(match func(msg) bool) msg {
	b.t.Helper()
	deadline := time.After(wait)
	for {
		b.wire.mu.Lock()
		all := b.wire.msgs
		b.wire.mu.Unlock()
		for b.seen < len(all) {
			m := decodeMsg(b.t, all[b.seen])
			b.seen++
			if match == nil || match(m) {
				return m
			}
		}
		select {
		case <-b.wire.signal:
		case <-deadline:
			b.t.Fatalf("no matching message within %v; the bot sent:\n%s", wait, strings.Join(all, "\n"))
		}
	}
}

// all returns every message sent so far.
func (b *bot) all() []msg {
	b.wire.mu.Lock()
	defer b.wire.mu.Unlock()
	out := make([]msg, len(b.wire.msgs))
	for i, raw := range b.wire.msgs {
		out[i] = decodeMsg(b.t, raw)
	}
	return out
}

func ofType(typ string) func(msg) bool { return func(m msg) bool { return m.Type == typ } }

func withID(id string) func(msg) bool {
	return func(m msg) bool { return m.ID != nil && *m.ID == id }
}

// keys returns the sorted member names of an object.
func keys(v map[string]any) string { return fmt.Sprint(slices.Sorted(maps.Keys(v))) }

// forget drops the messages received so far (benchmarks use it to keep
// memory flat).
func (b *bot) forget() {
	b.wire.mu.Lock()
	b.wire.msgs = b.wire.msgs[:0]
	b.wire.mu.Unlock()
	b.seen = 0
}
