package gemini

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

// readAll runs the SSE reader and chunk decoder over body the way the
// client does.
func readAll(body []byte, maxLine int) (evs []llm.Event, err error) {
	c := &Client{}
	c.read(bare{llmhttp.NewReader(bytes.NewReader(body), maxLine)}, "gemini_test_", func(ev llm.Event, e error) bool {
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
	cases := []struct {
		name, body, want string
	}{
		{"LF line ends", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]},\"finishReason\":\"STOP\"}]}\n\n", "a"},
		{"members in any order", "data: {\"modelVersion\":\"m\",\"candidates\":[{\"finishReason\":\"STOP\",\"index\":0,\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"b\"}]}}]}\r\n\r\n", "b"},
		{"several parts", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"c\"},{\"text\":\"d\"}]},\"finishReason\":\"MAX_TOKENS\"}]}\n\n", "cd"},
		{"second candidate ignored", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"e\"}]},\"finishReason\":\"STOP\"},{\"content\":{\"parts\":[{\"text\":\"X\"}]}}]}\n\n", "e"},
		{"nulls and spaces", "data: { \"candidates\" : [ { \"content\" : { \"parts\" : [ { \"text\" : \"f\" , \"thought\" : false } ] } , \"finishReason\" : \"STOP\" } ] , \"usageMetadata\" : null }\n\n", "f"},
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

func seedCorpus(f *testing.F) {
	llmhttptest.AddFixtures(f, "*.sse")
}

// FuzzStream feeds arbitrary bytes to the SSE reader and chunk decoder:
// they must never panic or hang, a stream without a finishReason fails,
// and text from valid UTF-8 input is valid UTF-8.
func FuzzStream(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		evs, err := readAll(body, 4096)
		for _, e := range evs {
			if e.Kind == llm.EventText && utf8.Valid(body) && !utf8.ValidString(e.Text) {
				t.Fatalf("invalid UTF-8 text %q from valid UTF-8 input", e.Text)
			}
			if e.Kind == llm.EventToolCall && !json.Valid([]byte(e.ToolCall.Arguments)) {
				t.Fatalf("call arguments %q are not JSON", e.ToolCall.Arguments)
			}
		}
		if err == nil && !bytes.Contains(body, []byte("finishReason")) {
			t.Fatalf("a stream without finishReason ended without an error")
		}
	})
}

// FuzzTextPart checks the scanner against encoding/json.
func FuzzTextPart(f *testing.F) {
	for _, s := range []string{"Hello", "It's \\\"21°C\\\"\\n", "\\u00e9\\ud83d\\ude00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		chunk := `{"candidates":[{"content":{"parts":[{"text":"` + text + `"}],"role":"model"},"index":0}]}`
		var ref struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		refErr := json.Unmarshal([]byte(chunk), &ref)
		var d decoder
		got, err := d.decode([]byte(chunk))
		if refErr != nil {
			return
		}
		if err != nil {
			t.Fatalf("decoder rejected what encoding/json read: %v\n%s", err, chunk)
		}
		if utf8.ValidString(text) && string(got) != ref.Candidates[0].Content.Parts[0].Text {
			t.Fatalf("text %q, encoding/json read %q", got, ref.Candidates[0].Content.Parts[0].Text)
		}
	})
}

// FuzzErrorBody: any error body parses into an error that keeps its status
// and whose text is one short line.
func FuzzErrorBody(f *testing.F) {
	llmhttptest.AddFixtures(f, "error_*")
	f.Fuzz(func(t *testing.T, body []byte) {
		e := parseAPIError(503, body)
		if e.StatusCode != 503 || !strings.HasPrefix(e.Error(), "gemini: HTTP 503 Service Unavailable") {
			t.Fatalf("error %q", e.Error())
		}
		if strings.ContainsAny(e.Error(), "\n\r") || len(e.Error()) > 1024 {
			t.Fatalf("error text is not one short line: %q", e.Error())
		}
	})
}

// FuzzSchema: any JSON schema converts without a panic, or fails clearly.
func FuzzSchema(f *testing.F) {
	for _, s := range []string{
		`{"$schema":"x","type":"object","properties":{"a":{"type":["string","null"]}},"additionalProperties":false}`,
		`{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}`,
		`{"anyOf":[{"type":"null"},{"items":{"oneOf":[{}]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		out, err := convertSchema(v)
		if err == nil && out != nil {
			if _, err := json.Marshal(out); err != nil {
				t.Fatalf("converted schema does not encode: %v", err)
			}
		}
	})
}

// tokenEvent is a recorded-shape text chunk (Gemini sends usage and the
// model version in every chunk).
const tokenEvent = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \" today\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 9,\"totalTokenCount\": 14,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 5}]},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"nq9WaPXbLqGJ1e8P8rWq0Qk\"}\r\n\r\n"

// BenchmarkParseToken measures the per-token parse cost: one chunk read,
// decoded, and turned into the LLMText frame's string.
func BenchmarkParseToken(b *testing.B) {
	event := []byte(tokenEvent)
	rd := llmhttp.NewReader(llmhttptest.Repeat(event), 0)
	var d decoder
	var sink string
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	for b.Loop() {
		data, _, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		text, err := d.decode(data)
		if err != nil {
			b.Fatal(err)
		}
		sink = string(text)
	}
	if sink != " today" {
		b.Fatalf("decoded %q", sink)
	}
}

// BenchmarkParseTokenEncodingJSON is the same chunk decoded with
// encoding/json, for comparison.
func BenchmarkParseTokenEncodingJSON(b *testing.B) {
	rd := llmhttp.NewReader(llmhttptest.Repeat([]byte(tokenEvent)), 0)
	b.ReportAllocs()
	for b.Loop() {
		data, _, err := rd.Next()
		if err != nil {
			b.Fatal(err)
		}
		var ev struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
			UsageMetadata struct {
				PromptTokenCount, CandidatesTokenCount, TotalTokenCount int
			} `json:"usageMetadata"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			b.Fatal(err)
		}
	}
}
