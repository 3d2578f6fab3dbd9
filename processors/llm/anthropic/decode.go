package anthropic

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/jsontext"
)

// toolBlock assembles one tool_use content block.
type toolBlock struct {
	index int
	id    string
	name  string
	input []byte // partial_json fragments, concatenated
	start []byte // the input object content_block_start carried
}

// decoder turns the data of stream events into text, assembled tool calls
// and usage. It reuses its buffers: decoding a text delta allocates
// nothing; the caller turns the text into a string once.
type decoder struct {
	sc    jsontext.Scanner
	tools []*toolBlock

	input, cacheRead, cacheWrite, output int
	gotUsage                             bool
	started, stopped                     bool
	stopReason                           string

	// Scratch for one event, whose members may come in any order.
	typ, deltaType, text, partial, blockType, id, name, errType, errMsg []byte
	index                                                               int
	startInput                                                          []byte
	hasDelta                                                            bool
}

// decode parses one event. event is the SSE event type, data its JSON. The
// returned text is valid until the next call.
func (d *decoder) decode(event, data []byte) ([]byte, error) {
	s := &d.sc
	s.Prefix = "anthropic"
	s.Reset(data)
	d.typ, d.deltaType, d.text, d.partial = d.typ[:0], d.deltaType[:0], d.text[:0], d.partial[:0]
	d.blockType, d.id, d.name, d.errType, d.errMsg = d.blockType[:0], d.id[:0], d.name[:0], d.errType[:0], d.errMsg[:0]
	d.index, d.startInput, d.hasDelta = -1, nil, false
	if !s.Open('{') {
		if s.Err() == nil {
			s.Fail("expected an object")
		}
		return nil, s.Err()
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "type":
			d.typ = s.AppendString(d.typ)
		case "index":
			d.index = s.Int()
		case "delta":
			d.delta()
		case "content_block":
			d.contentBlock()
		case "message":
			d.message()
		case "usage":
			d.usageObject()
		case "error":
			d.errorObject()
		default:
			s.Skip()
		}
	}
	s.End()
	if err := s.Err(); err != nil {
		return nil, err
	}
	typ := d.typ
	if len(typ) == 0 {
		typ = event
	}
	switch string(typ) {
	case "message_start":
		d.started = true
	case "content_block_start":
		if string(d.blockType) == "tool_use" {
			d.tools = append(d.tools, &toolBlock{index: d.index, id: string(d.id), name: string(d.name), start: slices.Clone(d.startInput)})
		}
	case "content_block_delta":
		switch string(d.deltaType) {
		case "text_delta":
			return d.text, nil
		case "input_json_delta":
			b := d.block(d.index)
			if b == nil {
				return nil, fmt.Errorf("anthropic: input_json_delta for block %d, which is not a tool_use block", d.index)
			}
			if len(b.input)+len(d.partial) > maxToolInput {
				return nil, fmt.Errorf("anthropic: the input of tool call %q is over %d bytes", b.name, maxToolInput)
			}
			b.input = append(b.input, d.partial...)
		}
	case "message_stop":
		d.stopped = true
	case "error":
		return nil, &APIError{StatusCode: http.StatusOK, Type: string(d.errType), Message: string(d.errMsg)}
	}
	// content_block_stop, message_delta (read above), ping and unknown
	// event types carry nothing more.
	return nil, nil
}

// maxToolInput bounds the assembled input of one tool call.
const maxToolInput = 4 << 20

// block returns the tool_use block with index i, or nil.
func (d *decoder) block(i int) *toolBlock {
	for _, b := range d.tools {
		if b.index == i {
			return b
		}
	}
	return nil
}

func (d *decoder) delta() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	d.hasDelta = true
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "type":
			d.deltaType = s.AppendString(d.deltaType)
		case "text":
			d.text = s.AppendString(d.text)
		case "partial_json":
			d.partial = s.AppendString(d.partial)
		case "stop_reason":
			if r := s.String(); r != "" {
				d.stopReason = r
			}
		default:
			s.Skip()
		}
	}
}

func (d *decoder) contentBlock() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "type":
			d.blockType = s.AppendString(d.blockType)
		case "id":
			d.id = s.AppendString(d.id)
		case "name":
			d.name = s.AppendString(d.name)
		case "input":
			d.startInput = s.Raw()
		default:
			s.Skip()
		}
	}
}

func (d *decoder) message() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "usage":
			d.usageObject()
		case "stop_reason":
			if r := s.String(); r != "" {
				d.stopReason = r
			}
		default:
			s.Skip()
		}
	}
}

// usageObject reads usage from message_start or message_delta. Counts
// accumulate across events: message_start has the input, message_delta the
// (cumulative) output, and newer API versions repeat the input there.
func (d *decoder) usageObject() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	d.gotUsage = true
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "input_tokens":
			d.input = max(d.input, s.Int())
		case "cache_read_input_tokens":
			d.cacheRead = max(d.cacheRead, s.Int())
		case "cache_creation_input_tokens":
			d.cacheWrite = max(d.cacheWrite, s.Int())
		case "output_tokens":
			d.output = max(d.output, s.Int())
		default:
			s.Skip()
		}
	}
}

func (d *decoder) errorObject() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "type":
			d.errType = s.AppendString(d.errType)
		case "message":
			d.errMsg = s.AppendString(d.errMsg)
		default:
			s.Skip()
		}
	}
}

// usage returns the answer's usage in framewire's terms: prompt tokens
// include the cached ones (Anthropic counts them apart), as OpenAI's do.
func (d *decoder) usage() frames.LLMTokenUsage {
	prompt := d.input + d.cacheRead + d.cacheWrite
	return frames.LLMTokenUsage{
		PromptTokens:     prompt,
		CompletionTokens: d.output,
		TotalTokens:      prompt + d.output,
		CacheReadTokens:  d.cacheRead,
	}
}

// calls returns the assembled tool calls in block order. A call whose
// input never streamed takes the input its start event carried ({} for a
// call without arguments).
func (d *decoder) calls() []frames.LLMToolCall {
	tools := slices.Clone(d.tools)
	slices.SortStableFunc(tools, func(a, b *toolBlock) int { return a.index - b.index })
	out := make([]frames.LLMToolCall, 0, len(tools))
	for _, b := range tools {
		args := string(b.input)
		if args == "" {
			args = string(b.start)
		}
		if args == "" {
			args = "{}"
		}
		out = append(out, frames.LLMToolCall{ID: b.id, Name: b.name, Arguments: args})
	}
	return out
}
