package uiagent

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
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

// Default limits of a rendered <ui_state> block ([RenderLimits]).
const (
	// DefaultMaxNodes is ten times the client's own budget of 200 nodes.
	DefaultMaxNodes = 2000
	// DefaultMaxBytes is about 15,000 tokens, and holds a 60 KB snapshot
	// of ordinary text.
	DefaultMaxBytes = 60_000
)

// minMaxBytes is the smallest byte limit honoured: room for the tags, the
// markers and a few lines.
const minMaxBytes = 1024

// RenderLimits bound the <ui_state> block rendered from one snapshot, so
// that a large page (or a client that sends whatever it likes) cannot
// fill the model's context. The zero value has the defaults.
//
// Nodes are rendered in pre-order, whole lines only, until the next line
// would pass a limit; the rest of the tree is replaced by one marker
// line, "… N more nodes not shown", after the last line shown. A
// selection block that would take more than half of MaxBytes is replaced
// by the line "… the selected text (N bytes) is not shown".
type RenderLimits struct {
	// MaxNodes is the most nodes rendered. 0 means [DefaultMaxNodes];
	// negative means no limit.
	MaxNodes int
	// MaxBytes bounds the length of the whole block in bytes, tags and
	// markers included. 0 means [DefaultMaxBytes]; negative means no
	// limit; a positive value below 1024 counts as 1024.
	MaxBytes int
}

// nodes returns the node limit in force.
func (l RenderLimits) nodes() int {
	switch {
	case l.MaxNodes == 0:
		return DefaultMaxNodes
	case l.MaxNodes < 0:
		return math.MaxInt
	}
	return l.MaxNodes
}

// bytes returns the byte limit in force, or -1 for none.
func (l RenderLimits) bytes() int {
	switch {
	case l.MaxBytes == 0:
		return DefaultMaxBytes
	case l.MaxBytes < 0:
		return -1
	}
	return max(l.MaxBytes, minMaxBytes)
}

// RenderUIState renders a snapshot as the <ui_state> block the model reads
// (ui-agent.md §1.4) within the default [RenderLimits], as Pipecat's
// render_ui_state does: one line per node, depth-first in pre-order, two
// spaces of indent per level, then the selection block when the selection
// has both a ref and text. It returns "" for a nil snapshot.
//
// Page text (roles, names, values, states, refs and the selection) is
// written as it came, except that every "<" in it is written as "&lt;".
// No tag starts without a "<", so the page can neither close the block
// early nor open a tag of the agent's (<ui_state>, <selection>,
// <ui_event>, or any other a prompt uses, in any case or spacing), while
// the model, which knows the entity, still reads the text as it is on the
// page; "&", ">" and quotes are left alone. A page without "<" renders
// byte for byte as in Pipecat (within the limits). See [EscapeText].
func RenderUIState(s *wire.Snapshot) string { return RenderLimits{}.Render(s) }

// AppendUIState appends the <ui_state> block of s (see [RenderUIState]) to
// dst. A nil snapshot appends nothing.
func AppendUIState(dst []byte, s *wire.Snapshot) []byte { return RenderLimits{}.Append(dst, s) }

// Render renders s as [RenderUIState] does, within l.
func (l RenderLimits) Render(s *wire.Snapshot) string {
	if s == nil {
		return ""
	}
	bp := renderBuffers.Get().(*[]byte)
	buf := l.Append((*bp)[:0], s)
	out := string(buf)
	if cap(buf) <= maxPooledBuffer {
		*bp = buf
		renderBuffers.Put(bp)
	}
	return out
}

// renderBuffers recycles the scratch buffers of Render, so a rendering
// costs one allocation: the string.
var renderBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledBuffer keeps buffers of unusually large snapshots out of the
// pool.
const maxPooledBuffer = 256 << 10

// Lengths reserved at the end of a limited block.
const (
	// markerRoom holds the "more nodes" marker line.
	markerRoom = 64
	// tailRoom is the final newline and the closing tag.
	tailRoom = 1 + len(uiStateClose)
)

// Append appends the <ui_state> block of s (see [RenderUIState]), within
// l, to dst. A nil snapshot appends nothing.
func (l RenderLimits) Append(dst []byte, s *wire.Snapshot) []byte {
	if s == nil {
		return dst
	}
	base := len(dst)
	dst = append(dst, uiStateOpen...)

	sel := s.Selection
	if sel != nil && (sel.Ref == "" || sel.Text == "") {
		sel = nil
	}
	showSel := sel != nil
	r := renderer{nodes: l.nodes(), limit: math.MaxInt}
	if maxBytes := l.bytes(); maxBytes > 0 {
		selRoom := 0
		if sel != nil {
			selRoom = selectionLen(sel)
			if selRoom > (maxBytes-len(uiStateOpen)-tailRoom-markerRoom)/2 {
				showSel, selRoom = false, markerRoom
			}
		}
		r.limit = base + maxBytes - tailRoom - markerRoom - selRoom
	}

	// The lines are written as they came, the common case, then looked
	// through for "<" in one pass (the agent writes none in node lines); a
	// page with a "<" in the text shown is written again, escaped.
	start := len(dst)
	first := r
	dst = r.node(dst, &s.Root, 0)
	if bytes.IndexByte(dst[start:], '<') >= 0 {
		r = first
		r.escape = true
		dst = r.node(dst[:start], &s.Root, 0)
	}
	if r.full {
		hidden := treeSize(&s.Root) - r.shown
		dst = append(dst, "\n… "...)
		dst = strconv.AppendInt(dst, int64(hidden), 10)
		if hidden == 1 {
			dst = append(dst, " more node not shown"...)
		} else {
			dst = append(dst, " more nodes not shown"...)
		}
	}
	switch {
	case showSel:
		dst = append(dst, "\n<selection ref=\""...)
		dst = appendEscaped(dst, sel.Ref)
		dst = append(dst, "\">\n"...)
		dst = appendEscaped(dst, sel.Text)
		dst = append(dst, "\n</selection>"...)
	case sel != nil:
		dst = append(dst, "\n… the selected text ("...)
		dst = strconv.AppendInt(dst, int64(len(sel.Text)), 10)
		dst = append(dst, " bytes) is not shown"...)
	}
	dst = append(dst, '\n')
	return append(dst, uiStateClose...)
}

// selectionLen is the length of the selection block of sel, escaped.
func selectionLen(sel *wire.Selection) int {
	return len("\n<selection ref=\"\">\n\n</selection>") + escapedLen(sel.Ref) + escapedLen(sel.Text)
}

// renderer writes node lines within limits.
type renderer struct {
	escape bool // write "<" as "&lt;"
	limit  int  // the length dst may reach
	nodes  int  // how many more nodes may be shown
	shown  int  // nodes shown
	full   bool // a node was left out: nothing more is written
}

// node appends "\n" and the line of n, then its children, to dst unless
// a limit is reached: then the line is taken back whole and r is full.
func (r *renderer) node(dst []byte, n *wire.Node, depth int) []byte {
	mark := len(dst)
	// The line is at least this long; checking first keeps a huge name
	// from being copied only to be taken back.
	if r.nodes == 0 || r.limit-mark < 3+2*depth+len(n.Name)+len(n.Value) {
		r.full = true
		return dst
	}
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
	if n.Set&intFields != 0 || n.Level|n.ColCount|n.RowCount != 0 { // most nodes have none
		dst = appendIntTag(dst, n, wire.FieldLevel, "level", n.Level)
		dst = appendIntTag(dst, n, wire.FieldColCount, "cols", n.ColCount)
		dst = appendIntTag(dst, n, wire.FieldRowCount, "rows", n.RowCount)
	}
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
	if r.escape {
		dst = escapeFrom(dst, mark)
	}
	if len(dst) > r.limit {
		r.full = true
		return dst[:mark]
	}
	r.nodes--
	r.shown++
	for i := range n.Children {
		if dst = r.node(dst, &n.Children[i], depth+1); r.full {
			break
		}
	}
	return dst
}

// escapeFrom writes every "<" of dst[from:] as "&lt;", in place: the
// text after each "<" moves right, from the last one back.
func escapeFrom(dst []byte, from int) []byte {
	k := bytes.Count(dst[from:], []byte{'<'})
	if k == 0 {
		return dst
	}
	end := len(dst)
	dst = slices.Grow(dst, 3*k)[:end+3*k]
	w := len(dst) // dst[w:] is written
	for i := end; k > 0; k-- {
		j := from + bytes.LastIndexByte(dst[from:i], '<')
		w -= i - (j + 1)
		copy(dst[w:], dst[j+1:i])
		w -= len("&lt;")
		copy(dst[w:], "&lt;")
		i = j
	}
	return dst
}

// treeSize counts the nodes of the tree under n, n included.
func treeSize(n *wire.Node) int {
	c := 1
	for i := range n.Children {
		c += treeSize(&n.Children[i])
	}
	return c
}

// intFields are the integer members of a node.
const intFields = wire.FieldLevel | wire.FieldColCount | wire.FieldRowCount

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

// EscapeText returns s as the agent writes page text into its blocks:
// every "<" becomes "&lt;", so the text cannot open or close a tag, and
// nothing else changes ("&", ">" and quotes stay as they are, for the
// model to read the text as written; the escaping is not meant to be
// undone). A custom Options.Render that writes page text should pass it
// through EscapeText.
func EscapeText(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		return s
	}
	return string(appendEscaped(make([]byte, 0, escapedLen(s)), s))
}

// appendEscaped appends s with every "<" written as "&lt;".
func appendEscaped(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, "&lt;"...)
		s = s[i+1:]
	}
}

// escapedLen is len(EscapeText(s)).
func escapedLen(s string) int { return len(s) + 3*strings.Count(s, "<") }

// RenderEvent renders a UI event as the <ui_event> block written into the
// context: <ui_event name="NAME">PAYLOAD</ui_event>, where PAYLOAD is the
// event's JSON payload on one line (compacted, otherwise as the client
// sent it) and null when there is none or it is not JSON.
//
// As in Pipecat, except that neither part can open or close a tag: the
// name is escaped as in [EscapeText], with `"` written as "&quot;" too so
// that it stays in its attribute, and every "<" of the payload (which can
// only be inside a JSON string) is written as the JSON escape \u003c,
// which keeps the payload valid JSON of the same value.
func RenderEvent(name string, payload wire.RawJSON) string {
	body := compactJSON(payload)
	var b strings.Builder
	b.Grow(len(uiEventOpen) + len(name) + len(body) + len(uiEventClose) + 8)
	b.WriteString(uiEventOpen)
	for {
		i := strings.IndexAny(name, `<"`)
		if i < 0 {
			b.WriteString(name)
			break
		}
		b.WriteString(name[:i])
		if name[i] == '<' {
			b.WriteString("&lt;")
		} else {
			b.WriteString("&quot;")
		}
		name = name[i+1:]
	}
	b.WriteString("\">")
	for {
		i := bytes.IndexByte(body, '<')
		if i < 0 {
			b.Write(body)
			break
		}
		b.Write(body[:i])
		b.WriteString(`\u003c`)
		body = body[i+1:]
	}
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
// that the conformance bot sends for every snapshot (docs/protocol.md §10,
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
// (docs/protocol.md §10, row 6). A missing payload is sent as null.
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
