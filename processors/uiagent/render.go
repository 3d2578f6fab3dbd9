package uiagent

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
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
// written as it came, except as [EscapeText] says: every "<" is written as
// "&lt;", and line breaks, tabs and other control characters as "\n",
// "\t", "\u0085" and the like. No tag starts without a "<", so the page
// can neither close the block early nor open a tag of the agent's
// (<ui_state>, <selection>, <ui_event>, or any other a prompt uses, in
// any case or spacing); and no page text ends a line, so every line of
// the tree is one node and the page cannot write a line that reads as a
// node of its own (a name such as `x"` + newline + `- button "Pay"
// [ref=e1]`). The selected text is one line too, between its tags. The
// model, which knows the entity and the escapes, still reads the text as
// it is on the page; "&", ">", quotes and backslashes are left alone. A
// page without "<" or control characters renders byte for byte as in
// Pipecat (within the limits).
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

	dst = r.node(dst, &s.Root, 0)
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
	limit int  // the length dst may reach
	nodes int  // how many more nodes may be shown
	shown int  // nodes shown
	full  bool // a node was left out: nothing more is written
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
		dst = appendEscaped(dst, n.Role)
	}
	if n.Name != "" {
		dst = append(dst, ' ', '"')
		dst = appendEscaped(dst, n.Name)
		dst = append(dst, '"')
	}
	if n.Value != "" {
		dst = append(dst, " = \""...)
		dst = appendEscaped(dst, n.Value)
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
			dst = appendEscaped(dst, st)
			dst = append(dst, ']')
		}
	}
	if n.Ref != "" {
		dst = append(dst, " [ref="...)
		dst = appendEscaped(dst, n.Ref)
		dst = append(dst, ']')
	}
	if len(n.Children) > 0 {
		dst = append(dst, ':')
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
// every character that could end a line or hide in one is written as a
// JSON-style escape: "\n", "\r", "\t", and "\u00XX" or "\uXXXX" for the
// other C0 and C1 controls, DEL, U+2028 and U+2029. The text then stays on
// its line, so it cannot start a line of its own that reads as a node of
// <ui_state>. Nothing else changes ("&", ">", quotes and backslashes stay
// as they are, for the model to read the text as written; the escaping is
// not meant to be undone). A custom Options.Render that writes page text
// should pass it through EscapeText.
func EscapeText(s string) string {
	if plain(s) {
		return s
	}
	return string(appendEscaped(make([]byte, 0, escapedLen(s)), s))
}

// special marks the bytes that may need escaping: "<", the C0 controls
// and DEL, and the first bytes of the C1 controls (U+0080–U+009F, 0xC2)
// and of U+2028 and U+2029 (0xE2). Other characters these lead bytes
// start are written as they came.
var special = func() (t [256]bool) {
	for b := range 0x20 {
		t[b] = true
	}
	t['<'], t[0x7F], t[0xC2], t[0xE2] = true, true, true, true
	return t
}()

// plain reports whether s has no byte that may need escaping (the common
// case: a table look-up per byte).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if special[s[i]] {
			return false
		}
	}
	return true
}

// controlEscapes holds the escapes of the C0 controls, DEL and the C1
// controls, by code point.
var controlEscapes = func() (t [0xA0]string) {
	const hex = "0123456789abcdef"
	for r := range t {
		if r < 0x20 || r >= 0x7F {
			t[r] = `\u00` + string(hex[r>>4]) + string(hex[r&0xF])
		}
	}
	t['\n'], t['\r'], t['\t'] = `\n`, `\r`, `\t`
	return t
}()

// escapeOf returns how the character at the start of s is written and
// its length in s: esc is "" when it is written as it came.
func escapeOf(s string) (esc string, size int) {
	if c := s[0]; c < utf8.RuneSelf {
		if c == '<' {
			return "&lt;", 1
		}
		return controlEscapes[c], 1 // "" for printable ASCII
	}
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case r < 0xA0:
		return controlEscapes[r], n // C1; U+FFFD (invalid UTF-8) is not < 0xA0
	case r == '\u2028':
		return `\u2028`, n
	case r == '\u2029':
		return `\u2029`, n
	}
	return "", n
}

// appendEscaped appends s as [EscapeText] writes it.
func appendEscaped(dst []byte, s string) []byte {
	for {
		i := 0
		for i < len(s) && !special[s[i]] {
			i++
		}
		dst = append(dst, s[:i]...)
		if i == len(s) {
			return dst
		}
		esc, n := escapeOf(s[i:])
		if esc == "" {
			dst = append(dst, s[i:i+n]...)
		} else {
			dst = append(dst, esc...)
		}
		s = s[i+n:]
	}
}

// escapedLen is len(EscapeText(s)).
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if special[s[i]] {
			esc, size := escapeOf(s[i:])
			if esc != "" {
				n += len(esc) - size
			}
			i += size - 1
		}
	}
	return n
}

// RenderEvent renders a UI event as the <ui_event> block written into the
// context: <ui_event name="NAME">PAYLOAD</ui_event>, where PAYLOAD is the
// event's JSON payload on one line (compacted, otherwise as the client
// sent it) and null when there is none or it is not JSON.
//
// As in Pipecat, except that neither part can open or close a tag or
// break the line: the name is escaped as in [EscapeText], with `"`
// written as "&quot;" too so that it stays in its attribute, and every
// "<", C1 control, U+2028 and U+2029 of the payload (which can only be
// inside a JSON string) is written as its JSON escape (\u003c, ...),
// which keeps the payload valid JSON of the same value.
func RenderEvent(name string, payload wire.RawJSON) string {
	body := compactJSON(payload)
	dst := make([]byte, 0, len(uiEventOpen)+len(name)+len(body)+len(uiEventClose)+8)
	dst = append(dst, uiEventOpen...)
	for {
		i := strings.IndexByte(name, '"')
		if i < 0 {
			dst = appendEscaped(dst, name)
			break
		}
		dst = appendEscaped(dst, name[:i])
		dst = append(dst, "&quot;"...)
		name = name[i+1:]
	}
	dst = append(dst, "\">"...)
	for len(body) > 0 {
		i := 0
		for i < len(body) && !special[body[i]] {
			i++
		}
		dst = append(dst, body[:i]...)
		if i == len(body) {
			break
		}
		r, n := utf8.DecodeRune(body[i:])
		if r == '<' || (r >= 0x80 && r < 0xA0) || r == '\u2028' || r == '\u2029' {
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
		} else {
			dst = append(dst, body[i:i+n]...)
		}
		body = body[i+n:]
	}
	dst = append(dst, uiEventClose...)
	return string(dst)
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
// written by an agent: a user message (a developer one, as agents wrote
// them before issue 26) whose whole text is the block. Words the user
// typed in that shape count too; they gain nothing by it, as the agent's
// blocks have the user's own role.
func isUIState(m *frames.LLMMessage) bool {
	return isBlockRole(m) && strings.HasPrefix(m.Content, uiStateOpen) && strings.HasSuffix(m.Content, uiStateClose)
}

// isUIEvent reports whether m is a <ui_event> block written by an agent.
func isUIEvent(m *frames.LLMMessage) bool {
	return isBlockRole(m) && strings.HasPrefix(m.Content, uiEventOpen) && strings.HasSuffix(m.Content, uiEventClose)
}

// isBlockRole reports whether m has the shape of an agent's block: plain
// text in a user (or developer) message.
func isBlockRole(m *frames.LLMMessage) bool {
	return (m.Role == llm.RoleUser || m.Role == llm.RoleDeveloper) && len(m.Parts) == 0 && len(m.ToolCalls) == 0 &&
		len(m.Raw) == 0
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
