package llm

import (
	"strconv"
	"unicode/utf8"

	"github.com/framewire/framewire/frames"
)

// Default limits of a [Context] ([Limits]).
const (
	// DefaultMaxBytes is 256 KiB of text, about 64,000 tokens: within the
	// context window of the models framewire talks to, and small enough
	// that a session's conversation stays a small part of its memory.
	DefaultMaxBytes = 256 << 10
	// DefaultMaxMessages is more messages than a long voice session
	// reaches in an hour.
	DefaultMaxMessages = 1024
	// DefaultMaxMessageBytes holds a default <ui_state> block (60,000
	// bytes) whole.
	DefaultMaxMessageBytes = 64 << 10
)

// Limits bound the size of a [Context], so that a client that talks
// without end (or sends text that never runs the model: RTVI send-text
// with run_immediately false) cannot grow a session's memory, or its
// requests to the model, without bound. The zero value has the defaults.
//
// The policy, applied after every change to the context:
//
//   - A message longer than MaxMessageBytes is cut to that length: its
//     text (Content, then its text parts) ends with the marker
//     "[… N bytes cut]". System and developer messages, which the
//     application writes, are never cut; nor are tool-call arguments and
//     raw messages, which would no longer parse.
//   - While the context holds more than MaxMessages messages or more than
//     MaxBytes bytes, the oldest messages go, whole: a function call goes
//     with its results, so no tool result is left without its call (or a
//     call without its result). Then, so that the conversation still
//     starts as the providers want it to, with a user message, whatever
//     comes before the oldest remaining user message goes too.
//   - Never dropped: the preamble (the leading run of system and developer
//     messages: the system prompt and the application's instructions),
//     every system message, the newest user message and the last message.
//     When those alone pass a limit, the context stays over it.
//
// Sizes count the bytes of text: contents, text parts, names, ids,
// tool-call arguments, image URLs, audio data and raw messages.
type Limits struct {
	// MaxBytes bounds the whole conversation. 0 means [DefaultMaxBytes];
	// negative means no limit.
	MaxBytes int
	// MaxMessages bounds the number of messages. 0 means
	// [DefaultMaxMessages]; negative means no limit.
	MaxMessages int
	// MaxMessageBytes bounds one message. 0 means
	// [DefaultMaxMessageBytes]; negative means no limit; a positive value
	// below 256 counts as 256.
	MaxMessageBytes int
}

// minMessageBytes is the smallest message limit honoured: room for the
// marker and some text.
const minMessageBytes = 256

// effective returns l with its defaults and "no limit" (math.MaxInt)
// filled in.
func (l Limits) effective() Limits {
	pick := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return int(^uint(0) >> 1)
		}
		return v
	}
	return Limits{
		MaxBytes:        pick(l.MaxBytes, DefaultMaxBytes),
		MaxMessages:     pick(l.MaxMessages, DefaultMaxMessages),
		MaxMessageBytes: max(pick(l.MaxMessageBytes, DefaultMaxMessageBytes), minMessageBytes),
	}
}

// SetLimits replaces the context's limits and applies them at once.
func (c *Context) SetLimits(l Limits) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limits = l
	limit := l.effective().MaxMessageBytes
	for i := range c.messages {
		if m := &c.messages[i]; messageSize(m) > limit && cuttable(m) {
			cutMessage(c.editLocked(i), limit)
		}
	}
	c.trimLocked()
	c.version++
}

// Limits returns the limits in force: the defaults filled in, and
// math.MaxInt where there is none.
func (c *Context) Limits() Limits {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limits.effective()
}

// messageSize is the size of m as [Limits] counts it.
func messageSize(m *frames.LLMMessage) int {
	n := len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.Raw)
	for i := range m.Parts {
		p := &m.Parts[i]
		n += len(p.Type) + len(p.Text) + len(p.ImageURL) + len(p.Detail) + len(p.AudioData) + len(p.AudioFormat)
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return n
}

// cuttable reports whether the text of m may be cut: not the
// application's own instructions.
func cuttable(m *frames.LLMMessage) bool {
	return m.Role != RoleSystem && m.Role != RoleDeveloper && len(m.Raw) == 0
}

// limitMessage cuts m (a copy the context owns) to the message limit in
// force, when it may be cut.
func (c *Context) limitMessage(m *frames.LLMMessage) {
	if limit := c.limits.effective().MaxMessageBytes; messageSize(m) > limit && cuttable(m) {
		cutMessage(m, limit)
	}
}

// cutMessage cuts the text of m (Content, then text parts, from the end)
// until m is at most limit bytes, marker included, or no text is left.
func cutMessage(m *frames.LLMMessage, limit int) {
	over := messageSize(m) - limit
	if over <= 0 {
		return
	}
	cut := func(s string) string {
		if over <= 0 || s == "" {
			return s
		}
		t := CutText(s, max(len(s)-over-markerLen(len(s)), 0))
		if len(t) >= len(s) {
			return s // shorter than the marker: cutting does not help
		}
		over -= len(s) - len(t)
		return t
	}
	m.Content = cut(m.Content)
	for i := len(m.Parts) - 1; i >= 0 && over > 0; i-- {
		if p := &m.Parts[i]; p.Type == "" || p.Type == "text" {
			p.Text = cut(p.Text)
		}
	}
}

// CutText returns s cut to at most keep bytes (at a character boundary),
// followed by the marker "\n[… N bytes cut]" that says how much was left
// out; s itself when it is no longer than keep. The context cuts long
// messages with it, and the user aggregator a user's turn that runs on.
func CutText(s string, keep int) string {
	if len(s) <= keep {
		return s
	}
	keep = max(keep, 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + cutMarker(len(s)-keep)
}

func cutMarker(n int) string { return "\n[… " + strconv.Itoa(n) + " bytes cut]" }

// markerLen is an upper bound of the marker's length when cutting some of
// n bytes.
func markerLen(n int) int { return len(cutMarker(n)) }

// preambleLen is the length of the leading run of system and developer
// messages.
func preambleLen(msgs []frames.LLMMessage) int {
	n := 0
	for n < len(msgs) && (msgs[n].Role == RoleSystem || msgs[n].Role == RoleDeveloper) {
		n++
	}
	return n
}

// trimLocked drops the oldest messages while the context is over its
// limits, as [Limits] says. c.mu must be held.
func (c *Context) trimLocked() {
	l := c.limits.effective()
	msgs := c.messages
	total := 0
	for i := range msgs {
		total += messageSize(&msgs[i])
	}
	if len(msgs) <= l.MaxMessages && total <= l.MaxBytes {
		return
	}
	pre := preambleLen(msgs)
	lastUser := -1
	for i := len(msgs) - 1; i >= pre; i-- {
		if msgs[i].Role == RoleUser {
			lastUser = i
			break
		}
	}
	drop := make([]bool, len(msgs))
	count := len(msgs)
	// unit marks the messages that go with msgs[i]: a call's results, or
	// the call of a result; it reports false when one of them must stay.
	unit := func(i int) (members []int, ok bool) {
		members = append(members, i)
		switch m := &msgs[i]; {
		case len(m.ToolCalls) > 0:
			for j := i + 1; j < len(msgs); j++ {
				if msgs[j].Role == RoleTool && callsInclude(m, msgs[j].ToolCallID) {
					members = append(members, j)
				}
			}
		case m.Role == RoleTool:
			return nil, false // goes with its call (an orphan is dropped below)
		}
		for _, j := range members {
			if j == lastUser || j == len(msgs)-1 || msgs[j].Role == RoleSystem {
				return nil, false
			}
		}
		return members, true
	}
	dropUnit := func(members []int) {
		for _, j := range members {
			if !drop[j] {
				drop[j] = true
				count--
				total -= messageSize(&msgs[j])
			}
		}
	}
	over := func() bool { return count > l.MaxMessages || total > l.MaxBytes }
	for i := pre; i < len(msgs) && over(); i++ {
		if drop[i] || msgs[i].Role == RoleSystem {
			continue
		}
		if msgs[i].Role == RoleTool && !hasCallBefore(msgs, i, drop) {
			dropUnit([]int{i}) // a result whose call is gone already
			continue
		}
		members, ok := unit(i)
		if !ok {
			if msgs[i].Role == RoleTool {
				continue // it went, or goes, with its call
			}
			continue // the newest user message or the last one (or with them)
		}
		dropUnit(members)
	}
	// The conversation starts with a user message: what is left before
	// the oldest remaining one goes too (its calls with their results).
	if count < len(msgs) {
		for i := pre; i < len(msgs); i++ {
			if drop[i] || msgs[i].Role == RoleSystem {
				continue
			}
			if msgs[i].Role == RoleUser {
				break
			}
			members, ok := unit(i)
			if !ok {
				if msgs[i].Role == RoleTool && !hasCallBefore(msgs, i, drop) {
					dropUnit([]int{i})
					continue
				}
				break
			}
			dropUnit(members)
		}
	}
	if count == len(msgs) {
		return
	}
	next := make([]frames.LLMMessage, 0, count)
	for i := range msgs {
		if !drop[i] {
			next = append(next, msgs[i])
		}
	}
	c.messages, c.shared = next, false
}

// callsInclude reports whether the assistant message m made the call id.
func callsInclude(m *frames.LLMMessage, id string) bool {
	for i := range m.ToolCalls {
		if m.ToolCalls[i].ID == id {
			return true
		}
	}
	return false
}

// hasCallBefore reports whether the tool message msgs[i] answers a call
// that is still in the context before it.
func hasCallBefore(msgs []frames.LLMMessage, i int, drop []bool) bool {
	for j := i - 1; j >= 0; j-- {
		if !drop[j] && callsInclude(&msgs[j], msgs[i].ToolCallID) {
			return true
		}
	}
	return false
}
