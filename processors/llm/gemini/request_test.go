package gemini_test

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp/llmhttptest"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/gemini"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current encoder")

// conversation is the kit's conversation with Gemini's call ids.
func conversation() *frames.LLMContext {
	return llmhttptest.Conversation("gemini_0123456789abcdef_0", "gemini_0123456789abcdef_1")
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	llmhttptest.Golden(t, name, got, *update)
}

// The request body for the conversation: the system prompt as
// systemInstruction, the parallel calls as two functionCall parts of one
// model turn (their generated ids left out) and their results as two
// functionResponse parts of one user turn, in call order; the developer
// message merged as user text; the schema reduced to what Gemini accepts.
func TestRequestGolden(t *testing.T) {
	temp, budget := 0.3, 0
	cases := []struct {
		name string
		opts gemini.Options
	}{
		{"request.golden.json", gemini.Options{MaxTokens: 512, Temperature: &temp, ThinkingBudget: &budget, SystemInstruction: "Answer in English."}},
		{"request_plain.golden.json", gemini.Options{}},
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

// Results that arrive out of call order go back in call order, before
// any text of the same turn.
func TestResultsFollowCallOrder(t *testing.T) {
	conv := &frames.LLMContext{Messages: []frames.LLMMessage{
		llm.UserMessage("a"),
		{Role: "assistant", ToolCalls: []frames.LLMToolCall{{ID: "x1", Name: "f", Arguments: `{}`}, {ID: "x2", Name: "g", Arguments: `{"a": tru`}}},
		llm.DeveloperMessage("<ui_state/>"),
		{Role: "tool", ToolCallID: "x2", Content: "two"},
		{Role: "tool", ToolCallID: "x1", Content: `[1,2]`},
	}}
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	if _, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), conv); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","parts":[{"functionResponse":{"id":"x1","name":"f","response":{"result":[1,2]}}},{"functionResponse":{"id":"x2","name":"g","response":{"result":"two"}}},{"text":"<ui_state/>"}]}`
	if len(body.Contents) != 3 || string(body.Contents[2]) != want {
		t.Errorf("contents %s\nwant last %s", body.Contents, want)
	}
	if !strings.Contains(string(body.Contents[1]), `"args":{}`) {
		t.Errorf("truncated arguments went back as %s, want {}", body.Contents[1])
	}
}

// JSON Schema is reduced to Gemini's Schema: unsupported keywords dropped,
// type arrays and anyOf with null made nullable, $ref inlined, const made
// an enum, a parameterless function sent without parameters.
func TestSchemaConversion(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"$schema":"x","$id":"y","type":"object","properties":{"a":{"type":"string","format":"uri"}},"additionalProperties":false}`,
			`{"name":"t","parameters":{"properties":{"a":{"type":"string"}},"type":"object"}}`},
		{`{"type":"object","properties":{}}`, `{"name":"t"}`},
		{`{"type":"object","properties":{"a":{"type":["integer","null"],"format":"int64"},"b":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a","gone"]}`,
			`{"name":"t","parameters":{"properties":{"a":{"format":"int64","nullable":true,"type":"integer"},"b":{"nullable":true,"type":"string"}},"required":["a"],"type":"object"}}`},
		{`{"type":"object","properties":{"p":{"$ref":"#/$defs/P","description":"where"}},"$defs":{"P":{"type":"object","properties":{"x":{"const":"k"}},"patternProperties":{"^y":{}}}}}`,
			`{"name":"t","parameters":{"properties":{"p":{"description":"where","properties":{"x":{"enum":["k"]}},"type":"object"}},"type":"object"}}`},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":["string","number"]},"minItems":1}}}`,
			`{"name":"t","parameters":{"properties":{"l":{"items":{"anyOf":[{"type":"string"},{"type":"number"}]},"minItems":1,"type":"array"}},"type":"object"}}`},
	}
	for _, tc := range cases {
		srv := llmhttptest.New(t, sse(t, "text.sse"))
		conv := &frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage("x")}, Tools: []frames.LLMTool{{Name: "t", Parameters: json.RawMessage(tc.in)}}}
		if _, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), conv); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		var body struct {
			Tools []struct {
				FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(srv.Requests()[0].Body, &body)
		if got := string(body.Tools[0].FunctionDeclarations[0]); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// Tool choice maps to functionCallingConfig, and is sent only with tools.
func TestToolChoice(t *testing.T) {
	cases := []struct {
		choice frames.LLMToolChoice
		tools  bool
		want   string
	}{
		{frames.LLMToolChoice{Mode: "required"}, true, `{"functionCallingConfig":{"mode":"ANY"}}`},
		{frames.LLMToolChoice{Mode: "none"}, true, `{"functionCallingConfig":{"mode":"NONE"}}`},
		{frames.LLMToolChoice{Function: "get_time"}, true, `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_time"]}}`},
		{frames.LLMToolChoice{}, true, ``},
		{frames.LLMToolChoice{Mode: "required"}, false, ``},
	}
	for _, tc := range cases {
		srv := llmhttptest.New(t, sse(t, "text.sse"))
		conv := &frames.LLMContext{Messages: []frames.LLMMessage{llm.UserMessage("x")}, ToolChoice: tc.choice}
		if tc.tools {
			conv.Tools = []frames.LLMTool{{Name: "get_time"}}
		}
		if _, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), conv); err != nil {
			t.Fatal(err)
		}
		var body struct {
			ToolConfig json.RawMessage `json:"toolConfig"`
		}
		_ = json.Unmarshal(srv.Requests()[0].Body, &body)
		if string(body.ToolConfig) != tc.want {
			t.Errorf("%+v with tools %v: toolConfig %s, want %s", tc.choice, tc.tools, body.ToolConfig, tc.want)
		}
	}
}

// A context of system messages only (the bot speaks first) still sends one
// user content: generateContent answers 400 to empty contents. The system
// prompt becomes that content.
func TestRequestSystemOnlyGolden(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	conv := &frames.LLMContext{Messages: []frames.LLMMessage{
		llm.SystemMessage("You are a helpful voice assistant. Greet the user."),
	}}
	if _, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{SystemInstruction: "Answer in English."}), conv); err != nil {
		t.Fatal(err)
	}
	golden(t, "request_system_only.golden.json", srv.Requests()[0].Body)
}

// An empty context is refused before any request is sent.
func TestEmptyContextIsRefusedWithoutARequest(t *testing.T) {
	srv := llmhttptest.New(t, sse(t, "text.sse"))
	_, err := llmhttptest.Collect(t.Context(), client(srv, gemini.Options{}), &frames.LLMContext{})
	if err == nil {
		t.Fatal("an empty context was sent")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}
