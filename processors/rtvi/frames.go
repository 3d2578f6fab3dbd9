package rtvi

import (
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/rtvi/wire"
)

// The RTVI frames. Every one of them is a system frame, as in Python
// (frameworks/rtvi/frames.py), so they are never flushed by interruptions
// and never wait behind queued audio or text; the observer reports the
// outbound ones on their first push, wherever they are pushed from. DTMF
// keys arrive as core frames.InputDTMF, and TTS progress travels as core
// frames.AggregatedTextProgress with the audio it describes. Frames are
// immutable once pushed: their payloads must not be changed afterwards.

// UICommandFrame asks the client to run a UI command: the observer sends
// ui-command {command, payload}. Push it anywhere, in either direction.
type UICommandFrame struct {
	frames.Base
	frames.System
	// Command is the command name ("scroll_to", or an app's own).
	Command string
	// Payload is the command's payload; nil omits the payload key. The
	// built-in payloads (Toast, ScrollTo, ...) implement [Command].
	Payload wire.Payload
}

// UICommandName implements [frames.UICommander].
func (f *UICommandFrame) UICommandName() string { return f.Command }

// NewUICommand returns the frame for a built-in command payload.
func NewUICommand(c wire.Command) *UICommandFrame {
	return &UICommandFrame{Command: c.CommandName(), Payload: c}
}

// UITaskFrame carries one envelope of a task (job-group) lifecycle: the
// observer sends it as ui-job-group, or as ui-task to RTVI 1.3.0 clients,
// with the field names of the client's vocabulary. A nil Event sends
// nothing.
type UITaskFrame struct {
	frames.Base
	frames.System
	// Event is a GroupStarted, TaskUpdate, TaskCompleted or GroupCompleted.
	Event wire.TaskEvent
}

// UIMessage is an inbound UI message, as given to OnUIMessage handlers:
// a *UIEventFrame, *UISnapshotFrame or *UICancelTaskFrame (the same frame
// the processor pushes downstream; do not change it).
type UIMessage interface {
	frames.Frame
	// MessageID returns the id of the client message.
	MessageID() string
	uiMessage()
}

// UIEventFrame is a ui-event from the client, pushed downstream.
type UIEventFrame struct {
	frames.Base
	frames.System
	// MsgID is the client message id.
	MsgID string
	// Event is the app-defined event name.
	Event string
	// Payload is the app-defined payload, verbatim; nil when absent.
	Payload wire.RawJSON
}

// UISnapshotFrame is a ui-snapshot from the client, pushed downstream.
// Each one replaces the previous snapshot.
type UISnapshotFrame struct {
	frames.Base
	frames.System
	MsgID string
	Tree  *wire.Snapshot
	// Bytes is the size of the ui-snapshot message; 0 when unknown.
	Bytes int
}

// UISnapshotBytes implements [frames.UISnapshotter].
func (f *UISnapshotFrame) UISnapshotBytes() int { return f.Bytes }

// UICancelTaskFrame is a request from the client to cancel a task (job)
// group: ui-cancel-job-group, or ui-cancel-task from RTVI 1.3.0 clients;
// both are accepted from any client. The owner of the group cancels it
// only if it exists and was started cancellable.
type UICancelTaskFrame struct {
	frames.Base
	frames.System
	MsgID string
	// TaskID is the group to cancel (job_id / task_id).
	TaskID string
	// Reason is the client's reason; empty when it gave none (the usual
	// default is "cancelled by user").
	Reason string
	// Vocabulary is the message type the client used.
	Vocabulary wire.Vocabulary
}

// MessageID implements [UIMessage].
func (f *UIEventFrame) MessageID() string { return f.MsgID }

// MessageID implements [UIMessage].
func (f *UISnapshotFrame) MessageID() string { return f.MsgID }

// MessageID implements [UIMessage].
func (f *UICancelTaskFrame) MessageID() string { return f.MsgID }

func (*UIEventFrame) uiMessage()      {}
func (*UISnapshotFrame) uiMessage()   {}
func (*UICancelTaskFrame) uiMessage() {}

// ClientMessage is an app-defined request from the client (client-message
// {t, d}). Answer it with [Processor.SendServerResponse] or a
// [ServerResponseFrame].
type ClientMessage struct {
	// ID is the request id, echoed in the response.
	ID string
	// Type is the app-defined type (t).
	Type string
	// Data is the app-defined data (d), verbatim; nil when absent.
	Data wire.RawJSON
}

// ClientMessageFrame is a client-message, pushed downstream before the
// OnClientMessage handlers run.
type ClientMessageFrame struct {
	frames.Base
	frames.System
	ClientMessage
}

// ServerMessageFrame sends server-message with Data (nil omits the data
// key). Push it anywhere; the observer sends it.
type ServerMessageFrame struct {
	frames.Base
	frames.System
	Data wire.Payload
}

// ServerResponseFrame answers a client message: server-response {t, d}, or
// error-response {error} when Error is not empty.
type ServerResponseFrame struct {
	frames.Base
	frames.System
	// Request is the message being answered.
	Request ClientMessage
	// Data is the answer (d); nil omits it.
	Data wire.Payload
	// Error, when not empty, turns the answer into an error-response.
	Error string
}

// FunctionCallResultFrame is what the processor pushes downstream for
// llm-function-call-result (a function call the client handled). It is the
// core frames.FunctionCallResult, so the LLM layer handles results from
// the client exactly like results from server-side handlers.
type FunctionCallResultFrame = frames.FunctionCallResult

// ClientReadyFrame is pushed downstream when the client has sent
// client-ready (after the version check, before bot-ready), and is what
// OnClientReady handlers get. An input transport that holds back audio
// until the client is ready starts on it; it stands in for Pipecat's
// InputTransportStartAudioStreamingFrame.
type ClientReadyFrame struct {
	frames.Base
	frames.System
	// MsgID is the client-ready message id (echoed in bot-ready).
	MsgID string
	// Version is the version the client sent ("" when none).
	Version string
	// Parsed is the parsed version; zero when unknown or unparseable.
	Parsed wire.ClientVersion
	// VersionError is the error text sent to the client, or "".
	VersionError string
	// About describes the client; {library:"unknown"} when it sent none
	// or an invalid one.
	About wire.AboutClient
}

// ConfigureObserverFrame changes the observer's settings at run time; it
// sends nothing. Unset fields leave the setting alone.
type ConfigureObserverFrame struct {
	frames.Base
	frames.System
	// FunctionCallReportLevels replaces the report levels when not nil
	// (see [ObserverOptions.FunctionCallReportLevels]).
	FunctionCallReportLevels map[string]ReportLevel
	// VADUserSpeaking turns vad-user-started/stopped-speaking on or off.
	VADUserSpeaking wire.OptBool
}
