package demobrain

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/llm"
)

// Tool names the brain calls.
const (
	// ReplyTool is the UI agent's bundled reply tool (ui-agent.md §3).
	ReplyTool = "reply"
	// ResearchTool starts a task group of simulated workers (the
	// async-tasks scenario of ui-agent.md §7).
	ResearchTool = "research"
)

// ModelName is what the brain reports as its model in metrics and logs.
const ModelName = "framewire-demo-brain"

// Reply is the arguments of the reply tool, as a model writes them: the
// spoken answer and the optional UI actions, unused ones left out.
type Reply struct {
	Answer     string   `json:"answer"`
	ScrollTo   string   `json:"scroll_to,omitempty"`
	Highlight  []string `json:"highlight,omitempty"`
	SelectText string   `json:"select_text,omitempty"`
	Fills      []Fill   `json:"fills,omitempty"`
	Click      []string `json:"click,omitempty"`
}

// Fill is one entry of the reply tool's fills: write Value into the form
// control Ref.
type Fill struct {
	Ref   string `json:"ref"`
	Value string `json:"value"`
}

// Research is the arguments of the research tool: what to look into and
// the acknowledgement to speak while the task group runs.
type Research struct {
	Query  string `json:"query"`
	Answer string `json:"answer"`
}

// Call is the brain's decision: one tool call (Tool and Args), or plain
// text when the tool it wanted is not offered.
type Call struct {
	Tool string
	// Args is a Reply or a Research.
	Args any
}

// Answer returns the text the call speaks.
func (c Call) Answer() string {
	switch a := c.Args.(type) {
	case Reply:
		return a.Answer
	case Research:
		return a.Answer
	}
	return ""
}

// Brain is the offline provider. The zero value is ready to use; it is
// safe for concurrent use.
type Brain struct {
	calls atomic.Uint64
}

// New returns a brain.
func New() *Brain { return &Brain{} }

// Model implements frames.Modeler.
func (b *Brain) Model() string { return ModelName }

// Stream implements [llm.Provider]. It answers a conversation whose last
// message is the user's (a tool result or an assistant message gets an
// empty response, so a re-run after a tool ends the turn) with one tool
// call, or with text when the conversation offers no reply tool.
func (b *Brain) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if ctx.Err() != nil {
			return
		}
		utterance, st, ok := Read(req)
		if !ok {
			return
		}
		offered := map[string]bool{}
		for _, t := range req.Tools {
			offered[t.Name] = true
		}
		call := Decide(utterance, st, offered)
		if call.Tool == "" {
			for _, w := range strings.SplitAfter(call.Answer(), " ") {
				if ctx.Err() != nil || !yield(llm.TextEvent(w), nil) {
					return
				}
			}
			return
		}
		args, err := json.Marshal(call.Args)
		if err != nil {
			yield(llm.Event{}, fmt.Errorf("demobrain: encoding %s arguments: %w", call.Tool, err))
			return
		}
		id := fmt.Sprintf("call_demo_%d", b.calls.Add(1))
		yield(llm.ToolCallEvent(frames.LLMToolCall{ID: id, Name: call.Tool, Arguments: string(args)}), nil)
	}
}

// Read finds what the brain answers in a conversation: the text of the
// last message when it is the user's, and the latest <ui_state> block
// (nil when there is none). It reports false when the last message is not
// the user's and there is nothing to answer.
func Read(req *frames.LLMContext) (utterance string, st *UIState, ok bool) {
	last := -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == llm.RoleUser {
			last = i
			break
		}
		if m.Role == llm.RoleAssistant || m.Role == llm.RoleTool {
			return "", nil, false
		}
	}
	if last < 0 {
		return "", nil, false
	}
	utterance = messageText(req.Messages[last])
	// The UI agent injects the block right after the query (pipecat) or
	// right before it (legacy): take the newest one anywhere.
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == llm.RoleAssistant || m.Role == llm.RoleTool {
			continue
		}
		if t := messageText(m); strings.Contains(t, "<ui_state>") {
			if s, found := ParseUIState(t); found {
				st = s
				break
			}
		}
	}
	// A user message may carry the block itself; keep only the words.
	if i := strings.Index(utterance, "<ui_state>"); i >= 0 {
		utterance = strings.TrimSpace(utterance[:i])
	}
	return utterance, st, strings.TrimSpace(utterance) != ""
}

func messageText(m frames.LLMMessage) string {
	if m.Content != "" || len(m.Parts) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Text != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
