package uiagent

import (
	"encoding/json"
	"fmt"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// The action methods send one UI command each (ui-agent.md §2): an
// rtvi.UICommandFrame pushed downstream from the agent, which the RTVI
// observer sends as ui-command {command, payload}. Payloads are the
// reference's, unset optional fields included as null. They are ordinary
// methods, not tools: call them from tool handlers, event handlers or
// anywhere else, from any goroutine. Commands sent before the task runs
// wait and go out when it sets the agent up; after it ended they are
// dropped. They do not
// check refs (see [Agent.KnownRef]); the client ignores commands whose
// target it cannot find.

// push sends f downstream from the agent.
func (a *Agent) push(f frames.Frame) {
	a.ensure()
	a.out.Push(f, frames.Downstream)
}

// Send sends a built-in command with its full payload (for example
// wire.ScrollTo{Ref: "e5", Behavior: "instant"} or wire.Toast{...}).
func (a *Agent) Send(c wire.Command) {
	a.push(rtvi.NewUICommand(c))
}

// ScrollTo scrolls the element ref into view:
// scroll_to {ref, target_id: null, behavior: null}.
func (a *Agent) ScrollTo(ref string) { a.Send(wire.ScrollTo{Ref: ref}) }

// Highlight briefly highlights the element ref:
// highlight {ref, target_id: null, duration_ms: null}.
func (a *Agent) Highlight(ref string) { a.Send(wire.Highlight{Ref: ref}) }

// SelectText selects the whole text of the element ref:
// select_text {ref, target_id: null, start_offset: null, end_offset: null}.
func (a *Agent) SelectText(ref string) { a.Send(wire.SelectText{Ref: ref}) }

// SelectRange selects the characters [start, end) of the element ref.
func (a *Agent) SelectRange(ref string, start, end int) {
	a.Send(wire.SelectText{Ref: ref, StartOffset: &start, EndOffset: &end})
}

// Click clicks the element ref: click {ref, target_id: null}.
func (a *Agent) Click(ref string) { a.Send(wire.Click{Ref: ref}) }

// SetInputValue replaces the value of the input ref:
// set_input_value {value, ref, target_id: null, replace: true}.
func (a *Agent) SetInputValue(ref, value string) {
	a.Send(wire.SetInputValue{Ref: ref, Value: value})
}

// AppendInputValue appends to the value of the input ref (replace: false).
func (a *Agent) AppendInputValue(ref, value string) {
	a.Send(wire.SetInputValue{Ref: ref, Value: value, Append: true})
}

// Focus focuses the element ref: focus {ref, target_id: null}.
func (a *Agent) Focus(ref string) { a.Send(wire.Focus{Ref: ref}) }

// Toast shows a notification (the app draws it):
// toast {title, subtitle, description, image_url, duration_ms}.
func (a *Agent) Toast(t wire.Toast) { a.Send(t) }

// Navigate asks the app to show view with params (a JSON-encodable value;
// nil sends null): navigate {view, params}.
func (a *Agent) Navigate(view string, params any) error {
	p, err := payloadOf(params, false)
	if err != nil {
		return fmt.Errorf("uiagent: navigate %q: %w", view, err)
	}
	a.Send(wire.Navigate{View: view, Params: p})
	return nil
}

// SendCommand sends an app-defined command (add_note, set_checked, ...).
// payload is an wire.Payload, a json.RawMessage, or any JSON-encodable Go
// value, encoded now; nil sends {} as the reference does.
func (a *Agent) SendCommand(name string, payload any) error {
	if name == "" {
		return fmt.Errorf("uiagent: a command needs a name")
	}
	p, err := payloadOf(payload, true)
	if err != nil {
		return fmt.Errorf("uiagent: command %q: %w", name, err)
	}
	a.push(&rtvi.UICommandFrame{Command: name, Payload: p})
	return nil
}

// payloadOf turns v into a payload fixed at call time: nil gives {} when
// emptyObject is set (nil otherwise), an wire.Payload stays as is, raw
// JSON is checked, anything else is encoded with encoding/json.
func payloadOf(v any, emptyObject bool) (wire.Payload, error) {
	switch p := v.(type) {
	case nil:
		if emptyObject {
			return wire.RawJSON("{}"), nil
		}
		return nil, nil
	case wire.RawJSON:
		if !json.Valid(p) {
			return nil, fmt.Errorf("payload is not valid JSON")
		}
		return p, nil
	case json.RawMessage:
		if !json.Valid(p) {
			return nil, fmt.Errorf("payload is not valid JSON")
		}
		return wire.RawJSON(p), nil
	case wire.Payload:
		return p, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return wire.RawJSON(b), nil
}
