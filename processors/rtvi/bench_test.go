package rtvi

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// bigSnapshot returns the JSON of a snapshot of n nodes shaped like what
// the JS walker sends for a long form page: sections of headings,
// paragraphs, text and textareas holding long values; about 300 bytes
// per node (200 nodes is about 60 KB).
func bigSnapshot(n int) []byte {
	var sb strings.Builder
	ref := 1
	next := func() string { ref++; return fmt.Sprintf("e%d", ref) }
	words := "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"
	name := func(i int) string { return strings.ToUpper(words[:1]) + words[1:90] + fmt.Sprintf(" %d", i) }
	sb.WriteString(`{"root":{"ref":"e1","role":"generic","children":[`)
	count := 1
	for s := 0; count < n; s++ {
		if s > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"ref":%q,"role":"region","name":%q,"children":[`, next(), name(s))
		count++
		for i := 0; i < 9 && count < n; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			switch i % 4 {
			case 0:
				fmt.Fprintf(&sb, `{"ref":%q,"role":"heading","name":%q,"level":2}`, next(), name(i))
			case 1:
				fmt.Fprintf(&sb, `{"ref":%q,"role":"paragraph","name":%q}`, next(), name(i)+" "+words[:60])
			case 2:
				fmt.Fprintf(&sb, `{"ref":%q,"role":"textbox","name":%q,"value":%q,"state":["focused","offscreen"]}`, next(), name(i), words+" "+words+" "+words+" "+words+" "+words[:60])
			case 3:
				fmt.Fprintf(&sb, `{"ref":"","role":"text","name":%q}`, name(i)+" "+words[:80])
			}
			count++
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`]},"captured_at":1752494400123,"selection":{"ref":"e4","text":"Lorem ipsum"},"viewport":{"width":1280,"height":800}}`)
	return []byte(sb.String())
}

func TestBigSnapshotShape(t *testing.T) {
	b := bigSnapshot(200)
	s, err := wire.DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if n := countNodes(s); n != 200 {
		t.Errorf("%d nodes, want 200", n)
	}
	if len(b) < 55_000 || len(b) > 65_000 {
		t.Errorf("%d bytes, want about 60 KB", len(b))
	}
	// A ui-snapshot message of that size goes through the processor.
	msg := `{"label":"rtvi-ai","type":"ui-snapshot","id":"big","data":{"tree":` + string(b) + `}}`
	res := runProcessor(t, NewProcessor(Options{}), msg)
	down := notSent(res.Down())
	if len(down) != 1 {
		t.Fatalf("frames %v", down)
	}
	if f, ok := down[0].(*UISnapshotFrame); !ok || countNodes(f.Tree) != 200 || f.Tree.Find("e4") == nil {
		t.Errorf("pushed %#v", down[0])
	}
}

// nopPusher drops frames.
type nopPusher struct{}

func (nopPusher) Push(frames.Frame, frames.Direction) {}
func (nopPusher) PushError(error)                     {}

// BenchmarkObserverBotLLMText is the observer's whole hot path for one LLM
// token: map the frame, encode the message, build the urgent transport
// frame and push it.
func BenchmarkObserverBotLLMText(b *testing.B) {
	p := NewProcessor(Options{})
	p.sink = nopPusher{}
	o := NewObserver(p, ObserverOptions{})
	f := &frames.LLMText{Text: " sunny"}
	e := observers.Event{Kind: observers.Pushed, Source: llmNode, Frame: f, Direction: frames.Downstream, FirstSeen: true}
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(e)
		o.transcript = o.transcript[:0]
	}
}

func BenchmarkObserverBotOutput(b *testing.B) {
	p := NewProcessor(Options{})
	p.sink = nopPusher{}
	o := NewObserver(p, ObserverOptions{})
	o.botSpeaking = true
	f := &frames.AggregatedText{Text: "Hello world, this is a sentence.", AggregatedBy: "sentence", WillBeSpoken: true}
	framebook.MarkPushed(f.FrameBase())
	e := observers.Event{Kind: observers.Pushed, Source: transportNode, Frame: f, Direction: frames.Downstream}
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(e)
	}
}

func BenchmarkProcessorHandleUIEvent(b *testing.B) {
	p := NewProcessor(Options{})
	p.sink = nopPusher{}
	data := []byte(`{"label":"rtvi-ai","type":"ui-event","id":"m1","data":{"event":"nav_click","payload":{"view":"home"}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p.handleRaw(ctx, nopPusher{}, data)
	}
}
func countNodes(s *wire.Snapshot) int {
	n := 0
	s.Root.Walk(func(*wire.Node, int) bool { n++; return true })
	return n
}
