package llm

import (
	"slices"
	"sync"

	"github.com/framewire/framewire/frames"
)

// Message roles, as OpenAI Chat Completions names them.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Tool message contents written by the assistant aggregator while a call
// runs and when it ends without a value, as Pipecat writes them.
const (
	ToolInProgress = "IN_PROGRESS"
	ToolCompleted  = "COMPLETED"
	ToolCancelled  = "CANCELLED"
)

// Context is the live conversation: messages, tools and tool choice. It is
// safe for concurrent use; both aggregators of a [Pair] and the
// application share one. Inference never sees the live object: every
// [frames.LLMContext] carries a [Context.Snapshot].
//
// A context is bounded ([Limits], [Context.SetLimits]): past its limits
// the oldest turns go, never the system prompt. The zero value is an
// empty context ready to use, within the default limits.
type Context struct {
	mu         sync.Mutex
	version    uint64
	limits     Limits
	messages   []frames.LLMMessage
	shared     bool // a snapshot aliases messages[:len]: copy before changing an element
	tools      []frames.LLMTool
	toolChoice frames.LLMToolChoice
}

// NewContext returns a context that starts with messages (copied).
func NewContext(messages ...frames.LLMMessage) *Context {
	c := &Context{}
	c.Add(messages...)
	return c
}

// SystemMessage returns a system message with text.
func SystemMessage(text string) frames.LLMMessage {
	return frames.LLMMessage{Role: RoleSystem, Content: text}
}

// DeveloperMessage returns a developer message with text: the
// application's own instructions for the model, which rank with the system
// prompt (OpenAI's instruction hierarchy puts developer above user).
// Untrusted input, such as what a web page shows, belongs in a user
// message instead (the UI agent writes its <ui_state> blocks so).
func DeveloperMessage(text string) frames.LLMMessage {
	return frames.LLMMessage{Role: RoleDeveloper, Content: text}
}

// UserMessage returns a user message with text.
func UserMessage(text string) frames.LLMMessage {
	return frames.LLMMessage{Role: RoleUser, Content: text}
}

// AssistantMessage returns an assistant message with text.
func AssistantMessage(text string) frames.LLMMessage {
	return frames.LLMMessage{Role: RoleAssistant, Content: text}
}

// cloneMessage copies the slices of m so the context never shares backing
// arrays with its caller.
func cloneMessage(m frames.LLMMessage) frames.LLMMessage {
	m.Parts = slices.Clone(m.Parts)
	m.ToolCalls = slices.Clone(m.ToolCalls)
	m.Raw = slices.Clone(m.Raw)
	return m
}

func cloneTool(t frames.LLMTool) frames.LLMTool {
	t.Parameters = slices.Clone(t.Parameters)
	t.Raw = slices.Clone(t.Raw)
	return t
}

// Add appends messages (copied) to the conversation, within the
// context's [Limits].
func (c *Context) Add(messages ...frames.LLMMessage) {
	if len(messages) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range messages {
		m = cloneMessage(m)
		c.limitMessage(&m)
		c.messages = append(c.messages, m)
	}
	c.trimLocked()
	c.version++
}

// SetMessages replaces the conversation with messages (copied), within the
// context's [Limits].
func (c *Context) SetMessages(messages []frames.LLMMessage) {
	next := make([]frames.LLMMessage, len(messages))
	for i, m := range messages {
		next[i] = cloneMessage(m)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range next {
		c.limitMessage(&next[i])
	}
	c.messages, c.shared = next, false
	c.trimLocked()
	c.version++
}

// Transform replaces the conversation with fn's result, within the
// context's [Limits]. fn gets a copy it may change freely, and runs under
// the context's lock: it must not call other methods of c.
func (c *Context) Transform(fn func([]frames.LLMMessage) []frames.LLMMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := make([]frames.LLMMessage, len(c.messages))
	for i, m := range c.messages {
		cur[i] = cloneMessage(m)
	}
	next := fn(cur)
	c.messages = make([]frames.LLMMessage, len(next))
	for i, m := range next {
		c.messages[i] = cloneMessage(m)
		c.limitMessage(&c.messages[i])
	}
	c.shared = false
	c.trimLocked()
	c.version++
}

// Messages returns a copy of the conversation.
func (c *Context) Messages() []frames.LLMMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]frames.LLMMessage, len(c.messages))
	for i, m := range c.messages {
		out[i] = cloneMessage(m)
	}
	return out
}

// Len returns the number of messages.
func (c *Context) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.messages)
}

// SetTools replaces the tools offered to the model (copied). An empty list
// offers none.
func (c *Context) SetTools(tools []frames.LLMTool) {
	next := make([]frames.LLMTool, len(tools))
	for i, t := range tools {
		next[i] = cloneTool(t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools = next
	c.version++
}

// Tools returns a copy of the tools offered to the model.
func (c *Context) Tools() []frames.LLMTool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]frames.LLMTool, len(c.tools))
	for i, t := range c.tools {
		out[i] = cloneTool(t)
	}
	return out
}

// SetToolChoice replaces the tool choice.
func (c *Context) SetToolChoice(choice frames.LLMToolChoice) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.toolChoice = choice
	c.version++
}

// ToolChoice returns the tool choice.
func (c *Context) ToolChoice() frames.LLMToolChoice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.toolChoice
}

// Version returns a number that grows with every change, so a holder of a
// snapshot can tell whether the conversation moved on.
func (c *Context) Version() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Snapshot returns an immutable copy of the conversation as the frame that
// asks for inference. Taking one is cheap: messages are shared with the
// context until the context changes one of them (appending never touches
// what a snapshot sees). Nobody may change the returned frame.
func (c *Context) Snapshot() *frames.LLMContext {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.messages)
	c.shared = true
	return &frames.LLMContext{
		Messages:   c.messages[:n:n],
		Tools:      c.tools[:len(c.tools):len(c.tools)],
		ToolChoice: c.toolChoice,
	}
}

// editLocked returns the message at i for in-place change, copying the
// backing array first when a snapshot shares it. c.mu must be held.
func (c *Context) editLocked(i int) *frames.LLMMessage {
	if c.shared {
		c.messages = slices.Clone(c.messages)
		c.shared = false
	}
	return &c.messages[i]
}

// setToolResult sets the content of the tool message answering id and
// reports whether there was one. The last such message wins.
func (c *Context) setToolResult(id, content string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.messages) - 1; i >= 0; i-- {
		m := &c.messages[i]
		if m.Role == RoleTool && m.ToolCallID == id && len(m.Raw) == 0 {
			if m.Content == content {
				return true
			}
			m = c.editLocked(i)
			m.Content = content
			c.limitMessage(m)
			c.trimLocked()
			c.version++
			return true
		}
	}
	return false
}

// hasToolMessage reports whether the context holds a tool message
// answering id.
func (c *Context) hasToolMessage(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.messages) - 1; i >= 0; i-- {
		if m := &c.messages[i]; m.Role == RoleTool && m.ToolCallID == id {
			return true
		}
	}
	return false
}
