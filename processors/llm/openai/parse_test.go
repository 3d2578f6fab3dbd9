package openai

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/framewire/framewire/internal/llmhttp"
)

// readAll runs the SSE reader and chunk decoder over body the way the
// client does, returning the text and the assembled calls.
func readAll(body []byte, maxLine int) (text string, calls int, err error) {
	rd := llmhttp.NewReader(strings.NewReader(string(body)), maxLine)
	var dec chunkDecoder
	var b strings.Builder
	for {
		data, _, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return b.String(), 0, err
		}
		if isDone(data) {
			break
		}
		t, err := dec.decode(data)
		if err != nil {
			return b.String(), 0, err
		}
		b.Write(t)
	}
	return b.String(), len(dec.calls()), nil
}

func TestSSEFraming(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"CRLF line ends", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n", "a"},
		{"comments and other fields", ": keep-alive\nevent: message\nid: 7\nretry: 100\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n", "b"},
		{"no space after colon", "data:{\"choices\":[{\"delta\":{\"content\":\"c\"}}]}\n\n", "c"},
		{"last event without blank line", "data: {\"choices\":[{\"delta\":{\"content\":\"d\"}}]}", "d"},
		{"data split over lines", "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"e\"}}]}\n\n", "e"},
		{"null fields", "data: {\"choices\":[{\"delta\":{\"content\":null,\"tool_calls\":null},\"finish_reason\":null}],\"usage\":null}\n\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := readAll([]byte(tc.body), 0)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestLongLinesWithinTheLimitAreRead(t *testing.T) {
	long := strings.Repeat("é", 20000) // longer than the bufio buffer
	body := `data: {"choices":[{"delta":{"content":"` + long + `"}}]}` + "\n\n"
	got, _, err := readAll([]byte(body), 0)
	if err != nil || got != long {
		t.Errorf("err %v, %d bytes", err, len(got))
	}
	_, _, err = readAll([]byte(body), 1000)
	if !errors.Is(err, llmhttp.ErrLineTooLong) {
		t.Errorf("err = %v, want the line limit", err)
	}
}

func TestContentIsUnescapedAsEncodingJSONDoes(t *testing.T) {
	chunk := func(content string) []byte {
		return []byte(`{"choices":[{"delta":{"content":"` + content + `"}}]}`)
	}
	for _, s := range []string{`a\"b`, `\\`, `\/`, `\b\f\n\r\t`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00x`, `\u0041\u0042`} {
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatal(err)
		}
		var dec chunkDecoder
		got, err := dec.decode(chunk(s))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q (%v), want %q", s, got, err, want)
		}
	}
	for _, bad := range []string{`\x`, `\u12`, `\uzzzz`, `\ud83d\uzzzz`} {
		var dec chunkDecoder
		if _, err := dec.decode(chunk(bad)); err == nil || !strings.Contains(err.Error(), "bad escape") {
			t.Errorf("%s: err = %v, want a bad escape error", bad, err)
		}
	}
}

func seedCorpus(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: {\"error\":{\"message\":\"x\",\"code\":429}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"\"}},{\"id\":\"b\"}]}}]}\n\n"))
}

// FuzzStream feeds arbitrary bytes to the SSE reader and chunk decoder:
// they must never panic, hang or grow past the line limit, and text they
// return must come from valid JSON strings.
func FuzzStream(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		text, _, err := readAll(body, 4096)
		if err == nil && !utf8.ValidString(text) && utf8.Valid(body) {
			t.Errorf("invalid UTF-8 text %q from valid UTF-8 input", text)
		}
	})
}

// FuzzChunkContent checks the scanner against encoding/json: whenever
// encoding/json reads a chunk, the scanner reads the same content.
func FuzzChunkContent(f *testing.F) {
	for _, s := range []string{"Hello", "It's \"21°C\"\n", "\\u00e9\\ud83d\\ude00", "tab\\there", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		chunk := `{"choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}],"usage":null}`
		var ref struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		refErr := json.Unmarshal([]byte(chunk), &ref)
		var dec chunkDecoder
		got, err := dec.decode([]byte(chunk))
		if refErr != nil {
			return // the scanner may be more lenient; it must only not crash
		}
		if err != nil {
			t.Fatalf("scanner rejected what encoding/json read: %v\n%s", err, chunk)
		}
		if !utf8.ValidString(content) {
			return // encoding/json replaces invalid bytes; the scanner passes them on
		}
		if string(got) != ref.Choices[0].Delta.Content {
			t.Fatalf("content %q, encoding/json read %q", got, ref.Choices[0].Delta.Content)
		}
	})
}

// repeatReader repeats one SSE event forever.
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

// BenchmarkParseToken measures the client's per-token parse cost: reading
// one OpenAI chunk (as recorded) from the stream, decoding it, and making
// the text string the emitted LLMText frame carries (that string is the one
// allocation per token).
func BenchmarkParseToken(b *testing.B) {
	event := []byte(`data: {"id":"chatcmpl-BfX2k9QzL0m3N8pR7sT1uV4wY6","object":"chat.completion.chunk","created":1764412345,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_34a54ae93c","choices":[{"index":0,"delta":{"content":" today"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	rd := llmhttp.NewReader(&repeatReader{event: event}, 0)
	var dec chunkDecoder
	var sink string
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	for b.Loop() {
		data, _, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		text, err := dec.decode(data)
		if err != nil {
			b.Fatal(err)
		}
		sink = string(text)
	}
	if sink != " today" {
		b.Fatalf("decoded %q", sink)
	}
}

// BenchmarkParseToolDelta measures one tool-call argument fragment.
func BenchmarkParseToolDelta(b *testing.B) {
	event := []byte(`data: {"id":"chatcmpl-BfX2k9QzL0m3N8pR7sT1uV4wY6","object":"chat.completion.chunk","created":1764412345,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_34a54ae93c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"city\":\""}}]},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	rd := llmhttp.NewReader(&repeatReader{event: event}, 0)
	var dec chunkDecoder
	b.ReportAllocs()
	for b.Loop() {
		data, _, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := dec.decode(data); err != nil {
			b.Fatal(err)
		}
		if len(dec.tools[0].args) > 1<<20 {
			dec.tools[0].args = dec.tools[0].args[:0]
		}
	}
}
