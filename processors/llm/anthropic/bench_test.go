package anthropic_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm/anthropic"
	"github.com/framewire/framewire/processors/upstream"
)

// BenchmarkStreamPerToken measures the whole client path per streamed
// token: SSE framing, event decoding, the idle-timer reset and the yielded
// event (its text string is the one allocation per token), over a
// recorded-shape stream of 1000 tokens. Request encoding and the round
// trip are amortised over the 1000 tokens.
func BenchmarkStreamPerToken(b *testing.B) {
	const tokens = 1000
	var body strings.Builder
	body.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n")
	body.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for range tokens {
		body.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word\"}}\n\n")
	}
	body.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1000}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	c := anthropic.New(anthropic.Options{BaseURL: "http://model.invalid", APIKey: "k", HTTP: upstream.HTTP{HTTPClient: &http.Client{Transport: llmhttptest.MemoryTransport{Body: []byte(body.String())}}}})
	llmhttptest.BenchStreamPerToken(b, c, tokens, " word")
}
