package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/framewire/framewire/frames"
)

// The request body of a streaming Messages call.
type messagesRequest struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	System      []textBlock     `json:"system,omitempty"`
	Messages    []wireMessage   `json:"messages"`
	Tools       []wireTool      `json:"tools,omitempty"`
	ToolChoice  *wireToolChoice `json:"tool_choice,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	Container   string          `json:"container,omitempty"`
	Stream      bool            `json:"stream"`
}

type wireMessage struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
	results int               // leading tool_result blocks, while merging
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type textBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content,omitempty"`
}

type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type wireTool struct {
	Name         string          `json:"name,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
	raw          json.RawMessage
}

// MarshalJSON sends a raw declaration verbatim (with the cache mark added
// when it is the last tool).
func (t wireTool) MarshalJSON() ([]byte, error) {
	type plain wireTool
	if len(t.raw) == 0 {
		return marshal(plain(t))
	}
	if t.CacheControl == nil {
		return t.raw, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t.raw, &m); err != nil {
		return nil, err
	}
	m["cache_control"] = json.RawMessage(`{"type":"ephemeral"}`)
	return marshal(m)
}

type wireToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encode marshals the request body.
func (body *messagesRequest) encode() ([]byte, error) {
	out, err := marshal(body)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	return out, nil
}

// buildRequest builds the request body for req.
func (c *Client) buildRequest(req *frames.LLMContext) (*messagesRequest, error) {
	body := &messagesRequest{
		Model:       c.opts.Model,
		MaxTokens:   c.opts.MaxTokens,
		Temperature: c.opts.Temperature,
		Stream:      true,
	}
	if c.opts.SystemInstruction != "" {
		body.System = append(body.System, textBlock{Type: "text", Text: c.opts.SystemInstruction})
	}
	msgs := req.Messages
	for len(msgs) > 0 && msgs[0].Role == "system" && len(msgs[0].Raw) == 0 {
		if t := messageText(msgs[0]); t != "" {
			body.System = append(body.System, textBlock{Type: "text", Text: t})
		}
		msgs = msgs[1:]
	}
	offset := len(req.Messages) - len(msgs)
	for i, m := range msgs {
		role, blocks, err := encodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("anthropic: message %d (%s): %w", offset+i, m.Role, err)
		}
		body.Messages = appendMerged(body.Messages, role, blocks)
	}
	body.Messages = slices.DeleteFunc(body.Messages, func(m wireMessage) bool { return len(m.Content) == 0 })
	if len(body.Messages) == 0 {
		// The Messages API needs at least one message (an empty list is a
		// 400 invalid_request_error, API reference: "messages"), and the
		// first one from the user. A context of system messages only is the
		// bot speaking first: its prompt becomes that user turn. (The
		// empty-list refusal is also written up in Latitude's Anthropic
		// provider rules; no Anthropic page prescribes what to send
		// instead, so this choice is ours.)
		if len(body.System) == 0 {
			return nil, errors.New("anthropic: the context has no message to send (no system prompt and no conversation)")
		}
		m := wireMessage{Role: "user"}
		for _, b := range body.System {
			raw, err := marshal(b)
			if err != nil {
				return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
			}
			m.Content = append(m.Content, raw)
		}
		body.System, body.Messages = nil, []wireMessage{m}
	}
	for _, t := range req.Tools {
		w, err := encodeTool(t)
		if err != nil {
			return nil, fmt.Errorf("anthropic: tool %q: %w", t.Name, err)
		}
		body.Tools = append(body.Tools, w)
	}
	if len(body.Tools) > 0 {
		switch tc := req.ToolChoice; {
		case tc.Function != "":
			body.ToolChoice = &wireToolChoice{Type: "tool", Name: tc.Function}
		case tc.Mode == "required":
			body.ToolChoice = &wireToolChoice{Type: "any"}
		case tc.Mode == "auto", tc.Mode == "none":
			body.ToolChoice = &wireToolChoice{Type: tc.Mode}
		}
	}
	if c.opts.PromptCaching {
		if n := len(body.System); n > 0 {
			body.System[n-1].CacheControl = ephemeral
		}
		if n := len(body.Tools); n > 0 {
			body.Tools[n-1].CacheControl = ephemeral
		}
	}
	return body, nil
}

// block is one encoded content block and whether it is a tool_result
// (which Anthropic wants before any other block of a user message).
type block struct {
	raw    json.RawMessage
	result bool
}

// appendMerged appends a message of role with blocks, merged into the last
// message when it has the same role: Anthropic requires the roles to
// alternate. In a merged user message the tool results stay first.
func appendMerged(msgs []wireMessage, role string, blocks []block) []wireMessage {
	if n := len(msgs); n == 0 || msgs[n-1].Role != role {
		msgs = append(msgs, wireMessage{Role: role})
	}
	m := &msgs[len(msgs)-1]
	for _, b := range blocks {
		if b.result {
			m.Content = slices.Insert(m.Content, m.results, b.raw)
			m.results++
		} else {
			m.Content = append(m.Content, b.raw)
		}
	}
	return msgs
}

func marshalBlock(v any, result bool) (block, error) {
	b, err := marshal(v)
	return block{raw: b, result: result}, err
}

// marshal encodes v without HTML escaping: the UI agent's <ui_state> goes
// out as written, not as \u003c.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeMessage converts one framewire message to an Anthropic role and
// content blocks.
func encodeMessage(m frames.LLMMessage) (string, []block, error) {
	if len(m.Raw) > 0 {
		return decodeRaw(m.Raw)
	}
	switch m.Role {
	case "tool":
		if m.ToolCallID == "" {
			return "", nil, errors.New("a tool result needs its tool call id")
		}
		b, err := marshalBlock(toolResultBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: messageText(m)}, true)
		return "user", []block{b}, err
	case "assistant":
		blocks, err := contentBlocks(m)
		if err != nil {
			return "", nil, err
		}
		for _, tc := range m.ToolCalls {
			b, err := marshalBlock(toolUseBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)}, false)
			if err != nil {
				return "", nil, err
			}
			blocks = append(blocks, b)
		}
		return "assistant", blocks, nil
	case "user", "developer", "system":
		// Developer messages (the UI agent's <ui_state>) and system messages
		// after the conversation started have no place in Anthropic's
		// roles: they go in as user text, where they stay in order.
		blocks, err := contentBlocks(m)
		return "user", blocks, err
	}
	return "", nil, fmt.Errorf("unknown role %q", m.Role)
}

// toolInput returns a call's arguments as the JSON object Anthropic wants;
// arguments that are not an object (the model's truncated JSON, which the
// service answered with an error result) go back as {}.
func toolInput(args string) json.RawMessage {
	b := bytes.TrimSpace([]byte(args))
	if len(b) > 0 && b[0] == '{' && json.Valid(b) {
		return b
	}
	return json.RawMessage("{}")
}

// contentBlocks encodes a message's text or parts; empty text makes no
// block (Anthropic rejects empty text blocks).
func contentBlocks(m frames.LLMMessage) ([]block, error) {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil, nil
		}
		b, err := marshalBlock(textBlock{Type: "text", Text: m.Content}, false)
		return []block{b}, err
	}
	var out []block
	for _, p := range m.Parts {
		var v any
		switch p.Type {
		case "text":
			if p.Text == "" {
				continue
			}
			v = textBlock{Type: "text", Text: p.Text}
		case "image_url":
			src, err := imageFromURL(p.ImageURL)
			if err != nil {
				return nil, err
			}
			v = imageBlock{Type: "image", Source: src}
		default:
			return nil, fmt.Errorf("content part type %q is not supported by Anthropic", p.Type)
		}
		b, err := marshalBlock(v, false)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// imageFromURL turns a data: URL into a base64 image source and an http(s)
// URL into a URL source.
func imageFromURL(u string) (imageSource, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		media, isBase64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isBase64 || media == "" {
			return imageSource{}, errors.New("an image data URL must be data:<media type>;base64,<data>")
		}
		return imageSource{Type: "base64", MediaType: media, Data: data}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return imageSource{Type: "url", URL: u}, nil
	}
	return imageSource{}, errors.New("an image needs a data: or http(s) URL")
}

// messageText returns a message's text: its content, or its text parts
// joined.
func messageText(m frames.LLMMessage) string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// decodeRaw reads a raw Anthropic message ({"role", "content"}) so it can
// be merged with its neighbours.
func decodeRaw(raw json.RawMessage) (string, []block, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, fmt.Errorf("raw message is not a JSON object with role and content: %w", err)
	}
	if m.Role != "user" && m.Role != "assistant" {
		return "", nil, fmt.Errorf("raw message role %q is neither user nor assistant", m.Role)
	}
	var text string
	if json.Unmarshal(m.Content, &text) == nil {
		if text == "" {
			return m.Role, nil, nil
		}
		b, err := marshalBlock(textBlock{Type: "text", Text: text}, false)
		return m.Role, []block{b}, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(m.Content, &items); err != nil {
		return "", nil, errors.New("raw message content is neither a string nor an array of blocks")
	}
	out := make([]block, 0, len(items))
	for _, it := range items {
		var t struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(it, &t)
		out = append(out, block{raw: it, result: t.Type == "tool_result"})
	}
	return m.Role, out, nil
}

func encodeTool(t frames.LLMTool) (wireTool, error) {
	if len(t.Raw) > 0 {
		if !json.Valid(t.Raw) || bytes.TrimSpace(t.Raw)[0] != '{' {
			return wireTool{}, errors.New("raw declaration is not a JSON object")
		}
		return wireTool{raw: t.Raw}, nil
	}
	if t.Name == "" {
		return wireTool{}, errors.New("a tool needs a name")
	}
	schema := t.Parameters
	if len(schema) == 0 {
		schema = emptySchema
	} else if !json.Valid(schema) {
		return wireTool{}, errors.New("parameters are not valid JSON")
	}
	return wireTool{Name: t.Name, Description: t.Description, InputSchema: schema}, nil
}
