package frames

import "encoding/json"

// FunctionCall is one function call requested by the model.
type FunctionCall struct {
	// Name is the function name.
	Name string
	// ToolCallID identifies the call.
	ToolCallID string
	// Arguments is the JSON arguments object.
	Arguments json.RawMessage
}

// FunctionCallsStarted announces the calls of one LLM response. Broadcast.
type FunctionCallsStarted struct {
	Base
	System
	Calls []FunctionCall
	// GroupID is shared by the calls of one response.
	GroupID string
}

// FunctionCallInProgress reports that a call is running. Broadcast.
type FunctionCallInProgress struct {
	Base
	Uninterruptible
	FunctionCall
	// CancelOnInterruption says whether an interruption cancels the call.
	CancelOnInterruption bool
	// GroupID is shared by the calls of one response.
	GroupID string
}

// FunctionCallResultProperties tunes what happens after a result.
type FunctionCallResultProperties struct {
	// RunLLM overrides whether inference runs after this result; nil leaves
	// the default (run once the whole group has settled, if the result is not empty).
	RunLLM *bool
	// Intermediate marks a partial result of a streaming function; more
	// results follow. The zero value is a final result.
	Intermediate bool
}

// FunctionCallResult carries the result of a call. Broadcast.
type FunctionCallResult struct {
	Base
	Uninterruptible
	FunctionCall
	// Result is any JSON-encodable value.
	Result any
	// GroupID is shared by the calls of one response.
	GroupID string
	// Properties tunes the follow-up.
	Properties FunctionCallResultProperties
}

// FunctionCallCancel reports that a call was cancelled. It travels in the
// same lane as in-progress and result frames so it cannot overtake them.
// Broadcast.
type FunctionCallCancel struct {
	Base
	Uninterruptible
	// Name is the function name.
	Name string
	// ToolCallID identifies the call.
	ToolCallID string
}
