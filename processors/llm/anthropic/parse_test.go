package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/framewire/framewire/internal/llmhttp"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm"
)

// bare serves events from a reader, as the client's stream does from the
// HTTP body.
type bare struct{ *llmhttp.Reader }

func (bare) ContentType() string { return "text/event-stream" }

// readAll runs the SSE reader and event decoder over body the way the
// client does.
func readAll(body []byte, maxLine int) (evs []llm.Event, err error) {
	read(bare{llmhttp.NewReader(bytes.NewReader(body), maxLine)}, func(ev llm.Event, e error) bool {
		if e != nil {
			err = e
			return false
		}
		evs = append(evs, ev)
		return true
	})
	return evs, err
}

func TestSSEFraming(t *testing.T) {
	stop := "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	cases := []struct {
		name, body, want string
	}{
		{"CRLF line ends", "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\r\n\r\n" + stop, "a"},
		{"comments and ids", ": keep-alive\nid: 7\nretry: 100\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"b\"}}\n\n" + stop, "b"},
		{"type only in the event line", "event: content_block_delta\ndata: {\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"c\"}}\n\n" + stop, "c"},
		{"members in any order", "data: {\"delta\":{\"text\":\"d\",\"type\":\"text_delta\"},\"index\":0,\"type\":\"content_block_delta\"}\n\n" + stop, "d"},
		{"spaces and unknown events", "event: future_event\ndata: { \"type\" : \"future_event\" , \"x\" : [1, {\"y\": null}] }\n\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"e\"}}\n\n" + stop, "e"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := readAll([]byte(tc.body), 0)
			var b strings.Builder
			for _, e := range evs {
				b.WriteString(e.Text)
			}
			if err != nil || b.String() != tc.want {
				t.Errorf("got %q, %v; want %q", b.String(), err, tc.want)
			}
		})
	}
}

// Text is unescaped exactly as encoding/json does.
func TestTextIsUnescapedAsEncodingJSONDoes(t *testing.T) {
	for _, s := range []string{`a\"b`, `\\`, `\/`, `\b\f\n\r\t`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\u003cui\u003e`} {
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatal(err)
		}
		var d decoder
		got, err := d.decode(nil, []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+s+`"}}`))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q (%v), want %q", s, got, err, want)
		}
	}
}

func seedCorpus(f *testing.F) {
	llmhttptest.AddFixtures(f, "*.sse")
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"a\":[1,\"]\"]}}}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
}

// FuzzStream feeds arbitrary bytes to the SSE reader and event decoder:
// they must never panic or hang, a stream either completes or fails with
// an error, and the text they yield from valid UTF-8 is valid UTF-8.
func FuzzStream(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		evs, err := readAll(body, 4096)
		for _, e := range evs {
			if e.Kind == llm.EventText && utf8.Valid(body) && !utf8.ValidString(e.Text) {
				t.Fatalf("invalid UTF-8 text %q from valid UTF-8 input", e.Text)
			}
		}
		complete := bytes.Contains(body, []byte("message_stop"))
		if err == nil && !complete {
			t.Fatalf("a stream without message_stop ended without an error")
		}
	})
}

// FuzzTextDelta checks the scanner against encoding/json: whenever
// encoding/json reads a text delta, the decoder reads the same text.
func FuzzTextDelta(f *testing.F) {
	for _, s := range []string{"Hello", "It's \\\"21°C\\\"\\n", "\\u00e9\\ud83d\\ude00", "tab\\there", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		event := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}`
		var ref struct {
			Delta struct {
				Text string `json:"text"`
			} `json:"delta"`
		}
		refErr := json.Unmarshal([]byte(event), &ref)
		var d decoder
		got, err := d.decode(nil, []byte(event))
		if refErr != nil {
			return // the scanner may be more lenient; it must only not crash
		}
		if err != nil {
			t.Fatalf("decoder rejected what encoding/json read: %v\n%s", err, event)
		}
		if utf8.ValidString(text) && string(got) != ref.Delta.Text {
			t.Fatalf("text %q, encoding/json read %q", got, ref.Delta.Text)
		}
	})
}

// FuzzErrorBody: any error body parses into an error that keeps its status
// and whose text carries neither newlines nor the raw body.
func FuzzErrorBody(f *testing.F) {
	llmhttptest.AddFixtures(f, "error_*")
	f.Fuzz(func(t *testing.T, body []byte) {
		e := parseAPIError(503, body)
		if e.StatusCode != 503 || !strings.HasPrefix(e.Error(), "anthropic: HTTP 503 Service Unavailable") {
			t.Fatalf("error %q", e.Error())
		}
		if strings.ContainsAny(e.Error(), "\n\r") || len(e.Error()) > 512 {
			t.Fatalf("error text is not one short line: %q", e.Error())
		}
	})
}

// BenchmarkParseToken measures the per-token parse cost: reading one
// recorded-shape text delta event from the stream, decoding it, and making
// the string the LLMText frame carries (the one allocation per token).
func BenchmarkParseToken(b *testing.B) {
	event := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" today\"}}\n\n")
	rd := llmhttp.NewReader(llmhttptest.Repeat(event), 0)
	var d decoder
	var sink string
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	for b.Loop() {
		data, ev, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		text, err := d.decode(ev, data)
		if err != nil {
			b.Fatal(err)
		}
		sink = string(text)
	}
	if sink != " today" {
		b.Fatalf("decoded %q", sink)
	}
}

// BenchmarkParseToolDelta measures one tool-input fragment.
func BenchmarkParseToolDelta(b *testing.B) {
	event := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"city\\\": \\\"\"}}\n\n")
	rd := llmhttp.NewReader(llmhttptest.Repeat(event), 0)
	d := decoder{blocks: []*contentBlock{{index: 1, typ: "tool_use", id: "toolu_1", name: "get_weather"}}}
	b.ReportAllocs()
	for b.Loop() {
		data, ev, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.decode(ev, data); err != nil {
			b.Fatal(err)
		}
		d.blocks[0].input, d.kept = d.blocks[0].input[:0], 0
	}
}

// BenchmarkParseTokenEncodingJSON is the same event decoded with
// encoding/json into a struct, for comparison.
func BenchmarkParseTokenEncodingJSON(b *testing.B) {
	event := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" today\"}}\n\n")
	rd := llmhttp.NewReader(llmhttptest.Repeat(event), 0)
	b.ReportAllocs()
	for b.Loop() {
		data, _, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		var ev struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			b.Fatal(err)
		}
	}
}

// What goes back on pause_turn is the answer's blocks as they came:
// thinking with its signature, text from its deltas (the service's tool
// calls and their results: see TestPauseTurnContinuesTheTurn's golden).
func TestPausedContentGoesBackAsItCame(t *testing.T) {
	var dec decoder
	rd := llmhttp.NewReader(bytes.NewReader(llmhttptest.Fixture(t, "thinking.sse")), 0)
	for {
		data, ev, err := rd.Next()
		if err != nil {
			break
		}
		if _, err := dec.decode(ev, data); err != nil {
			t.Fatal(err)
		}
	}
	blocks, err := dec.content()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range blocks {
		got = append(got, string(b.raw))
	}
	want := []string{
		`{"type":"thinking","thinking":"The user greets me.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}`,
		`{"type":"text","text":"Hi there."}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("content:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
