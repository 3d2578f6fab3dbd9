package llmhttptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/llm"
)

// CheckStreamError streams [Question] from p and checks that it fails with
// an error whose text contains want and whose category is category, after
// yielding exactly the text text and no function calls or usage: a stream
// that goes wrong is an error, never a silently short answer.
func CheckStreamError(t *testing.T, p llm.Provider, want, text string, category frames.ErrorCategory) {
	t.Helper()
	evs, err := Collect(t.Context(), p, Question())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant it to contain %q", err, want)
	}
	if got, _ := Text(evs); got != text {
		t.Errorf("text before the error = %q, want %q", got, text)
	}
	if got := Category(err); got != category {
		t.Errorf("category %v, want %v", got, category)
	}
	if len(Calls(evs)) > 0 || len(Usage(evs)) > 0 {
		t.Errorf("a failed stream yielded calls or usage: %+v", evs)
	}
}

// CheckCancelClosesTheRequest streams [Question] from p, whose server srv
// stalls after some events (Answer.Stall), cancels the context after the
// second event and checks that the stream ends with context.Canceled and
// that srv sees the request closed.
func CheckCancelClosesTheRequest(t *testing.T, srv *Server, p llm.Provider) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0
	var err error
	for _, e := range p.Stream(ctx, Question()) {
		if e != nil {
			err = e
			break
		}
		if n++; n == 2 {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	WaitClosed(t, srv.Closed, "request")
}

// CheckSameFrames runs p and reference (the OpenAI client on the same
// answer) through [RunService], each waiting for calls function results,
// and checks that p pushes the same frames as reference, up and down, and
// texts text frames. name is p's, for the diffs.
func CheckSameFrames(t *testing.T, name string, reference, p llm.Provider, calls, texts int) {
	t.Helper()
	wantDown, wantUp := RunService(t, reference, calls)
	gotDown, gotUp := RunService(t, p, calls)
	if d := cmp.Diff(ByType(wantDown), ByType(gotDown), SameFrames); d != "" {
		t.Errorf("downstream frames (-openai +%s):\n%s", name, d)
	}
	if d := cmp.Diff(ByType(wantUp), ByType(gotUp), SameFrames); d != "" {
		t.Errorf("upstream frames (-openai +%s):\n%s", name, d)
	}
	if n := len(pipelinetest.OfType[*frames.LLMText](gotDown)); n != texts {
		t.Errorf("%d text frames, want %d", n, texts)
	}
}

// Conversation has everything a request encoder converts: a system
// prompt, tools (one with JSON Schema keywords some providers reject), a
// parallel tool call with its two results, a developer message (the UI
// agent's <ui_state>), an image and a tool choice. The two calls have the
// ids given, in the provider's own format.
func Conversation(callID0, callID1 string) *frames.LLMContext {
	c := llm.NewContext(
		llm.SystemMessage("You are a helpful voice assistant. Keep answers short."),
		llm.UserMessage("What's the weather in Paris and Tokyo?"),
		frames.LLMMessage{Role: "assistant", Content: "Let me check both.", ToolCalls: []frames.LLMToolCall{
			{ID: callID0, Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{ID: callID1, Name: "get_weather", Arguments: `{"city": "Tokyo"}`},
		}},
		frames.LLMMessage{Role: "tool", ToolCallID: callID0, Content: `{"temp_c":21}`},
		frames.LLMMessage{Role: "tool", ToolCallID: callID1, Content: `{"temp_c":17}`},
		llm.AssistantMessage("Paris is 21 degrees, Tokyo 17."),
		llm.DeveloperMessage("<ui_state>\n<screen name=\"weather\"/>\n</ui_state>"),
		frames.LLMMessage{Role: "user", Parts: []frames.LLMContentPart{
			{Type: "text", Text: "What is on this picture?"},
			{Type: "image_url", ImageURL: "data:image/png;base64,iVBORw0KGgo="},
		}},
	)
	c.SetTools([]frames.LLMTool{
		{Name: "get_weather", Description: "Current weather in a city.", Parameters: json.RawMessage(
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":["string","null"],"enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}`)},
		{Name: "get_time", Description: "Current local time."},
	})
	c.SetToolChoice(frames.LLMToolChoice{Mode: "auto"})
	return c.Snapshot()
}

// Golden compares the JSON request body got, indented, with testdata/name
// of the package under test; with update set it rewrites the file first.
func Golden(t *testing.T, name string, got []byte, update bool) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), pretty.String()); d != "" {
		t.Errorf("request body differs from %s (-want +got):\n%s", path, d)
	}
}

// AddFixtures adds the files of testdata matching pattern (such as
// "*.sse") to f's seed corpus, failing f when there are none.
func AddFixtures(f *testing.F, pattern string) {
	f.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", pattern))
	if len(paths) == 0 {
		f.Fatalf("no seed fixtures testdata/%s", pattern)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// Repeat returns a reader that repeats event forever, for benchmarks of
// the per-event parse path.
func Repeat(event []byte) io.Reader { return &repeatReader{event: event} }

type repeatReader struct {
	event []byte
	off   int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.event[r.off:])
		n += c
		r.off = (r.off + c) % len(r.event)
	}
	return n, nil
}

// MemoryTransport answers every request with Body as an event stream, in
// memory, so a benchmark measures the client rather than the network.
type MemoryTransport struct{ Body []byte }

// RoundTrip implements http.RoundTripper.
func (m MemoryTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(m.Body)),
	}, nil
}

// BenchStreamPerToken streams [Question] from p, whose answer (through a
// [MemoryTransport]) is tokens text pieces of token each, once per
// iteration, and reports the time per token as ns/token.
func BenchStreamPerToken(b *testing.B, p llm.Provider, tokens int, token string) {
	b.Helper()
	req := Question()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range p.Stream(b.Context(), req) {
			if err != nil {
				b.Fatal(err)
			}
			n += len(ev.Text)
		}
		if n != tokens*len(token) {
			b.Fatalf("read %d bytes of text, want %d", n, tokens*len(token))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}
