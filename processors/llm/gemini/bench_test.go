package gemini_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm/gemini"
)

// memoryTransport answers every request with the same SSE body, in memory.
type memoryTransport struct{ body []byte }

func (m memoryTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(m.body)),
	}, nil
}

// tokenEvent is a recorded-shape text chunk.
const tokenEvent = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \" today\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 9,\"totalTokenCount\": 14},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"nq9WaPXbLqGJ1e8P8rWq0Qk\"}\r\n\r\n"

// BenchmarkStreamPerToken measures the whole client path per streamed
// token: SSE framing, event decoding, the idle-timer reset and the yielded
// event (its text string is the one allocation per token), over a
// recorded-shape stream of 1000 tokens. Request encoding and the round
// trip are amortised over the 1000 tokens.
func BenchmarkStreamPerToken(b *testing.B) {
	const tokens = 1000
	var body strings.Builder
	for range tokens {
		body.WriteString(strings.Replace(tokenEvent, " today", " word", 1))
	}
	body.WriteString("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":1000,\"totalTokenCount\":1005}}\r\n\r\n")
	c := gemini.New(gemini.Options{BaseURL: "http://model.invalid", APIKey: "k", HTTPClient: &http.Client{Transport: memoryTransport{[]byte(body.String())}}})
	req := llmhttptest.Question()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range c.Stream(b.Context(), req) {
			if err != nil {
				b.Fatal(err)
			}
			n += len(ev.Text)
		}
		if n != tokens*len(" word") {
			b.Fatalf("read %d bytes of text", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}
