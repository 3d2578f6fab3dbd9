package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/llmtest"
)

type weatherArgs struct {
	City string `json:"city" jsonschema_description:"City name, for example Paris"`
	Unit string `json:"unit,omitempty" jsonschema:"description=Temperature unit,enum=celsius,enum=fahrenheit"`
}

func TestSchemaFromArgsStruct(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(llm.Schema[weatherArgs](), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"city": map[string]any{"type": "string", "description": "City name, for example Paris"},
			"unit": map[string]any{"type": "string", "description": "Temperature unit", "enum": []any{"celsius", "fahrenheit"}},
		},
		"required":             []any{"city"},
		"additionalProperties": false,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("schema mismatch (-want +got):\n%s", d)
	}
}

func TestSchemaOfNoArgsIsAnEmptyObject(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(llm.Schema[llm.NoArgs](), &got); err != nil {
		t.Fatal(err)
	}
	if got["type"] != "object" || got["properties"] == nil {
		t.Errorf("schema = %v", got)
	}
}

func TestNewFunctionDeclaresTheTool(t *testing.T) {
	fn := llm.NewFunction("get_weather", "Current weather in a city.", func(context.Context, llm.FunctionCallParams, weatherArgs) error { return nil })
	tool := fn.Tool()
	if tool.Name != "get_weather" || tool.Description != "Current weather in a city." || !strings.Contains(string(tool.Parameters), `"city"`) {
		t.Errorf("tool = %+v", tool)
	}
	if tools := llm.Tools(fn, fn); len(tools) != 2 {
		t.Errorf("Tools returned %d", len(tools))
	}
}

func TestRegisterRejectsBrokenDeclarations(t *testing.T) {
	s := llm.NewService(&llmtest.Provider{}, llm.ServiceOptions{})
	h := func(context.Context, llm.FunctionCallParams) error { return nil }
	cases := map[string]llm.Function{
		"no name":         {Handler: h},
		"no handler":      {Name: "f"},
		"bad schema JSON": {Name: "f", Handler: h, Parameters: json.RawMessage(`{"type":`)},
	}
	for name, fn := range cases {
		if err := s.Register(fn); err == nil {
			t.Errorf("%s: Register accepted it", name)
		}
	}
	handWritten := llm.Function{Name: "f", Handler: h, Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}
	if err := s.Register(handWritten); err != nil {
		t.Errorf("hand-written schema rejected: %v", err)
	}
	if err := s.RegisterFallback(llm.Function{}); err == nil {
		t.Error("fallback without handler accepted")
	}
}

func TestResultOutsideAServiceIsAnError(t *testing.T) {
	if err := (llm.FunctionCallParams{}).Result("x"); err == nil {
		t.Error("Result on a zero FunctionCallParams succeeded")
	}
}
