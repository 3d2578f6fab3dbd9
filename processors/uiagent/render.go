package uiagent

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// StaleUIState replaces the older <ui_state> blocks of a context kept
// across turns ([KeepHistory]): one line where the screen was, so the
// tool calls that follow it still have a place, and no stale screen the
// model could read as current.
const StaleUIState = "<ui_state>(an earlier screen, replaced by the latest <ui_state>)</ui_state>"

const (
	uiStateOpen  = "<ui_state>"
	uiStateClose = "</ui_state>"
	uiEventOpen  = "<ui_event name=\""
	uiEventClose = "</ui_event>"
)

// RenderUIState renders a snapshot as the <ui_state> block the model reads
// (ui-agent.md §1.4), byte for byte as Pipecat's render_ui_state: one line
// per node, depth-first in pre-order, two spaces of indent per level, then
// the selection block when the selection has both a ref and text. It
// returns "" for a nil snapshot. Names and values are written as they
// came, without escaping or truncation: the client has already capped
// them.
func RenderUIState(s *wire.Snapshot) string {
	if s == nil {
		return ""
	}
	bp := renderBuffers.Get().(*[]byte)
	buf := AppendUIState((*bp)[:0], s)
	out := string(buf)
	if cap(buf) <= maxPooledBuffer {
		*bp = buf
		renderBuffers.Put(bp)
	}
	return out
}

// renderBuffers recycles the scratch buffers of RenderUIState, so a
// rendering costs one allocation: the string.
var renderBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledBuffer keeps buffers of unusually large snapshots out of the
// pool.
const maxPooledBuffer = 256 << 10

// AppendUIState appends the <ui_state> block of s (see [RenderUIState]) to
// dst. A nil snapshot appends nothing.
func AppendUIState(dst []byte, s *wire.Snapshot) []byte {
	if s == nil {
		return dst
	}
	dst = append(dst, uiStateOpen...)
	dst = appendNode(dst, &s.Root, 0)
	if sel := s.Selection; sel != nil && sel.Ref != "" && sel.Text != "" {
		dst = append(dst, "\n<selection ref=\""...)
		dst = append(dst, sel.Ref...)
		dst = append(dst, "\">\n"...)
		dst = append(dst, sel.Text...)
		dst = append(dst, "\n</selection>"...)
	}
	dst = append(dst, '\n')
	return append(dst, uiStateClose...)
}

// appendNode appends "\n" and the line of n, then its children.
func appendNode(dst []byte, n *wire.Node, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	dst = append(dst, '-', ' ')
	if n.Role == "" {
		dst = append(dst, "generic"...)
	} else {
		dst = append(dst, n.Role...)
	}
	if n.Name != "" {
		dst = append(dst, ' ', '"')
		dst = append(dst, n.Name...)
		dst = append(dst, '"')
	}
	if n.Value != "" {
		dst = append(dst, " = \""...)
		dst = append(dst, n.Value...)
		dst = append(dst, '"')
	}
	dst = appendIntTag(dst, n, wire.FieldLevel, "level", n.Level)
	dst = appendIntTag(dst, n, wire.FieldColCount, "cols", n.ColCount)
	dst = appendIntTag(dst, n, wire.FieldRowCount, "rows", n.RowCount)
	for _, st := range n.State {
		if st != "" {
			dst = append(dst, ' ', '[')
			dst = append(dst, st...)
			dst = append(dst, ']')
		}
	}
	if n.Ref != "" {
		dst = append(dst, " [ref="...)
		dst = append(dst, n.Ref...)
		dst = append(dst, ']')
	}
	if len(n.Children) > 0 {
		dst = append(dst, ':')
	}
	for i := range n.Children {
		dst = appendNode(dst, &n.Children[i], depth+1)
	}
	return dst
}

// appendIntTag appends " [key=N]" when the member is present (an int in
// the snapshot, 0 included, as Python's isinstance check).
func appendIntTag(dst []byte, n *wire.Node, f wire.NodeFields, key string, v int) []byte {
	if !n.Has(f) {
		return dst
	}
	dst = append(dst, ' ', '[')
	dst = append(dst, key...)
	dst = append(dst, '=')
	dst = strconv.AppendInt(dst, int64(v), 10)
	return append(dst, ']')
}

// RenderEvent renders a UI event as the <ui_event> block written into the
// context: <ui_event name="NAME">PAYLOAD</ui_event>, where PAYLOAD is the
// event's JSON payload on one line (compacted, otherwise as the client
// sent it) and null when there is none. The name is not escaped, as in
// Pipecat.
func RenderEvent(name string, payload wire.RawJSON) string {
	var b strings.Builder
	b.Grow(len(uiEventOpen) + len(name) + len(payload) + len(uiEventClose) + 8)
	b.WriteString(uiEventOpen)
	b.WriteString(name)
	b.WriteString("\">")
	b.Write(compactJSON(payload))
	b.WriteString(uiEventClose)
	return b.String()
}

// compactJSON returns p without insignificant whitespace, or null when it
// is absent or not JSON.
func compactJSON(p wire.RawJSON) []byte {
	if len(p) == 0 {
		return []byte("null")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, p); err != nil {
		return []byte("null")
	}
	return buf.Bytes()
}

// isUIState reports whether m is a <ui_state> block (current or stale)
// written by an agent.
func isUIState(m *frames.LLMMessage) bool {
	return m.Role == roleDeveloper && len(m.Parts) == 0 && strings.HasPrefix(m.Content, uiStateOpen) &&
		strings.HasSuffix(m.Content, uiStateClose)
}

// isUIEvent reports whether m is a <ui_event> block written by an agent.
func isUIEvent(m *frames.LLMMessage) bool {
	return m.Role == roleDeveloper && len(m.Parts) == 0 && strings.HasPrefix(m.Content, uiEventOpen) &&
		strings.HasSuffix(m.Content, uiEventClose)
}

// UIStateMessage is the server-message body {"type":"ui_state","text":...}
// that the conformance bot sends for every snapshot (conformance-bot.md
// row 5): send it with rtvi.Processor.SendServerMessage or an
// rtvi.ServerMessageFrame.
type UIStateMessage struct {
	// Text is the rendered block ([RenderUIState]).
	Text string
}

// AppendJSON implements wire.Payload.
func (m UIStateMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"ui_state","text":`...)
	dst = appendJSONString(dst, m.Text)
	return append(dst, '}')
}

// UIEventMessage is the server-message body {"type":"ui_event","event":...,
// "payload":...} that the conformance bot echoes for every ui-event
// (conformance-bot.md row 6). A missing payload is sent as null.
type UIEventMessage struct {
	Event   string
	Payload wire.RawJSON
}

// AppendJSON implements wire.Payload.
func (m UIEventMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"ui_event","event":`...)
	dst = appendJSONString(dst, m.Event)
	dst = append(dst, `,"payload":`...)
	dst = m.Payload.AppendJSON(dst)
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string, keeping <, > and & and
// non-ASCII text as they are (valid JSON, and readable in logs).
func appendJSONString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
