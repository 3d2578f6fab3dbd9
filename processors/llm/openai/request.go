package openai

import (
	"encoding/json"
	"fmt"

	"github.com/framewire/framewire/frames"
)

// The request body of a streaming Chat Completions call.
type chatRequest struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Stream        bool              `json:"stream"`
	StreamOptions streamOptions     `json:"stream_options"`
	Tools         []json.RawMessage `json:"tools,omitempty"`
	ToolChoice    any               `json:"tool_choice,omitempty"`
	Temperature   *float64          `json:"temperature,omitempty"`
	MaxTokens     int               `json:"max_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireImagePart struct {
	Type     string `json:"type"`
	ImageURL struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	} `json:"image_url"`
}

type wireAudioPart struct {
	Type       string `json:"type"`
	InputAudio struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireNamedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest builds the JSON body for req.
func (c *Client) encodeRequest(req *frames.LLMContext) ([]byte, error) {
	body := chatRequest{
		Model:         c.opts.Model,
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
		Temperature:   c.opts.Temperature,
		MaxTokens:     c.opts.MaxTokens,
	}
	if c.opts.SystemInstruction != "" {
		m, err := json.Marshal(wireMessage{Role: "system", Content: c.opts.SystemInstruction})
		if err != nil {
			return nil, err
		}
		body.Messages = append(body.Messages, m)
	}
	for i, m := range req.Messages {
		b, err := c.encodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("openai: message %d (%s): %w", i, m.Role, err)
		}
		body.Messages = append(body.Messages, b)
	}
	for _, t := range req.Tools {
		b, err := encodeTool(t)
		if err != nil {
			return nil, fmt.Errorf("openai: tool %q: %w", t.Name, err)
		}
		body.Tools = append(body.Tools, b)
	}
	if len(body.Tools) > 0 {
		switch tc := req.ToolChoice; {
		case tc.Function != "":
			var named wireNamedChoice
			named.Type = "function"
			named.Function.Name = tc.Function
			body.ToolChoice = named
		case tc.Mode != "":
			body.ToolChoice = tc.Mode
		}
	}
	out, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	if len(c.opts.Extra) == 0 {
		return out, nil
	}
	var merged map[string]json.RawMessage
	if err := json.Unmarshal(out, &merged); err != nil {
		return nil, err
	}
	for k, v := range c.opts.Extra {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("openai: encoding extra field %q: %w", k, err)
		}
		merged[k] = b
	}
	return json.Marshal(merged)
}

func (c *Client) encodeMessage(m frames.LLMMessage) (json.RawMessage, error) {
	if len(m.Raw) > 0 {
		if !json.Valid(m.Raw) {
			return nil, fmt.Errorf("raw message is not valid JSON")
		}
		return m.Raw, nil
	}
	w := wireMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
	if w.Role == "developer" && c.opts.DeveloperRole != "" {
		w.Role = c.opts.DeveloperRole
	}
	switch {
	case len(m.Parts) > 0:
		parts := make([]any, 0, len(m.Parts))
		for _, p := range m.Parts {
			switch p.Type {
			case "text":
				parts = append(parts, wireTextPart{Type: "text", Text: p.Text})
			case "image_url":
				var ip wireImagePart
				ip.Type = "image_url"
				ip.ImageURL.URL, ip.ImageURL.Detail = p.ImageURL, p.Detail
				parts = append(parts, ip)
			case "input_audio":
				var ap wireAudioPart
				ap.Type = "input_audio"
				ap.InputAudio.Data, ap.InputAudio.Format = p.AudioData, p.AudioFormat
				parts = append(parts, ap)
			default:
				return nil, fmt.Errorf("unknown content part type %q", p.Type)
			}
		}
		w.Content = parts
	case m.Content == "" && len(m.ToolCalls) > 0:
		w.Content = nil // null: the assistant only called tools
	default:
		w.Content = m.Content
	}
	for _, tc := range m.ToolCalls {
		args := tc.Arguments
		if args == "" {
			args = "{}"
		}
		w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: args}})
	}
	return json.Marshal(w)
}

func encodeTool(t frames.LLMTool) (json.RawMessage, error) {
	if len(t.Raw) > 0 {
		if !json.Valid(t.Raw) {
			return nil, fmt.Errorf("raw declaration is not valid JSON")
		}
		return t.Raw, nil
	}
	params := t.Parameters
	if len(params) == 0 {
		params = emptyParameters
	} else if !json.Valid(params) {
		return nil, fmt.Errorf("parameters are not valid JSON")
	}
	return json.Marshal(wireTool{Type: "function", Function: wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: params}})
}
