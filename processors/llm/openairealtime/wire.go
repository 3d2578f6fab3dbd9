package openairealtime

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// The client events, as the Realtime API (GA) documents them. Only what
// the processor sends is modelled; omitempty keeps unset fields off the
// wire so the server's defaults apply.

type sessionUpdate struct {
	Type    string  `json:"type"` // "session.update"
	Session session `json:"session"`
}

type session struct {
	Type             string          `json:"type"` // "realtime"
	Model            string          `json:"model,omitempty"`
	OutputModalities []string        `json:"output_modalities,omitempty"`
	Instructions     string          `json:"instructions,omitempty"`
	Audio            sessionAudio    `json:"audio"`
	Tools            []any           `json:"tools,omitempty"`
	ToolChoice       json.RawMessage `json:"tool_choice,omitempty"`
}

type sessionAudio struct {
	Input  audioInput  `json:"input"`
	Output audioOutput `json:"output"`
}

type audioFormat struct {
	Type string `json:"type"` // "audio/pcm"
	Rate int    `json:"rate"` // 24000
}

type audioInput struct {
	Format        audioFormat    `json:"format"`
	Transcription *transcription `json:"transcription,omitempty"`
	// TurnDetection is always written: null turns the server's off.
	TurnDetection *turnDetection `json:"turn_detection"`
}

type transcription struct {
	Model    string `json:"model"`
	Language string `json:"language,omitempty"`
}

type turnDetection struct {
	Type              string   `json:"type"` // "server_vad" or "semantic_vad"
	Threshold         *float64 `json:"threshold,omitempty"`
	PrefixPaddingMS   int      `json:"prefix_padding_ms,omitempty"`
	SilenceDurationMS int      `json:"silence_duration_ms,omitempty"`
	Eagerness         string   `json:"eagerness,omitempty"`
	CreateResponse    bool     `json:"create_response"`
	InterruptResponse bool     `json:"interrupt_response"`
}

type audioOutput struct {
	Format audioFormat `json:"format"`
	Voice  string      `json:"voice,omitempty"`
}

type tool struct {
	Type        string          `json:"type"` // "function"
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// toolsOf turns function declarations into Realtime tools (a tool, or a
// declaration's Raw JSON sent verbatim).
func toolsOf(decls []frames.LLMTool) []any {
	var out []any
	for _, d := range decls {
		if len(d.Raw) > 0 {
			out = append(out, d.Raw)
			continue
		}
		params := d.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, tool{Type: "function", Name: d.Name, Description: d.Description, Parameters: params})
	}
	return out
}

// toolChoiceJSON renders a tool choice: "auto", "none", "required" or a
// named function; the zero choice is left to the server.
func toolChoiceJSON(c frames.LLMToolChoice) json.RawMessage {
	switch {
	case c.Function != "":
		b, _ := json.Marshal(struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}{"function", c.Function})
		return b
	case c.Mode != "":
		b, _ := json.Marshal(c.Mode)
		return b
	}
	return nil
}

// item is a conversation item the processor creates.
type item struct {
	ID      string        `json:"id,omitempty"`
	Type    string        `json:"type"` // "message" or "function_call_output"
	Role    string        `json:"role,omitempty"`
	Content []itemContent `json:"content,omitempty"`
	CallID  string        `json:"call_id,omitempty"`
	Output  *string       `json:"output,omitempty"`
}

type itemContent struct {
	Type string `json:"type"` // "input_text" or "output_text"
	Text string `json:"text"`
}

type itemCreate struct {
	Type           string `json:"type"` // "conversation.item.create"
	PreviousItemID string `json:"previous_item_id,omitempty"`
	Item           item   `json:"item"`
}

// messageItem turns a context message into a message item: system and
// developer messages become system items (the Realtime API has no
// developer role), user messages input_text, assistant messages
// output_text. ok is false for messages that have no item (tool calls,
// empty text).
func messageItem(m frames.LLMMessage, id string) (item, bool) {
	text := m.Content
	if text == "" {
		var b strings.Builder
		for _, p := range m.Parts {
			if p.Type == "" || p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		text = b.String()
	}
	if strings.TrimSpace(text) == "" || len(m.ToolCalls) > 0 {
		return item{}, false
	}
	it := item{ID: id, Type: "message"}
	switch m.Role {
	case llm.RoleSystem, llm.RoleDeveloper:
		it.Role = "system"
		it.Content = []itemContent{{Type: "input_text", Text: text}}
	case llm.RoleUser:
		it.Role = "user"
		it.Content = []itemContent{{Type: "input_text", Text: text}}
	case llm.RoleAssistant:
		it.Role = "assistant"
		it.Content = []itemContent{{Type: "output_text", Text: text}}
	default:
		return item{}, false
	}
	return it, true
}

type responseCreate struct {
	Type     string          `json:"type"` // "response.create"
	EventID  string          `json:"event_id,omitempty"`
	Response *responseParams `json:"response,omitempty"`
}

type responseParams struct {
	Instructions string          `json:"instructions,omitempty"`
	ToolChoice   json.RawMessage `json:"tool_choice,omitempty"`
}

type truncate struct {
	Type         string `json:"type"` // "conversation.item.truncate"
	ItemID       string `json:"item_id"`
	ContentIndex int    `json:"content_index"`
	AudioEndMS   int64  `json:"audio_end_ms"`
}

type itemDelete struct {
	Type   string `json:"type"` // "conversation.item.delete"
	ItemID string `json:"item_id"`
}

// Events without fields are fixed bytes.
var (
	msgCommit         = []byte(`{"type":"input_audio_buffer.commit"}`)
	msgResponseCancel = []byte(`{"type":"response.cancel"}`)
)

const appendPrefix = `{"type":"input_audio_buffer.append","audio":"`

// appendAudioEvent appends an input_audio_buffer.append event for pcm to
// dst. It does not allocate once dst has grown.
func appendAudioEvent(dst, pcm []byte) []byte {
	n := base64.StdEncoding.EncodedLen(len(pcm))
	dst = slices.Grow(dst, len(appendPrefix)+n+2)
	dst = append(dst, appendPrefix...)
	start := len(dst)
	dst = dst[:start+n]
	base64.StdEncoding.Encode(dst[start:], pcm)
	return append(dst, '"', '}')
}

// The server's objects the processor reads with encoding/json.

type responseObj struct {
	ID            string        `json:"id"`
	Status        string        `json:"status"`
	StatusDetails statusDetails `json:"status_details"`
	Output        []outputItem  `json:"output"`
	Usage         *usage        `json:"usage"`
}

type statusDetails struct {
	Type   string    `json:"type"`
	Reason string    `json:"reason"`
	Error  *apiError `json:"error"`
}

type outputItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type usage struct {
	TotalTokens       int `json:"total_tokens"`
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	InputTokenDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_token_details"`
}

type apiError struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
	EventID string `json:"event_id"`
}

// toolsUpdate is the session.update that replaces the tool list; an empty
// list clears it.
func toolsUpdate(decls []frames.LLMTool) any {
	tools := toolsOf(decls)
	if tools == nil {
		tools = []any{}
	}
	type toolsOnly struct {
		Type  string `json:"type"`
		Tools []any  `json:"tools"`
	}
	return struct {
		Type    string    `json:"type"`
		Session toolsOnly `json:"session"`
	}{"session.update", toolsOnly{"realtime", tools}}
}
