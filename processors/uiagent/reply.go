package uiagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// ReplyToolName is the name of the bundled reply tool.
const ReplyToolName = "reply"

// Reply is one call of the reply tool, after the guards: the spoken answer
// and the actions, each already checked for type (see [ParseReply]).
type Reply struct {
	// Answer is what the user hears; "" ends the turn silently.
	Answer string
	// ScrollTo is the ref to scroll into view first; "" for none.
	ScrollTo string
	// Highlight are refs to pulse, in order.
	Highlight []string
	// SelectText is the ref whose text to select; "" for none.
	SelectText string
	// Fills are values to write into inputs, in order.
	Fills []Fill
	// Click are refs to click, in order.
	Click []string
}

// Fill writes Value into the input Ref (replacing what it holds).
type Fill struct {
	Ref   string `json:"ref"`
	Value string `json:"value"`
}

// ErrNoAnswerArg is returned by [ParseReply] when the arguments have no
// string answer (or are not a JSON object): the call cannot end the turn,
// so nothing is done and the model is asked to call again.
var ErrNoAnswerArg = errors.New(`reply needs "answer", a string`)

// ParseReply decodes the arguments of a reply call the way the tool
// guards them (the LLM-input boundary): answer must be a string; scroll_to
// and select_text take a string (a list gives its first string); highlight
// and click take a list of strings, and a bare string counts as a list of
// one; fills take a list of {ref, value} objects (a bare object counts as
// a list of one) where value may be a string, number or boolean and an
// empty value clears the field. Anything else is dropped, and each drop is
// described in ignored, for the tool result. Refs are trimmed; empty refs
// are dropped. The error is [ErrNoAnswerArg] (wrapped) when the call must
// be refused as a whole.
func ParseReply(args []byte) (r Reply, ignored []string, err error) {
	var fields map[string]json.RawMessage
	if len(strings.TrimSpace(string(args))) == 0 {
		args = []byte("{}")
	}
	if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
		return Reply{}, nil, fmt.Errorf("%w: the arguments are not a JSON object", ErrNoAnswerArg)
	}
	raw, ok := fields["answer"]
	if !ok {
		return Reply{}, nil, fmt.Errorf("%w: it is missing", ErrNoAnswerArg)
	}
	if err := json.Unmarshal(raw, &r.Answer); err != nil || isNull(raw) {
		return Reply{}, nil, fmt.Errorf("%w: got %s", ErrNoAnswerArg, kindOf(raw))
	}
	drop := func(format string, a ...any) { ignored = append(ignored, fmt.Sprintf(format, a...)) }
	r.ScrollTo = oneRef(fields, "scroll_to", drop)
	r.Highlight = refList(fields, "highlight", drop)
	r.SelectText = oneRef(fields, "select_text", drop)
	r.Fills = fillList(fields, drop)
	r.Click = refList(fields, "click", drop)
	return r, ignored, nil
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// kindOf names the JSON type of raw, for messages.
func kindOf(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "nothing"
	}
	switch s[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// oneRef reads a single-ref field: a string, or the first string of a list.
func oneRef(fields map[string]json.RawMessage, key string, drop func(string, ...any)) string {
	raw, ok := fields[key]
	if !ok || isNull(raw) {
		return ""
	}
	var v any
	_ = json.Unmarshal(raw, &v) // the object decoded, so every member is valid JSON
	switch v := v.(type) {
	case string:
		if ref := strings.TrimSpace(v); ref != "" {
			return ref
		}
		return ""
	case []any:
		for i, e := range v {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				if i+1 < len(v) {
					drop("%s: takes one ref; used the first of %d", key, len(v))
				}
				return strings.TrimSpace(s)
			}
		}
	}
	drop("%s: %s is not a ref", key, kindOf(raw))
	return ""
}

// refList reads a list-of-refs field; a bare string is a list of one.
func refList(fields map[string]json.RawMessage, key string, drop func(string, ...any)) []string {
	raw, ok := fields[key]
	if !ok || isNull(raw) {
		return nil
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	switch v := v.(type) {
	case string:
		if ref := strings.TrimSpace(v); ref != "" {
			return []string{ref}
		}
		return nil
	case []any:
		var out []string
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				drop("%s[%d]: not a ref", key, i)
				continue
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	drop("%s: %s is not a list of refs", key, kindOf(raw))
	return nil
}

// fillList reads fills: a list of {ref, value}; a bare object is a list of
// one.
func fillList(fields map[string]json.RawMessage, drop func(string, ...any)) []Fill {
	raw, ok := fields["fills"]
	if !ok || isNull(raw) {
		return nil
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	var entries []any
	switch v := v.(type) {
	case []any:
		entries = v
	case map[string]any:
		entries = []any{v}
	default:
		drop("fills: %s is not a list of {ref, value}", kindOf(raw))
		return nil
	}
	var out []Fill
	for i, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			drop("fills[%d]: not a {ref, value} object", i)
			continue
		}
		ref, _ := m["ref"].(string)
		if ref = strings.TrimSpace(ref); ref == "" {
			drop("fills[%d]: no ref", i)
			continue
		}
		var value string
		switch x := m["value"].(type) {
		case string:
			value = x
		case float64:
			value = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			value = strconv.FormatBool(x)
		case nil:
			drop("fills[%d]: no value for %s", i, ref)
			continue
		default:
			drop("fills[%d]: the value for %s is not text", i, ref)
			continue
		}
		out = append(out, Fill{Ref: ref, Value: value})
	}
	return out
}

// replySchema is the JSON Schema of the reply tool's arguments. Unlike
// Pipecat's, fills items have a real schema (ref and value required).
var replySchema = json.RawMessage(`{"type":"object","properties":{` +
	`"answer":{"type":"string","description":` + strconv.Quote(descAnswer) + `},` +
	`"scroll_to":{"anyOf":[{"type":"string"},{"type":"null"}],"description":` + strconv.Quote(descScrollTo) + `},` +
	`"highlight":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}],"description":` + strconv.Quote(descHighlight) + `},` +
	`"select_text":{"anyOf":[{"type":"string"},{"type":"null"}],"description":` + strconv.Quote(descSelectText) + `},` +
	`"fills":{"anyOf":[{"type":"array","items":{"type":"object","properties":{"ref":{"type":"string"},"value":{"type":"string"}},"required":["ref","value"],"additionalProperties":false}},{"type":"null"}],"description":` + strconv.Quote(descFills) + `},` +
	`"click":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}],"description":` + strconv.Quote(descClick) + `}` +
	`},"required":["answer"]}`)

// ReplyTool returns the bundled reply tool (ui-agent.md §3): one call per
// turn carries the spoken answer and every action. Register it with the
// LLM service and offer it in the context:
//
//	svc.Register(agent.ReplyTool())
//	conv.SetTools(llm.Tools(agent.ReplyTool()))
//
// A call runs the guards of [ParseReply], sends the actions in the fixed
// order (scroll_to, highlight, select_text, fills, click) skipping refs
// that are not in the current snapshot, then completes the turn with the
// answer ([Agent.Respond]). A call without an answer does nothing and asks
// the model to call again. The tool result lists skipped refs and dropped
// entries, if any.
func (a *Agent) ReplyTool() llm.Function {
	return llm.Function{
		Name:        ReplyToolName,
		Description: ReplyDescription,
		Parameters:  replySchema,
		Handler:     a.handleReply,
	}
}

func (a *Agent) handleReply(_ context.Context, call llm.FunctionCallParams) error {
	r, ignored, err := ParseReply(call.Arguments)
	if err != nil {
		a.clientLog().Info("reply refused", zapError(err))
		return call.Result(llm.ErrorResult{Error: err.Error() + ". Nothing was done; call reply again with an answer."})
	}
	rep := a.Act(r)
	rep.Ignored = ignored
	return a.respond(call, r.Answer, rep)
}

// Report says what [Agent.Act] did with a reply's actions.
type Report struct {
	// Sent is the number of UI commands sent.
	Sent int
	// SkippedRefs are the refs not found in the current snapshot, each
	// once, in order; nothing was sent for them.
	SkippedRefs []string
	// Ignored describes entries the guards dropped (see [ParseReply]).
	Ignored []string
}

// Act sends the actions of r as UI commands in the fixed order: scroll_to,
// each highlight, select_text (the whole element), each fill (replacing
// the value), each click. Refs not in the current snapshot are skipped and
// reported (unless Options.NoRefCheck). Use it in a hand-rolled reply tool;
// the answer is left to [Agent.Respond].
func (a *Agent) Act(r Reply) Report {
	cmds, skipped := a.plan(r)
	for _, c := range cmds {
		a.Send(c)
	}
	return Report{Sent: len(cmds), SkippedRefs: skipped}
}

// plan returns the commands of r in dispatch order and the unknown refs.
func (a *Agent) plan(r Reply) (cmds []wire.Command, skipped []string) {
	known := a.refChecker()
	check := func(ref string) bool {
		if known(ref) {
			return true
		}
		for _, s := range skipped {
			if s == ref {
				return false
			}
		}
		skipped = append(skipped, ref)
		return false
	}
	if r.ScrollTo != "" && check(r.ScrollTo) {
		cmds = append(cmds, wire.ScrollTo{Ref: r.ScrollTo})
	}
	for _, ref := range r.Highlight {
		if check(ref) {
			cmds = append(cmds, wire.Highlight{Ref: ref})
		}
	}
	if r.SelectText != "" && check(r.SelectText) {
		cmds = append(cmds, wire.SelectText{Ref: r.SelectText})
	}
	for _, f := range r.Fills {
		if check(f.Ref) {
			cmds = append(cmds, wire.SetInputValue{Ref: f.Ref, Value: f.Value})
		}
	}
	for _, ref := range r.Click {
		if check(ref) {
			cmds = append(cmds, wire.Click{Ref: ref})
		}
	}
	return cmds, skipped
}

// refChecker returns the test for refs: present in the current snapshot
// and not a truncation placeholder ("e12.more" resolves to nothing on the
// client).
func (a *Agent) refChecker() func(string) bool {
	if a.opts.NoRefCheck {
		return func(string) bool { return true }
	}
	s := a.snap.Load()
	return func(ref string) bool { return knownRef(s, ref) }
}

func knownRef(s *wire.Snapshot, ref string) bool {
	return s != nil && ref != "" && !strings.HasSuffix(ref, ".more") && s.Find(ref) != nil
}

// KnownRef reports whether ref names an element of the current snapshot
// that a command can reach, for tools that check refs themselves.
func (a *Agent) KnownRef(ref string) bool { return knownRef(a.snap.Load(), ref) }

// replyResult is the tool result of reply when there is something to say.
type replyResult struct {
	// Answer is set in AnswerPhrase mode: the model phrases it.
	Answer      string   `json:"answer,omitempty"`
	SkippedRefs []string `json:"skipped_refs,omitempty"`
	Ignored     []string `json:"ignored,omitempty"`
	Note        string   `json:"note,omitempty"`
}

// Outcome implements frames.Outcomer: the reply went out, less the refs it
// skipped.
func (r replyResult) Outcome() (ok bool, skipped []string) { return true, r.SkippedRefs }

func (r replyResult) empty() bool {
	return r.Answer == "" && len(r.SkippedRefs) == 0 && len(r.Ignored) == 0 && r.Note == ""
}

const (
	noteSkipped  = "The skipped refs are not on the current screen; nothing was done for them."
	noteAnswered = "This turn was already answered; this answer was not delivered."
)
