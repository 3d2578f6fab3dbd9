package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/jsontext"
)

// contentBlock assembles one content block of the answer: a tool_use
// block into a call, and every block into what goes back to the service
// when it pauses the turn (stop_reason pause_turn).
type contentBlock struct {
	index     int
	typ       string
	id, name  string
	start     []byte // the content_block content_block_start carried, verbatim
	input     []byte // input_json_delta fragments, concatenated
	text      []byte // text_delta or thinking_delta fragments
	signature []byte // signature_delta fragments (thinking blocks)
	streamed  bool   // input came in deltas, replacing the start's
}

// decoder turns the data of stream events into text, assembled tool calls
// and usage. It reuses its buffers: decoding a text delta allocates
// nothing; the caller turns the text into a string once.
type decoder struct {
	sc, sub jsontext.Scanner
	blocks  []*contentBlock
	kept    int // bytes held in blocks, bounded by maxKept

	input, cacheRead, cacheWrite, output int
	gotUsage                             bool
	started, stopped                     bool
	stopReason                           string
	container                            string // the code execution container, for a continuation

	// Scratch for one event, whose members may come in any order.
	typ, deltaType, text, partial, thinking, signature, errType, errMsg []byte
	index                                                               int
	startRaw                                                            []byte
	hasDelta                                                            bool
}

// decode parses one event. event is the SSE event type, data its JSON. The
// returned text is valid until the next call.
func (d *decoder) decode(event, data []byte) ([]byte, error) {
	s := &d.sc
	s.Prefix = "anthropic"
	s.Reset(data)
	d.typ, d.deltaType, d.text, d.partial = d.typ[:0], d.deltaType[:0], d.text[:0], d.partial[:0]
	d.thinking, d.signature, d.errType, d.errMsg = d.thinking[:0], d.signature[:0], d.errType[:0], d.errMsg[:0]
	d.index, d.startRaw, d.hasDelta = -1, nil, false
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
			d.startRaw = s.Raw()
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
		if d.startRaw != nil {
			return nil, d.startBlock()
		}
	case "content_block_delta":
		return d.blockDelta()
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

// maxKept bounds what an answer's blocks hold beyond their text: tool
// inputs and the server tools' result blocks (a web search result is tens
// of kilobytes), kept to send back on pause_turn.
const maxKept = 16 << 20

// startBlock records the block content_block_start opens.
func (d *decoder) startBlock() error {
	b := &contentBlock{index: d.index}
	s := &d.sub
	s.Prefix = "anthropic"
	s.Reset(d.startRaw)
	var input []byte
	if s.Open('{') {
		for first := true; s.More('}', &first); {
			switch string(s.Key()) {
			case "type":
				b.typ = s.String()
			case "id":
				b.id = s.String()
			case "name":
				b.name = s.String()
			case "input":
				input = s.Raw()
			default:
				s.Skip()
			}
		}
		s.End()
	}
	if err := s.Err(); err != nil {
		return err
	}
	if b.typ == "" {
		return fmt.Errorf("anthropic: content block %d has no type", d.index)
	}
	if d.kept += len(d.startRaw); d.kept > maxKept {
		return fmt.Errorf("anthropic: the answer's content blocks are over %d bytes", maxKept)
	}
	b.start = slices.Clone(d.startRaw)
	if isToolUse(b.typ) && len(input) > 0 && string(input) != "{}" {
		b.input = slices.Clone(input) // a block whose input never streams
	}
	d.blocks = append(d.blocks, b)
	return nil
}

// isToolUse reports whether blocks of type typ carry a tool's input:
// the client's tool_use blocks and the calls the service runs itself
// (server_tool_use for web search, web fetch and code execution;
// mcp_tool_use for the MCP connector). Only tool_use is the client's to
// answer; the others' results follow in the same answer.
func isToolUse(typ string) bool {
	return typ == "tool_use" || typ == "server_tool_use" || typ == "mcp_tool_use"
}

// blockDelta adds a content_block_delta to its block. Only text deltas
// are returned: the answer's text.
func (d *decoder) blockDelta() ([]byte, error) {
	b := d.block(d.index)
	switch string(d.deltaType) {
	case "text_delta":
		if b != nil {
			b.text = append(b.text, d.text...)
		}
		return d.text, nil
	case "input_json_delta":
		if b == nil || !isToolUse(b.typ) {
			return nil, fmt.Errorf("anthropic: input_json_delta for block %d, which is not a tool use block", d.index)
		}
		if len(b.input)+len(d.partial) > maxToolInput {
			return nil, fmt.Errorf("anthropic: the input of tool call %q is over %d bytes", b.name, maxToolInput)
		}
		if d.kept += len(d.partial); d.kept > maxKept {
			return nil, fmt.Errorf("anthropic: the answer's content blocks are over %d bytes", maxKept)
		}
		if !b.streamed {
			b.input, b.streamed = b.input[:0], true
		}
		b.input = append(b.input, d.partial...)
	case "thinking_delta":
		if b != nil {
			b.text = append(b.text, d.thinking...)
		}
	case "signature_delta":
		if b != nil {
			b.signature = append(b.signature, d.signature...)
		}
	}
	// citations_delta and unknown deltas carry nothing the answer needs;
	// a text block goes back on pause_turn without its citations, which
	// are optional in a request.
	return nil, nil
}

// block returns the block with index i, or nil.
func (d *decoder) block(i int) *contentBlock {
	for j := len(d.blocks) - 1; j >= 0; j-- {
		if d.blocks[j].index == i {
			return d.blocks[j]
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
		case "thinking":
			d.thinking = s.AppendString(d.thinking)
		case "signature":
			d.signature = s.AppendString(d.signature)
		case "stop_reason":
			if r := s.String(); r != "" {
				d.stopReason = r
			}
		case "container":
			d.containerObject()
		default:
			s.Skip()
		}
	}
}

// containerObject reads the code execution container a message runs in
// ({"id": ..., "expires_at": ...}), which a continuation names.
func (d *decoder) containerObject() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	for first := true; s.More('}', &first); {
		if string(s.Key()) == "id" {
			if id := s.String(); id != "" {
				d.container = id
			}
			continue
		}
		s.Skip()
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
		case "container":
			d.containerObject()
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

// calls returns the assembled tool_use calls in block order. A call
// whose input never streamed takes the input its start event carried ({}
// for a call without arguments). The service's own calls (server_tool_use,
// mcp_tool_use) are not the client's to run and are left out.
func (d *decoder) calls() []frames.LLMToolCall {
	var tools []*contentBlock
	for _, b := range d.blocks {
		if b.typ == "tool_use" {
			tools = append(tools, b)
		}
	}
	slices.SortStableFunc(tools, func(a, b *contentBlock) int { return a.index - b.index })
	out := make([]frames.LLMToolCall, 0, len(tools))
	for _, b := range tools {
		args := string(b.input)
		if args == "" {
			args = "{}"
		}
		out = append(out, frames.LLMToolCall{ID: b.id, Name: b.name, Arguments: args})
	}
	return out
}

// content returns the answer's blocks as the assistant content a
// continuation sends back: "provide the response back as-is in a
// subsequent request" (Anthropic, Handling stop reasons: pause_turn).
// Text and thinking blocks are rebuilt from their deltas, tool use blocks
// take their assembled input, and every other block (the server tools'
// results, redacted thinking) goes back as its start event carried it.
func (d *decoder) content() ([]block, error) {
	blocks := slices.Clone(d.blocks)
	slices.SortStableFunc(blocks, func(a, b *contentBlock) int { return a.index - b.index })
	out := make([]block, 0, len(blocks))
	for _, b := range blocks {
		var v any
		switch {
		case b.typ == "text":
			if len(b.text) == 0 {
				continue
			}
			v = textBlock{Type: "text", Text: string(b.text)}
		case b.typ == "thinking":
			v = thinkingBlock{Type: "thinking", Thinking: string(b.text), Signature: string(b.signature)}
		case isToolUse(b.typ):
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b.start, &m); err != nil {
				return nil, fmt.Errorf("anthropic: content block %d: %w", b.index, err)
			}
			m["input"] = toolInput(string(b.input))
			v = m
		default:
			out = append(out, block{raw: b.start})
			continue
		}
		blk, err := marshalBlock(v, false)
		if err != nil {
			return nil, err
		}
		out = append(out, blk)
	}
	return out, nil
}
