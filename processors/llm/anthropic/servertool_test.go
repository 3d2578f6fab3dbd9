package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/anthropic"
)

// webSearch is a conversation with a raw server tool declaration, which
// makes the service run web searches itself.
func webSearch() *frames.LLMContext {
	return &frames.LLMContext{
		Messages: []frames.LLMMessage{llm.SystemMessage("Be brief."), llm.UserMessage("What's the weather in Paris?")},
		Tools:    []frames.LLMTool{{Raw: json.RawMessage(`{"type":"web_search_20250305","name":"web_search","max_uses":3}`)}},
	}
}

// The service's own tool calls (mcp_tool_use, server_tool_use) stream
// their input as input_json_delta like the client's: the answer's text
// comes through, and they are not yielded as calls for the client to run.
func TestServerToolBlocksDoNotFailTheAnswer(t *testing.T) {
	for _, fixture := range []string{"mcp_tool_use.sse", "server_tool_done.sse"} {
		t.Run(fixture, func(t *testing.T) {
			srv := llmhttptest.New(t, sse(t, fixture))
			evs, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), webSearch())
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := llmhttptest.Text(evs); text == "" {
				t.Error("no text")
			}
			if calls := llmhttptest.Calls(evs); len(calls) != 0 {
				t.Errorf("calls %v, want none (the service ran its own tools)", calls)
			}
		})
	}
}

// A turn the service pauses (stop_reason pause_turn) continues: the answer
// so far goes back as the last assistant message, the server tool's call
// and result blocks as the service sent them, and the two parts stream as
// one answer with the usage of both.
func TestPauseTurnContinuesTheTurn(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "server_tool_pause.sse"), sse(t, "server_tool_done.sse"))
	evs, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), webSearch())
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := llmhttptest.Text(evs); text != "Let me look that up. It is 21°C and sunny in Paris." {
		t.Errorf("text %q", text)
	}
	want := []frames.LLMTokenUsage{{PromptTokens: 2679 + 3512, CompletionTokens: 58 + 21, TotalTokens: 2679 + 3512 + 58 + 21}}
	if d := cmp.Diff(want, llmhttptest.Usage(evs)); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	golden(t, "request_pause_turn.golden.json", reqs[1].Body)
}

// Continuations are bounded: a service that pauses every part ends the
// answer with an error after MaxContinuations, and a negative
// MaxContinuations makes the first pause an error.
func TestPauseTurnContinuationsAreBounded(t *testing.T) {
	cases := []struct {
		max, requests int
	}{{-1, 1}, {2, 3}}
	for _, tc := range cases {
		var answers []llmhttptest.Answer
		for range tc.requests + 1 {
			answers = append(answers, sse(t, "server_tool_pause.sse"))
		}
		srv := llmhttptest.New(t, answers...)
		_, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{MaxContinuations: tc.max}), webSearch())
		if err == nil || !strings.Contains(err.Error(), "pause_turn") {
			t.Errorf("MaxContinuations %d: err = %v, want one naming pause_turn", tc.max, err)
		}
		if n := len(srv.Requests()); n != tc.requests {
			t.Errorf("MaxContinuations %d: %d requests, want %d", tc.max, n, tc.requests)
		}
	}
}
