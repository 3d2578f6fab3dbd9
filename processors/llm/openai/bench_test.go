package openai_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/upstream"
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

// BenchmarkStreamPerToken measures the whole client path per streamed
// token: SSE framing, chunk decoding and the yielded event (its text string
// is the one allocation per token), over a recorded-shape stream of 1000
// tokens. Request encoding and the HTTP round trip are amortised over the
// 1000 tokens and reported separately as allocs/op.
func BenchmarkStreamPerToken(b *testing.B) {
	const tokens = 1000
	var body strings.Builder
	for range tokens {
		body.WriteString(`data: {"id":"chatcmpl-BfX2k9QzL0m3N8pR7sT1uV4wY6","object":"chat.completion.chunk","created":1764412345,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_34a54ae93c","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	}
	body.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	c := openai.New(openai.Options{BaseURL: "http://model.invalid/v1", APIKey: "k", HTTP: upstream.HTTP{HTTPClient: &http.Client{Transport: memoryTransport{[]byte(body.String())}}}})
	req := question()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range c.Stream(context.Background(), req) {
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
