package rtvi

import (
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/framebook"
	"github.com/framewire/framewire/observers"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// vector is one entry of testdata/rtvi_vectors.json (real messages
// of the Pipecat clients and servers).
type vector struct {
	Name      string          `json:"name"`
	Direction string          `json:"direction"`
	Protocol  string          `json:"protocol"`
	FromTest  bool            `json:"from_test"`
	Source    string          `json:"source"`
	JSON      json.RawMessage `json:"json"`
	Notes     string          `json:"notes"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("wire/testdata/rtvi_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

func vectorByName(t testing.TB, name string) vector {
	t.Helper()
	for _, v := range loadVectors(t) {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no vector named %q", name)
	return vector{}
}

// decodeAny decodes JSON into generic values, for comparison with go-cmp.
func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// decodeSent decodes the message of m and checks that the frame's Type
// is the message's type: the frame describes itself truthfully.
func decodeSent(t testing.TB, m *frames.OutputTransportMessageUrgent) any {
	t.Helper()
	v := decodeAny(t, m.Message)
	o, _ := v.(obj)
	if typ, _ := o["type"].(string); typ != m.Type {
		t.Errorf("frame Type %q, message type %q: %s", m.Type, typ, m.Message)
	}
	return v
}

// pusher records what is pushed through it, from any goroutine.
type pusher struct {
	mu     sync.Mutex
	frames []frames.Frame
	dirs   []frames.Direction
}

func (r *pusher) Push(f frames.Frame, dir frames.Direction) {
	r.mu.Lock()
	r.frames = append(r.frames, f)
	r.dirs = append(r.dirs, dir)
	r.mu.Unlock()
}

func (r *pusher) PushError(err error) { r.Push(&frames.Error{Err: err}, frames.Upstream) }

// messages returns the RTVI messages pushed so far, decoded, and forgets them.
func (r *pusher) messages(t testing.TB) []any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []any
	for _, f := range r.frames {
		if m, ok := f.(*frames.OutputTransportMessageUrgent); ok {
			out = append(out, decodeSent(t, m))
		}
	}
	r.frames, r.dirs = nil, nil
	return out
}

// testProcessor returns a processor wired to a recording pusher, as if set
// up by a task, with the client version already announced ("" for none).
func testProcessor(clientVersion string) (*Processor, *pusher) {
	p := NewProcessor(Options{})
	rec := &pusher{}
	p.sink = rec
	if clientVersion != "" {
		v, _ := wire.CheckClientVersion(clientVersion)
		p.version.Store(&v)
	}
	return p, rec
}

// node is a fake observers.Node.
type node struct {
	name string
	proc any
}

func (n node) Name() string   { return n.name }
func (n node) Processor() any { return n.proc }

// outputTransport stands for the output transport processor.
type outputTransport struct{ pipeline.PassThrough }

func (outputTransport) OutputTransport() {}

var (
	llmNode       = node{"LLM#1", struct{ name string }{"llm"}}
	transportNode = node{"Output#2", &outputTransport{}}
)

// observe feeds f to o as its first push, downstream, from src.
func observe(o *Observer, src observers.Node, f frames.Frame) {
	framebook.MarkPushed(f.FrameBase())
	o.Observe(observers.Event{Kind: observers.Pushed, Source: src, Frame: f, Direction: frames.Downstream, FirstSeen: true})
}

// inbound wraps a client message in a transport message frame.
func inbound(s string) *frames.InputTransportMessage {
	return &frames.InputTransportMessage{Message: []byte(s)}
}

// runProcessor runs p in a task, sends the client messages, ends the task
// and returns what came out.
func runProcessor(t *testing.T, p *Processor, msgs ...string) *pipelinetest.Result {
	t.Helper()
	send := make([]frames.Frame, len(msgs))
	for i, m := range msgs {
		send[i] = inbound(m)
	}
	return pipelinetest.Run(t, p, pipelinetest.Options{Send: send})
}

// sent returns the RTVI messages among frames, decoded.
func sent(t testing.TB, fs []frames.Frame) []any {
	t.Helper()
	var out []any
	for _, f := range fs {
		if m, ok := f.(*frames.OutputTransportMessageUrgent); ok {
			out = append(out, decodeSent(t, m))
		}
	}
	return out
}

// notSent returns the frames that are not RTVI messages.
func notSent(fs []frames.Frame) []frames.Frame {
	var out []frames.Frame
	for _, f := range fs {
		if _, ok := f.(*frames.OutputTransportMessageUrgent); !ok {
			out = append(out, f)
		}
	}
	return out
}

// diffJSON compares decoded JSON values.
func diffJSON(want, got any) string { return cmp.Diff(want, got) }

// obj is shorthand for a decoded JSON object.
type obj = map[string]any
