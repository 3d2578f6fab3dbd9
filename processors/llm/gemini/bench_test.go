package gemini_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm/gemini"
	"github.com/framewire/framewire/processors/upstream"
)

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
	c := gemini.New(gemini.Options{BaseURL: "http://model.invalid", APIKey: "k", HTTP: upstream.HTTP{HTTPClient: &http.Client{Transport: llmhttptest.MemoryTransport{Body: []byte(body.String())}}}})
	llmhttptest.BenchStreamPerToken(b, c, tokens, " word")
}
