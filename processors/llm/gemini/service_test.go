package gemini_test

import (
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm/gemini"
	"github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/upstream"
)

// Through llm.Service, the Gemini client produces exactly the frames the
// OpenAI client produces for the same answer: the same text frames, the
// same function-call frames and results, the same usage metric.
func TestSameFramesAsTheOpenAIClient(t *testing.T) {
	cases := []struct {
		fixture string
		pieces  []string
		calls   []frames.LLMToolCall
		usage   frames.LLMTokenUsage
	}{
		{"text.sse", []string{"Hello", "! How can I help", " you today?"}, nil,
			frames.LLMTokenUsage{PromptTokens: 5, CompletionTokens: 9, TotalTokens: 14}},
		{"calls_with_ids.sse", nil, []frames.LLMToolCall{
			{ID: "ka5kd2yq", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "p0v3n8xw", Name: "get_time", Arguments: `{}`},
		}, frames.LLMTokenUsage{PromptTokens: 70, CompletionTokens: 20, TotalTokens: 90}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			ref := llmhttptest.New(t, llmhttptest.Answer{Body: llmhttptest.OpenAIStream(tc.pieces, tc.calls, tc.usage)})
			srv := llmhttptest.New(t, sse(t, tc.fixture))
			llmhttptest.CheckSameFrames(t, "gemini",
				openai.New(openai.Options{BaseURL: ref.URL, APIKey: "k", Model: "same-model", HTTP: upstream.HTTP{HTTPClient: ref.Client()}}),
				client(srv, gemini.Options{Model: "same-model"}), len(tc.calls), len(tc.pieces))
		})
	}
}
