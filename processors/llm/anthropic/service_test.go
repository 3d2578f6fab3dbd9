package anthropic_test

import (
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm/anthropic"
	"github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/upstream"
)

// Through llm.Service, the Anthropic client produces exactly the frames the
// OpenAI client produces for the same answer: the same text frames, the
// same function-call frames and results, the same usage metric.
func TestSameFramesAsTheOpenAIClient(t *testing.T) {
	cases := []struct {
		fixture string
		pieces  []string
		calls   []frames.LLMToolCall
		usage   frames.LLMTokenUsage
	}{
		{"text.sse", []string{"Hello", "!", " How", " can", " I", " help", " you", " today", "?"}, nil,
			frames.LLMTokenUsage{PromptTokens: 25, CompletionTokens: 12, TotalTokens: 37}},
		{"parallel_tool_use.sse", nil, []frames.LLMToolCall{
			{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{ID: "toolu_01B7vM3nK2pQ8rS4tU6wX9yZ", Name: "get_weather", Arguments: `{"city": "Tokyo"}`},
			{ID: "toolu_01C5dE7fG9hJ1kL3mN5pQ7rS", Name: "get_time", Arguments: `{}`},
		}, frames.LLMTokenUsage{PromptTokens: 512, CompletionTokens: 151, TotalTokens: 663}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			ref := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.OpenAIStream(tc.pieces, tc.calls, tc.usage)})
			srv := llmhttptest.New(t, sse(t, tc.fixture))
			llmhttptest.CheckSameFrames(t, "anthropic",
				openai.New(openai.Options{BaseURL: ref.URL, APIKey: "k", Model: "same-model", HTTP: upstream.HTTP{HTTPClient: ref.Client()}}),
				client(srv, anthropic.Options{Model: "same-model"}), len(tc.calls), len(tc.pieces))
		})
	}
}
