package anthropic_test

import (
	"encoding/json"
	"flag"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/anthropic"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current encoder")

// conversation is the kit's conversation with Anthropic's call ids.
func conversation() *frames.LLMContext {
	return llmhttptest.Conversation("toolu_01A09q90qw90lq917835lq9", "toolu_01B7vM3nK2pQ8rS4tU6wX9yZ")
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	llmhttptest.Golden(t, name, got, *update)
}

// The request body for the conversation: the system prompt at the top
// level, the parallel calls as two tool_use blocks in one assistant
// message and their results in one user message, the developer message
// merged as user text, caching marks on the last tool and system block.
func TestRequestGolden(t *testing.T) {
	temp := 0.3
	cases := []struct {
		name string
		opts anthropic.Options
	}{
		{"request.golden.json", anthropic.Options{MaxTokens: 512, Temperature: &temp, SystemInstruction: "Answer in English.", PromptCaching: true}},
		{"request_plain.golden.json", anthropic.Options{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmhttptest.New(t, sse(t, "text.sse"))
			if _, err := llmhttptest.Collect(t.Context(), client(srv, tc.opts), conversation()); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, srv.Requests()[0].Body)
		})
	}
}

// The aggregator records parallel calls as one assistant/tool pair each,
// and raw messages are merged with their neighbours: the roles alternate.
func TestRolesAlternate(t *testing.T) {
	conv := &frames.LLMContext{Messages: []frames.LLMMessage{
		llm.UserMessage("a"),
		llm.UserMessage("b"),
		{Role: "assistant", ToolCalls: []frames.LLMToolCall{{ID: "t1", Name: "f", Arguments: `{"x": tru`}}},
		{Role: "tool", ToolCallID: "t1", Content: "IN_PROGRESS"},
		{Raw: json.RawMessage(`{"role":"user","content":"raw"}`)},
		llm.SystemMessage("late system note"),
		{Role: "assistant", Content: ""},
	}}
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	if _, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), conv); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System   any               `json:"system"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"IN_PROGRESS"},{"type":"text","text":"raw"},{"type":"text","text":"late system note"}]}`,
	}
	var got []string
	for _, m := range body.Messages {
		got = append(got, string(m))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if body.System != nil {
		t.Errorf("system = %v, want none (no leading system message)", body.System)
	}
}

// Tool choice maps to Anthropic's shapes, and is sent only with tools.
func TestToolChoice(t *testing.T) {
	cases := []struct {
		choice frames.LLMToolChoice
		tools  bool
		want   string
	}{
		{frames.LLMToolChoice{Mode: "required"}, true, `{"type":"any"}`},
		{frames.LLMToolChoice{Mode: "none"}, true, `{"type":"none"}`},
		{frames.LLMToolChoice{Function: "get_time"}, true, `{"type":"tool","name":"get_time"}`},
		{frames.LLMToolChoice{}, true, ``},
		{frames.LLMToolChoice{Mode: "required"}, false, ``},
	}
	for _, tc := range cases {
		srv := llmhttptest.New(t, sse(t, "text.sse"))
		conv := &frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage("x")}, ToolChoice: tc.choice}
		if tc.tools {
			conv.Tools = []frames.LLMTool{{Name: "get_time"}}
		}
		if _, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), conv); err != nil {
			t.Fatal(err)
		}
		var body struct {
			ToolChoice json.RawMessage `json:"tool_choice"`
		}
		_ = json.Unmarshal(srv.Requests()[0].Body, &body)
		if string(body.ToolChoice) != tc.want {
			t.Errorf("%+v with tools %v: tool_choice %s, want %s", tc.choice, tc.tools, body.ToolChoice, tc.want)
		}
	}
}

// A context of system messages only (the bot speaks first) still sends one
// user turn: the Messages API answers 400 to an empty conversation. The
// system prompt becomes that turn.
func TestRequestSystemOnlyGolden(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	conv := &frames.LLMContext{Messages: []frames.LLMMessage{
		llm.SystemMessage("You are a helpful voice assistant. Greet the user."),
	}}
	if _, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{SystemInstruction: "Answer in English."}), conv); err != nil {
		t.Fatal(err)
	}
	golden(t, "request_system_only.golden.json", srv.Requests()[0].Body)
}

// An empty context is refused before any request is sent.
func TestEmptyContextIsRefusedWithoutARequest(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	_, err := llmhttptest.Collect(t.Context(), client(srv, anthropic.Options{}), &frames.LLMContext{})
	if err == nil {
		t.Fatal("an empty context was sent")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}
