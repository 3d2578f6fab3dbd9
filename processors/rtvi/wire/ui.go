package wire

// This file holds the server-to-client models of the UI Agent Protocol
// (docs/protocol.md §8): ui-command with the built-in
// command payloads, and the task (job-group) lifecycle envelopes in both
// vocabularies.

// Vocabulary selects the names of the task lifecycle on the wire. RTVI
// 1.3.0 clients (client-js 1.9.x) use the task names; 1.4.0 and later use
// the job-group names. Inside framewire the 1.3.0 names are used.
type Vocabulary uint8

const (
	// VocabularyJobGroup is ui-job-group / ui-cancel-job-group, job_id,
	// workers, worker_name, job_update, job_completed (RTVI 1.4.0+).
	VocabularyJobGroup Vocabulary = iota
	// VocabularyTask is ui-task / ui-cancel-task, task_id, agents,
	// agent_name, task_update, task_completed (RTVI 1.3.0).
	VocabularyTask
)

// String returns "job-group" or "task".
func (v Vocabulary) String() string {
	if v == VocabularyTask {
		return "task"
	}
	return "job-group"
}

// MessageType returns the lifecycle message type: ui-job-group or ui-task.
func (v Vocabulary) MessageType() string {
	if v == VocabularyTask {
		return TypeUITask
	}
	return TypeUIJobGroup
}

// CancelType returns the cancel message type: ui-cancel-job-group or
// ui-cancel-task.
func (v Vocabulary) CancelType() string {
	if v == VocabularyTask {
		return TypeUICancelTask
	}
	return TypeUICancelJobGroup
}

func (v Vocabulary) idKey() string {
	if v == VocabularyTask {
		return "task_id"
	}
	return "job_id"
}

func (v Vocabulary) workersKey() string {
	if v == VocabularyTask {
		return "agents"
	}
	return "workers"
}

func (v Vocabulary) workerKey() string {
	if v == VocabularyTask {
		return "agent_name"
	}
	return "worker_name"
}

// TaskStatus is the final status of one worker (agent) of a task group.
type TaskStatus string

// Task statuses. The client also knows "running", but only as a local state.
const (
	StatusCompleted TaskStatus = "completed"
	StatusCancelled TaskStatus = "cancelled"
	StatusFailed    TaskStatus = "failed"
	StatusError     TaskStatus = "error"
)

// Kinds of task lifecycle envelopes (the "kind" discriminator).
const (
	KindGroupStarted   = "group_started"
	KindGroupCompleted = "group_completed"
	KindTaskUpdate     = "task_update"    // job_update in the job-group vocabulary
	KindTaskCompleted  = "task_completed" // job_completed in the job-group vocabulary
	KindJobUpdate      = "job_update"
	KindJobCompleted   = "job_completed"
)

// TaskEvent is one envelope of the task lifecycle: [GroupStarted], then
// any [TaskUpdate]s, one [TaskCompleted] per worker, then
// [GroupCompleted]. It is the payload of a [UITaskFrame].
type TaskEvent interface {
	// Kind returns the envelope kind in vocabulary v.
	Kind(v Vocabulary) string
	// appendTask appends the envelope's data object in vocabulary v.
	appendTask(dst []byte, v Vocabulary) []byte
}

// GroupStarted opens a task group: sent when work is dispatched.
type GroupStarted struct {
	// TaskID identifies the group (job_id / task_id).
	TaskID string
	// Agents are the workers, in dispatch order (workers / agents). It is
	// always sent as an array, also when empty.
	Agents []string
	// Label is shown on the client's card; omitted when empty.
	Label string
	// Cancellable says whether the client may cancel the group. Python's
	// default is true; set it explicitly.
	Cancellable bool
	// At is the time in epoch milliseconds.
	At int64
}

// TaskUpdate forwards a progress update from one worker.
type TaskUpdate struct {
	TaskID string
	// AgentName is the worker (worker_name / agent_name).
	AgentName string
	// Data is the worker's update, sent verbatim; omitted when nil.
	Data Payload
	At   int64
}

// TaskCompleted reports that one worker finished.
type TaskCompleted struct {
	TaskID    string
	AgentName string
	Status    TaskStatus
	// Response is the worker's response, sent verbatim; omitted when nil
	// (always the case for cancelled workers).
	Response Payload
	At       int64
}

// GroupCompleted closes a task group.
type GroupCompleted struct {
	TaskID string
	At     int64
}

// Kind implements [TaskEvent].
func (GroupStarted) Kind(Vocabulary) string { return KindGroupStarted }

// Kind implements [TaskEvent].
func (GroupCompleted) Kind(Vocabulary) string { return KindGroupCompleted }

// Kind implements [TaskEvent].
func (TaskUpdate) Kind(v Vocabulary) string {
	if v == VocabularyTask {
		return KindTaskUpdate
	}
	return KindJobUpdate
}

// Kind implements [TaskEvent].
func (TaskCompleted) Kind(v Vocabulary) string {
	if v == VocabularyTask {
		return KindTaskCompleted
	}
	return KindJobCompleted
}

func appendTaskHead(dst []byte, kind string, v Vocabulary, id string) []byte {
	dst = appendStringField(append(dst, '{'), "kind", kind, true)
	return appendStringField(dst, v.idKey(), id, false)
}

func (e GroupStarted) appendTask(dst []byte, v Vocabulary) []byte {
	dst = appendTaskHead(dst, e.Kind(v), v, e.TaskID)
	dst = append(appendKey(dst, v.workersKey(), false), '[')
	for i, a := range e.Agents {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, a)
	}
	dst = append(dst, ']')
	if e.Label != "" {
		dst = appendStringField(dst, "label", e.Label, false)
	}
	dst = appendBool(appendKey(dst, "cancellable", false), e.Cancellable)
	dst = appendInt(appendKey(dst, "at", false), e.At)
	return append(dst, '}')
}

func (e TaskUpdate) appendTask(dst []byte, v Vocabulary) []byte {
	dst = appendTaskHead(dst, e.Kind(v), v, e.TaskID)
	dst = appendStringField(dst, v.workerKey(), e.AgentName, false)
	if Present(e.Data) {
		dst = e.Data.AppendJSON(appendKey(dst, "data", false))
	}
	dst = appendInt(appendKey(dst, "at", false), e.At)
	return append(dst, '}')
}

func (e TaskCompleted) appendTask(dst []byte, v Vocabulary) []byte {
	dst = appendTaskHead(dst, e.Kind(v), v, e.TaskID)
	dst = appendStringField(dst, v.workerKey(), e.AgentName, false)
	dst = appendStringField(dst, "status", string(e.Status), false)
	if Present(e.Response) {
		dst = e.Response.AppendJSON(appendKey(dst, "response", false))
	}
	dst = appendInt(appendKey(dst, "at", false), e.At)
	return append(dst, '}')
}

func (e GroupCompleted) appendTask(dst []byte, v Vocabulary) []byte {
	dst = appendTaskHead(dst, e.Kind(v), v, e.TaskID)
	dst = appendInt(appendKey(dst, "at", false), e.At)
	return append(dst, '}')
}

// UITask is the data of ui-job-group / ui-task: one lifecycle envelope
// in one vocabulary. Build the message with [Vocabulary.MessageType].
type UITask struct {
	Event      TaskEvent
	Vocabulary Vocabulary
}

// AppendJSON implements [Payload].
func (d UITask) AppendJSON(dst []byte) []byte {
	if d.Event == nil {
		return append(dst, "null"...)
	}
	return d.Event.appendTask(dst, d.Vocabulary)
}

// TaskMessage returns the ui-job-group (or ui-task) message for e in
// vocabulary v.
func TaskMessage(e TaskEvent, v Vocabulary) Message {
	return Message{Type: v.MessageType(), Data: UITask{Event: e, Vocabulary: v}}
}

// UICommand is the data of ui-command.
type UICommand struct {
	// Command is the command name, matched exactly by client handlers.
	Command string
	// Payload is the command's payload, opaque to the protocol; omitted
	// when nil.
	Payload Payload
}

// AppendJSON implements [Payload].
func (d UICommand) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "command", d.Command, true)
	if Present(d.Payload) {
		dst = d.Payload.AppendJSON(appendKey(dst, "payload", false))
	}
	return append(dst, '}')
}

// Built-in command names (ui-agent.md §2).
const (
	CommandToast         = "toast"
	CommandNavigate      = "navigate"
	CommandScrollTo      = "scroll_to"
	CommandHighlight     = "highlight"
	CommandFocus         = "focus"
	CommandClick         = "click"
	CommandSetInputValue = "set_input_value"
	CommandSelectText    = "select_text"
)

// Command is a built-in command payload: it knows its command name.
type Command interface {
	Payload
	// CommandName returns the ui-command name, for example "scroll_to".
	CommandName() string
}

// The built-in payloads encode like Python's model_dump(): every field is
// present and unset optional fields are null (the client treats null and
// absent alike). Targeted commands take a Ref from the snapshot or, as a
// fallback, a TargetID for document.getElementById.

// Toast shows a notification (no default client handler; the app draws it).
type Toast struct {
	Title       string
	Subtitle    string
	Description string
	ImageURL    string
	// DurationMS is how long to show it; 0 sends null (client default).
	DurationMS int
}

// Navigate asks the app to show a view.
type Navigate struct {
	View string
	// Params are view parameters (an object); nil sends null.
	Params Payload
}

// ScrollTo scrolls an element into view.
type ScrollTo struct {
	Ref, TargetID string
	// Behavior is "smooth" or "instant"; empty sends null (client: smooth).
	Behavior string
}

// Highlight briefly highlights an element.
type Highlight struct {
	Ref, TargetID string
	// DurationMS defaults to 1500 on the client; 0 sends null.
	DurationMS int
}

// Focus focuses an element.
type Focus struct{ Ref, TargetID string }

// Click clicks an element (ignored by the client when it is disabled).
type Click struct{ Ref, TargetID string }

// SetInputValue writes a form control's value.
type SetInputValue struct {
	Value         string
	Ref, TargetID string
	// Append adds Value to the current value; the zero value replaces it
	// (wire: replace, default true).
	Append bool
}

// SelectText selects text in an element; without offsets the whole
// element is selected. EndOffset is exclusive.
type SelectText struct {
	Ref, TargetID          string
	StartOffset, EndOffset *int
}

// CommandName implements [Command].
func (Toast) CommandName() string { return CommandToast }

// CommandName implements [Command].
func (Navigate) CommandName() string { return CommandNavigate }

// CommandName implements [Command].
func (ScrollTo) CommandName() string { return CommandScrollTo }

// CommandName implements [Command].
func (Highlight) CommandName() string { return CommandHighlight }

// CommandName implements [Command].
func (Focus) CommandName() string { return CommandFocus }

// CommandName implements [Command].
func (Click) CommandName() string { return CommandClick }

// CommandName implements [Command].
func (SetInputValue) CommandName() string { return CommandSetInputValue }

// CommandName implements [Command].
func (SelectText) CommandName() string { return CommandSelectText }

// appendNullableString appends key:"v", or key:null when v is empty.
func appendNullableString(dst []byte, key, v string, first bool) []byte {
	if v == "" {
		return append(appendKey(dst, key, first), "null"...)
	}
	return appendStringField(dst, key, v, first)
}

func appendNullableInt(dst []byte, key string, v *int) []byte {
	if v == nil {
		return append(appendKey(dst, key, false), "null"...)
	}
	return appendInt(appendKey(dst, key, false), int64(*v))
}

func appendNullableMillis(dst []byte, key string, v int) []byte {
	if v == 0 {
		return append(appendKey(dst, key, false), "null"...)
	}
	return appendInt(appendKey(dst, key, false), int64(v))
}

func appendTarget(dst []byte, ref, target string) []byte {
	dst = appendNullableString(append(dst, '{'), "ref", ref, true)
	return appendNullableString(dst, "target_id", target, false)
}

// AppendJSON implements [Payload].
func (c Toast) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "title", c.Title, true)
	dst = appendNullableString(dst, "subtitle", c.Subtitle, false)
	dst = appendNullableString(dst, "description", c.Description, false)
	dst = appendNullableString(dst, "image_url", c.ImageURL, false)
	dst = appendNullableMillis(dst, "duration_ms", c.DurationMS)
	return append(dst, '}')
}

// AppendJSON implements [Payload].
func (c Navigate) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "view", c.View, true)
	dst = appendPayload(appendKey(dst, "params", false), c.Params)
	return append(dst, '}')
}

// AppendJSON implements [Payload].
func (c ScrollTo) AppendJSON(dst []byte) []byte {
	dst = appendTarget(dst, c.Ref, c.TargetID)
	dst = appendNullableString(dst, "behavior", c.Behavior, false)
	return append(dst, '}')
}

// AppendJSON implements [Payload].
func (c Highlight) AppendJSON(dst []byte) []byte {
	dst = appendTarget(dst, c.Ref, c.TargetID)
	dst = appendNullableMillis(dst, "duration_ms", c.DurationMS)
	return append(dst, '}')
}

// AppendJSON implements [Payload].
func (c Focus) AppendJSON(dst []byte) []byte {
	return append(appendTarget(dst, c.Ref, c.TargetID), '}')
}

// AppendJSON implements [Payload].
func (c Click) AppendJSON(dst []byte) []byte {
	return append(appendTarget(dst, c.Ref, c.TargetID), '}')
}

// AppendJSON implements [Payload].
func (c SetInputValue) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "value", c.Value, true)
	dst = appendNullableString(dst, "ref", c.Ref, false)
	dst = appendNullableString(dst, "target_id", c.TargetID, false)
	dst = appendBool(appendKey(dst, "replace", false), !c.Append)
	return append(dst, '}')
}

// AppendJSON implements [Payload].
func (c SelectText) AppendJSON(dst []byte) []byte {
	dst = appendTarget(dst, c.Ref, c.TargetID)
	dst = appendNullableInt(dst, "start_offset", c.StartOffset)
	dst = appendNullableInt(dst, "end_offset", c.EndOffset)
	return append(dst, '}')
}
