package main

import (
	"bytes"
	"context"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
	"github.com/framewire/framewire/processors/tts"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// wireRecorder stands in for the output transport: it keeps the bytes of
// every transport message, in the order they would leave.
type wireRecorder struct {
	mu   sync.Mutex
	msgs [][]byte
	news chan struct{}
}

func (w *wireRecorder) ProcessFrame(_ context.Context, h *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	var raw []byte
	switch m := f.(type) {
	case *frames.OutputTransportMessageUrgent:
		raw = m.Message
	case *frames.OutputTransportMessage:
		raw = m.Message
	default:
		return nil
	}
	h.Consume()
	w.mu.Lock()
	w.msgs = append(w.msgs, bytes.Clone(raw))
	w.mu.Unlock()
	select {
	case w.news <- struct{}{}:
	default:
	}
	return nil
}

// waitCount waits until n messages containing sub have been recorded.
func (w *wireRecorder) waitCount(t *testing.T, sub string, n int) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		w.mu.Lock()
		c := 0
		for _, m := range w.msgs {
			if bytes.Contains(m, []byte(sub)) {
				c++
			}
		}
		w.mu.Unlock()
		if c >= n {
			return
		}
		select {
		case <-w.news:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("fewer than %d messages with %s; the server sent:\n%s", n, sub, w.text())
		}
	}
}

func (w *wireRecorder) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, m := range w.msgs {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.String()
}

// The only values of the wire that change from run to run: the ids of
// messages the server starts (UUIDs) and task-group envelope times.
var (
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	atRE    = regexp.MustCompile(`"(at|timestamp|created_at)":[0-9]+`)
	clockRE = regexp.MustCompile(`"(timestamp)":"[^"]*"`)
)

// normalize replaces the random parts of the wire by stable placeholders:
// each distinct UUID by <id-N> in order of first appearance, timestamps by
// 0.
func normalize(wire string) string {
	ids := map[string]string{}
	wire = uuidRE.ReplaceAllStringFunc(wire, func(id string) string {
		if n, ok := ids[id]; ok {
			return n
		}
		n := "<id-" + string(rune('A'+len(ids))) + ">"
		ids[id] = n
		return n
	})
	wire = atRE.ReplaceAllString(wire, `"$1":0`)
	return clockRE.ReplaceAllString(wire, `"$1":"<time>"`)
}

// scripted is the model of the golden turns: it answers the pointing
// question with a reply that scrolls to the offscreen card, highlights it
// and answers, and the dictated details with a reply that fills the form
// and answers.
func scripted() *llmtest.Provider {
	return &llmtest.Provider{Respond: func(_ int, req *frames.LLMContext) []llm.Event {
		last := req.Messages[len(req.Messages)-1]
		if last.Role != llm.RoleUser {
			return nil
		}
		switch {
		case strings.Contains(last.Content, "iPhone 17"):
			return []llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "call_point", Name: "reply", Arguments: `{
				"answer": "The iPhone 17 is in row 5, column 2; I scrolled down to it.",
				"scroll_to": "e62",
				"highlight": ["e62"]}`})}
		case strings.Contains(last.Content, "Ada"):
			return []llm.Event{llm.ToolCallEvent(frames.LLMToolCall{ID: "call_fill", Name: "reply", Arguments: `{
				"answer": "I filled in Ada Lovelace and ada@example.com.",
				"fills": [{"ref": "e91", "value": "Ada"}, {"ref": "e92", "value": "Lovelace"}, {"ref": "e93", "value": "ada@example.com"}]}`})}
		}
		return nil
	}}
}

// silentTTS speaks every request as 20 ms of silence, with its words.
func silentTTS() tts.Synthesizer {
	return tts.SynthesizerFunc(func(ctx context.Context, req tts.Request) iter.Seq2[tts.Chunk, error] {
		return func(yield func(tts.Chunk, error) bool) {
			var words []tts.Word
			for i, w := range strings.Fields(req.Text) {
				words = append(words, tts.Word{Text: w, Start: time.Duration(i) * time.Millisecond})
			}
			yield(tts.Chunk{Audio: make([]byte, 640), SampleRate: 16000, Words: words}, nil)
		}
	})
}

// reorder puts each llm-function-call-stopped before the bot-tts-*
// messages just ahead of it. The LLM service sends the function call's
// end and the TTS speaks the reply's answer on goroutines of their own,
// so the order of those two is a race in any wiring, not a property of
// it.
func reorder(lines []string) []string {
	for i := range lines {
		if !strings.Contains(lines[i], `"type":"llm-function-call-stopped"`) {
			continue
		}
		for j := i; j > 0 && strings.Contains(lines[j-1], `"type":"bot-tts-`); j-- {
			lines[j-1], lines[j] = lines[j], lines[j-1]
		}
	}
	return lines
}

// The golden wire: a session of the demo bot (greeting, a pointing turn,
// a form-fill turn, End) sends exactly the RTVI messages recorded in
// testdata/golden, byte for byte once ids and times are normalized. The
// files were recorded at the wiring of commit 755f6b0, before the
// one-call UI agent wiring: the new wiring must not change the wire.
func TestGoldenWire(t *testing.T) {
	for _, tc := range []struct {
		name  string
		voice voice
		// answered is the message that ends an answer (the greeting's
		// too), and perAnswer how many of it an answer sends.
		answered  string
		perAnswer int
	}{
		// A text answer is one LLM response, after the turn's inference.
		{"text", voice{}, `"type":"bot-llm-stopped"`, 2},
		{"voice", voice{STT: true, TTS: true,
			newSTT: func() []pipeline.Processor { return []pipeline.Processor{passThrough{}} },
			newTTS: func() pipeline.Processor { return tts.NewService(silentTTS(), tts.Options{}) },
		}, `"type":"bot-tts-stopped"`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &bot{brain: brain{Kind: "test", Label: "scripted", provider: scripted()}, voice: tc.voice,
				log: zap.NewNop(), researchStep: time.Second}
			out := &wireRecorder{news: make(chan struct{}, 1)}
			task := mustBuild(t, b, out)
			done := make(chan error, 1)
			go func() { done <- task.Run(context.Background()) }()

			send := func(raw string) { task.QueueFrame(&frames.InputTransportMessage{Message: []byte(raw)}) }
			// turnOver waits until the n-th turn's function call has
			// stopped and its answer has ended.
			turnOver := func(n int) {
				out.waitCount(t, `"type":"llm-function-call-stopped"`, n)
				out.waitCount(t, tc.answered, 1+n*tc.perAnswer)
			}
			send(`{"label":"rtvi-ai","type":"client-ready","id":"c1","data":{"version":"2.1.0","about":{"library":"golden"}}}`)
			out.waitCount(t, tc.answered, 1) // the greeting
			snap, err := os.ReadFile("demobrain/testdata/top.json")
			if err != nil {
				t.Fatal(err)
			}
			send(`{"label":"rtvi-ai","type":"ui-snapshot","id":"c2","data":{"tree":` + string(bytes.TrimSpace(snap)) + `}}`)
			send(`{"label":"rtvi-ai","type":"send-text","id":"c3","data":{"content":"where is the iPhone 17?","options":{}}}`)
			turnOver(1)
			send(`{"label":"rtvi-ai","type":"send-text","id":"c4","data":{"content":"My name is Ada Lovelace and my email is ada@example.com","options":{}}}`)
			turnOver(2)
			task.EndWhenDone()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("task ended with %v", err)
				}
			case <-time.After(20 * time.Second):
				task.Cancel("test over")
				<-done
				t.Fatal("the session did not end after End")
			}

			got := strings.Join(reorder(strings.Split(normalize(out.text()), "\n")), "\n")
			path := filepath.Join("testdata", "golden", tc.name+".jsonl")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to record)", err)
			}
			if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
				t.Errorf("the wire differs from %s (-want +got):\n%s", path, d)
			}
		})
	}
}
