package openai

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/jsontext"
)

// toolBuilder assembles one streamed tool call from its deltas.
type toolBuilder struct {
	index int
	id    string
	name  []byte
	args  []byte
}

// chunkDecoder turns the data of stream events into text, assembled tool
// calls and usage. It reuses its buffers: decoding a text chunk allocates
// nothing, the caller turns the text into a string once.
type chunkDecoder struct {
	sc    jsontext.Scanner
	text  []byte
	tools []*toolBuilder

	usage    frames.LLMTokenUsage
	newUsage bool // the last chunk carried usage
	finished bool // a choice reported its finish_reason
	apiErr   *APIError

	// Scratch for one tool-call delta, whose fields may come in any order,
	// and for a finish_reason.
	id, name, args, reason []byte
}

// decode parses one chunk. The returned text is valid until the next call.
func (d *chunkDecoder) decode(data []byte) ([]byte, error) {
	s := &d.sc
	s.Prefix = "openai"
	s.Reset(data)
	d.text = d.text[:0]
	d.newUsage = false
	if !s.Open('{') {
		if s.Err() == nil {
			s.Fail("expected an object")
		}
		return nil, s.Err()
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "choices":
			d.choices()
		case "usage":
			d.usageObject()
		case "error":
			d.errorObject()
		default:
			s.Skip()
		}
	}
	s.End()
	return d.text, s.Err()
}

func (d *chunkDecoder) choices() {
	s := &d.sc
	if !s.Open('[') {
		return
	}
	for first := true; s.More(']', &first); {
		if !s.Open('{') {
			continue
		}
		for first := true; s.More('}', &first); {
			switch string(s.Key()) {
			case "delta":
				d.delta()
			case "finish_reason":
				if !s.Null() {
					d.reason = s.AppendString(d.reason[:0])
					d.finished = true
				}
			default:
				s.Skip()
			}
		}
	}
}

func (d *chunkDecoder) delta() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "content", "refusal":
			d.text = s.AppendString(d.text)
		case "tool_calls":
			d.toolCalls()
		default:
			s.Skip()
		}
	}
}

func (d *chunkDecoder) toolCalls() {
	s := &d.sc
	if !s.Open('[') {
		return
	}
	for first := true; s.More(']', &first); {
		if !s.Open('{') {
			continue
		}
		index := -1
		d.id, d.name, d.args = d.id[:0], d.name[:0], d.args[:0]
		for first := true; s.More('}', &first); {
			switch string(s.Key()) {
			case "index":
				index = s.Int()
			case "id":
				d.id = s.AppendString(d.id)
			case "function":
				if !s.Open('{') {
					continue
				}
				for first := true; s.More('}', &first); {
					switch string(s.Key()) {
					case "name":
						d.name = s.AppendString(d.name)
					case "arguments":
						d.args = s.AppendString(d.args)
					default:
						s.Skip()
					}
				}
			default:
				s.Skip()
			}
		}
		if s.Err() != nil {
			return
		}
		b := d.builder(index, d.id)
		b.name = append(b.name, d.name...)
		b.args = append(b.args, d.args...)
	}
}

// builder finds the call a delta belongs to: by index when the server sends
// one (a new index opens a new call), otherwise by id, otherwise the last.
func (d *chunkDecoder) builder(index int, id []byte) *toolBuilder {
	if index >= 0 {
		for _, b := range d.tools {
			if b.index == index {
				if b.id == "" && len(id) > 0 {
					b.id = string(id)
				}
				return b
			}
		}
		return d.newBuilder(index, id)
	}
	if len(id) > 0 {
		for _, b := range d.tools {
			if b.id == string(id) {
				return b
			}
		}
		next := 0
		for _, b := range d.tools {
			next = max(next, b.index+1)
		}
		return d.newBuilder(next, id)
	}
	if n := len(d.tools); n > 0 {
		return d.tools[n-1]
	}
	return d.newBuilder(0, nil)
}

func (d *chunkDecoder) newBuilder(index int, id []byte) *toolBuilder {
	b := &toolBuilder{index: index, id: string(id)}
	d.tools = append(d.tools, b)
	return b
}

// calls returns the assembled calls in index order.
func (d *chunkDecoder) calls() []frames.LLMToolCall {
	tools := slices.Clone(d.tools)
	slices.SortStableFunc(tools, func(a, b *toolBuilder) int { return a.index - b.index })
	out := make([]frames.LLMToolCall, 0, len(tools))
	for _, b := range tools {
		out = append(out, frames.LLMToolCall{ID: b.id, Name: string(b.name), Arguments: string(b.args)})
	}
	return out
}

func (d *chunkDecoder) usageObject() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	var u frames.LLMTokenUsage
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "prompt_tokens":
			u.PromptTokens = s.Int()
		case "completion_tokens":
			u.CompletionTokens = s.Int()
		case "total_tokens":
			u.TotalTokens = s.Int()
		case "prompt_tokens_details":
			u.CacheReadTokens = d.detail("cached_tokens")
		case "completion_tokens_details":
			u.ReasoningTokens = d.detail("reasoning_tokens")
		default:
			s.Skip()
		}
	}
	if s.Err() == nil {
		d.usage, d.newUsage = u, true
	}
}

// detail reads the integer member name of an object, skipping the rest.
func (d *chunkDecoder) detail(name string) int {
	s := &d.sc
	n := 0
	if !s.Open('{') {
		return 0
	}
	for first := true; s.More('}', &first); {
		if string(s.Key()) == name {
			n = s.Int()
		} else {
			s.Skip()
		}
	}
	return n
}

// errorObject reads an error sent inside the stream.
func (d *chunkDecoder) errorObject() {
	s := &d.sc
	e := &APIError{StatusCode: 200}
	if s.Peek() == '"' {
		e.Message = string(s.AppendString(nil))
		d.apiErr = e
		return
	}
	if !s.Open('{') {
		return
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "message":
			e.Message = string(s.AppendString(nil))
		case "type":
			e.Type = string(s.AppendString(nil))
		case "code":
			e.Code = d.scalar()
		case "param":
			e.Param = d.scalar()
		default:
			s.Skip()
		}
	}
	d.apiErr = e
}

// scalar reads a string or number as text (null as "").
func (d *chunkDecoder) scalar() string {
	s := &d.sc
	switch c := s.Peek(); {
	case c == '"':
		return string(s.AppendString(nil))
	case c == '-' || (c >= '0' && c <= '9'):
		return strconv.Itoa(s.Int())
	}
	s.Skip()
	return ""
}

// isDone reports whether data is the [DONE] sentinel.
func isDone(data []byte) bool {
	return bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]"))
}
