package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/framewire/framewire/frames"
)

// The request body of a streamGenerateContent call.
type generateRequest struct {
	Contents          []wireContent     `json:"contents"`
	SystemInstruction *wireContent      `json:"systemInstruction,omitempty"`
	Tools             []wireTools       `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
	// responses counts the leading functionResponse parts, while merging.
	responses int
}

type wirePart struct {
	Text             string                `json:"text,omitempty"`
	InlineData       *blob                 `json:"inlineData,omitempty"`
	FileData         *fileData             `json:"fileData,omitempty"`
	FunctionCall     *wireFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *wireFunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string                `json:"thoughtSignature,omitempty"`
	order            int                   // a response's call position, while merging
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type wireFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type wireFunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type wireTools struct {
	FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	Temperature     *float64        `json:"temperature,omitempty"`
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	ThinkingBudget int `json:"thinkingBudget"`
}

// callRef is what a tool result needs of its call: the function's name
// (Gemini matches results by name and order), the id Gemini gave it, if
// any, and its position among the calls.
type callRef struct {
	name, wireID string
	order        int
}

// encodeRequest builds the JSON body for req.
func (c *Client) encodeRequest(req *frames.LLMContext) ([]byte, error) {
	var body generateRequest
	var system []wirePart
	if c.opts.SystemInstruction != "" {
		system = append(system, wirePart{Text: c.opts.SystemInstruction})
	}
	msgs := req.Messages
	for len(msgs) > 0 && msgs[0].Role == "system" && len(msgs[0].Raw) == 0 {
		if t := messageText(msgs[0]); t != "" {
			system = append(system, wirePart{Text: t})
		}
		msgs = msgs[1:]
	}
	offset := len(req.Messages) - len(msgs)
	refs := map[string]callRef{}
	for i, m := range msgs {
		role, parts, err := c.encodeMessage(m, refs)
		if err != nil {
			return nil, fmt.Errorf("gemini: message %d (%s): %w", offset+i, m.Role, err)
		}
		body.Contents = appendMerged(body.Contents, role, parts)
	}
	body.Contents = slices.DeleteFunc(body.Contents, func(c wireContent) bool { return len(c.Parts) == 0 })
	for i := range body.Contents {
		if body.Contents[i].Role == "model" {
			signFirstCall(body.Contents[i].Parts)
		}
	}
	switch {
	case len(body.Contents) == 0 && len(system) == 0:
		return nil, errors.New("gemini: the context has no message to send (no system prompt and no conversation)")
	case len(body.Contents) == 0:
		// generateContent needs at least one content (an empty contents
		// is a 400 INVALID_ARGUMENT, API reference: "contents[] Required").
		// A context of system messages only is the bot speaking first: its
		// prompt becomes the user turn, as for Anthropic.
		body.Contents = []wireContent{{Role: "user", Parts: system}}
	case len(system) > 0:
		body.SystemInstruction = &wireContent{Parts: system}
	}
	if len(req.Tools) > 0 {
		var decls []json.RawMessage
		for _, t := range req.Tools {
			d, err := encodeTool(t)
			if err != nil {
				return nil, fmt.Errorf("gemini: tool %q: %w", t.Name, err)
			}
			decls = append(decls, d)
		}
		body.Tools = []wireTools{{FunctionDeclarations: decls}}
		switch tc := req.ToolChoice; {
		case tc.Function != "":
			body.ToolConfig = &toolConfig{functionCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{tc.Function}}}
		case tc.Mode == "required":
			body.ToolConfig = &toolConfig{functionCallingConfig{Mode: "ANY"}}
		case tc.Mode == "auto", tc.Mode == "none":
			body.ToolConfig = &toolConfig{functionCallingConfig{Mode: strings.ToUpper(tc.Mode)}}
		}
	}
	if c.opts.Temperature != nil || c.opts.MaxTokens > 0 || c.opts.ThinkingBudget != nil {
		g := &generationConfig{Temperature: c.opts.Temperature, MaxOutputTokens: max(c.opts.MaxTokens, 0)}
		if c.opts.ThinkingBudget != nil {
			g.ThinkingConfig = &thinkingConfig{ThinkingBudget: *c.opts.ThinkingBudget}
		}
		body.GenerationConfig = g
	}
	out, err := marshal(body)
	if err != nil {
		return nil, fmt.Errorf("gemini: encoding the request: %w", err)
	}
	return out, nil
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

// appendMerged appends a content of role with parts, merged into the last
// content when it has the same role. In a user content the function
// responses come first, in the order of their calls: Gemini matches them
// to the calls of the model turn before by name and position.
func appendMerged(contents []wireContent, role string, parts []wirePart) []wireContent {
	if n := len(contents); n == 0 || contents[n-1].Role != role {
		contents = append(contents, wireContent{Role: role})
	}
	c := &contents[len(contents)-1]
	for _, p := range parts {
		if p.FunctionResponse == nil {
			c.Parts = append(c.Parts, p)
			continue
		}
		at := 0
		for at < c.responses && c.Parts[at].order <= p.order {
			at++
		}
		c.Parts = slices.Insert(c.Parts, at, p)
		c.responses++
	}
	return contents
}

// encodeMessage converts one framewire message to a Gemini role and parts.
// refs collects the calls of assistant messages for the results that
// follow them.
func (c *Client) encodeMessage(m frames.LLMMessage, refs map[string]callRef) (string, []wirePart, error) {
	if len(m.Raw) > 0 {
		var raw struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		}
		if err := json.Unmarshal(m.Raw, &raw); err != nil || (raw.Role != "user" && raw.Role != "model") {
			return "", nil, errors.New(`raw message is not a Gemini content ({"role": "user" or "model", "parts": [...]})`)
		}
		parts := make([]wirePart, 0, len(raw.Parts))
		for _, p := range raw.Parts {
			var wp wirePart
			if err := json.Unmarshal(p, &wp); err != nil {
				return "", nil, fmt.Errorf("raw message part: %w", err)
			}
			parts = append(parts, wp)
		}
		return raw.Role, parts, nil
	}
	switch m.Role {
	case "tool":
		ref, ok := refs[m.ToolCallID]
		if !ok {
			return "", nil, fmt.Errorf("tool result for call %q, which no earlier assistant message made", m.ToolCallID)
		}
		p := wirePart{FunctionResponse: &wireFunctionResponse{ID: ref.wireID, Name: ref.name, Response: responseObject(messageText(m))}, order: ref.order}
		return "user", []wirePart{p}, nil
	case "assistant":
		parts, err := contentParts(m)
		if err != nil {
			return "", nil, err
		}
		for _, tc := range m.ToolCalls {
			ref := callRef{name: tc.Name, order: len(refs)}
			if !strings.HasPrefix(tc.ID, generatedPrefix) {
				ref.wireID = tc.ID
			}
			refs[tc.ID] = ref
			parts = append(parts, wirePart{
				FunctionCall:     &wireFunctionCall{ID: ref.wireID, Name: tc.Name, Args: argsObject(tc.Arguments)},
				ThoughtSignature: c.sigs.get(tc.ID),
			})
		}
		if len(m.ToolCalls) == 0 {
			if key, ok := textKey(messageText(m)); ok {
				if sig := c.sigs.get(key); sig != "" {
					for i := len(parts) - 1; i >= 0; i-- {
						if parts[i].Text != "" {
							parts[i].ThoughtSignature = sig
							break
						}
					}
				}
			}
		}
		return "model", parts, nil
	case "user", "developer", "system":
		// Developer messages (the UI agent's <ui_state>) and system messages
		// after the conversation started have no role of their own in
		// Gemini: they go in as user text, where they stay in order.
		parts, err := contentParts(m)
		return "user", parts, err
	}
	return "", nil, fmt.Errorf("unknown role %q", m.Role)
}

// skipSignature is the placeholder Gemini documents for a function call
// whose thought signature is not known: history from another model or
// client, written by hand, or evicted here (ai.google.dev/gemini-api/docs/
// thought-signatures, FAQ: "dummy signatures"). Gemini 3 answers 400 to a
// step whose first function call carries no signature.
const skipSignature = "skip_thought_signature_validator"

// signFirstCall gives the first function call of a model turn the
// placeholder signature when it has none of its own. Only the first call
// of a step carries one (parallel calls after it never do), so the others
// are left as they are.
func signFirstCall(parts []wirePart) {
	for i := range parts {
		if parts[i].FunctionCall != nil {
			if parts[i].ThoughtSignature == "" {
				parts[i].ThoughtSignature = skipSignature
			}
			return
		}
	}
}

// argsObject returns a call's arguments as the JSON object Gemini wants;
// arguments that are not an object (truncated JSON, which the service
// answered with an error result) go back as {}.
func argsObject(args string) json.RawMessage {
	b := bytes.TrimSpace([]byte(args))
	if len(b) > 0 && b[0] == '{' && json.Valid(b) {
		return b
	}
	return json.RawMessage("{}")
}

// responseObject returns a tool result as the object functionResponse
// needs: a JSON object as is, anything else as {"result": value} (the
// JSON value, or the text as a string).
func responseObject(content string) json.RawMessage {
	b := bytes.TrimSpace([]byte(content))
	if len(b) > 0 && b[0] == '{' && json.Valid(b) {
		return b
	}
	value := json.RawMessage(b)
	if !json.Valid(b) {
		value, _ = marshal(content)
	}
	out, _ := marshal(map[string]json.RawMessage{"result": value})
	return out
}

// contentParts encodes a message's text or parts; empty text makes no
// part.
func contentParts(m frames.LLMMessage) ([]wirePart, error) {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil, nil
		}
		return []wirePart{{Text: m.Content}}, nil
	}
	var out []wirePart
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, wirePart{Text: p.Text})
			}
		case "image_url":
			wp, err := imagePart(p.ImageURL)
			if err != nil {
				return nil, err
			}
			out = append(out, wp)
		case "input_audio":
			if p.AudioData == "" || p.AudioFormat == "" {
				return nil, errors.New("an audio part needs data and a format")
			}
			out = append(out, wirePart{InlineData: &blob{MimeType: "audio/" + p.AudioFormat, Data: p.AudioData}})
		default:
			return nil, fmt.Errorf("content part type %q is not supported by Gemini", p.Type)
		}
	}
	return out, nil
}

// imagePart turns a data: URL into inline data and any other URL into file
// data (a Files API or Cloud Storage URI, which Gemini fetches).
func imagePart(u string) (wirePart, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		media, isBase64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isBase64 || media == "" {
			return wirePart{}, errors.New("an image data URL must be data:<media type>;base64,<data>")
		}
		return wirePart{InlineData: &blob{MimeType: media, Data: data}}, nil
	}
	if u == "" {
		return wirePart{}, errors.New("an image part needs a URL")
	}
	return wirePart{FileData: &fileData{FileURI: u}}, nil
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

func encodeTool(t frames.LLMTool) (json.RawMessage, error) {
	if len(t.Raw) > 0 {
		if !json.Valid(t.Raw) || bytes.TrimSpace(t.Raw)[0] != '{' {
			return nil, errors.New("raw declaration is not a JSON object")
		}
		return t.Raw, nil
	}
	if t.Name == "" {
		return nil, errors.New("a tool needs a name")
	}
	d := functionDeclaration{Name: t.Name, Description: t.Description}
	if len(t.Parameters) > 0 {
		var schema any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, errors.New("parameters are not valid JSON")
		}
		params, err := convertSchema(schema)
		if err != nil {
			return nil, fmt.Errorf("parameters: %w", err)
		}
		if params != nil {
			b, err := marshal(params)
			if err != nil {
				return nil, err
			}
			d.Parameters = b
		}
	}
	return marshal(d)
}
