package frames

import "encoding/json"

// LLMMessage is one chat message, shaped like an OpenAI Chat Completions
// message. Exactly one of Content and Parts carries the content; a tool
// result has Role "tool" and ToolCallID. Raw, when set, is a
// provider-specific message sent verbatim instead of the other fields (the
// escape hatch for features the model does not cover).
type LLMMessage struct {
	// Role is "system", "developer", "user", "assistant" or "tool".
	Role string
	// Content is plain text content.
	Content string
	// Parts is multi-part content (text, image URLs, audio), sent as an array.
	Parts []LLMContentPart
	// Name is the optional participant name.
	Name string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []LLMToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
	// Raw is a provider-specific message used verbatim when not empty.
	Raw json.RawMessage
}

// LLMContentPart is one part of multi-part message content.
type LLMContentPart struct {
	// Type is "text", "image_url" or "input_audio".
	Type string
	// Text is set for "text" parts.
	Text string
	// ImageURL is set for "image_url" parts (an https or data URL).
	ImageURL string
	// Detail is the optional image detail hint ("low", "high", "auto").
	Detail string
	// AudioData and AudioFormat are set for "input_audio" parts.
	AudioData, AudioFormat string
}

// LLMToolCall is a function call made by the model.
type LLMToolCall struct {
	// ID is the tool_call_id.
	ID string
	// Name is the function name.
	Name string
	// Arguments is the JSON arguments text, as the model produced it.
	Arguments string
}

// LLMTool declares a function the model may call.
type LLMTool struct {
	// Name is the function name.
	Name string
	// Description tells the model when to call it.
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage
	// Raw is a provider-specific tool declaration used verbatim when not empty.
	Raw json.RawMessage
}

// LLMToolChoice is "auto", "none", "required", or the name of one function.
// The zero value leaves the choice to the provider's default.
type LLMToolChoice struct {
	// Mode is "", "auto", "none" or "required"; ignored when Function is set.
	Mode string
	// Function forces a call to the named function.
	Function string
}

// LLMContext asks the LLM service to run inference over an immutable
// snapshot of the conversation. Whoever builds it gives up the slices: the
// frame must never be changed once pushed.
type LLMContext struct {
	Base
	Ordered
	// Messages is the conversation so far.
	Messages []LLMMessage
	// Tools are the functions the model may call.
	Tools []LLMTool
	// ToolChoice constrains tool use.
	ToolChoice LLMToolChoice
}

// LLMFullResponseStart opens every LLM response; an [LLMFullResponseEnd]
// always follows, also on error and interruption.
type LLMFullResponseStart struct {
	Base
	Ordered
	// SkipTTS asks downstream TTS not to speak this response.
	SkipTTS bool
}

// LLMFullResponseEnd closes an LLM response.
type LLMFullResponseEnd struct {
	Base
	Ordered
	// SkipTTS mirrors the matching start.
	SkipTTS bool
}

// LLMMessagesAppend appends messages to the context; with RunLLM it also
// runs inference.
type LLMMessagesAppend struct {
	Base
	Ordered
	Messages []LLMMessage
	RunLLM   bool
}

// LLMMessagesUpdate replaces the context's messages; with RunLLM it also
// runs inference.
type LLMMessagesUpdate struct {
	Base
	Ordered
	Messages []LLMMessage
	RunLLM   bool
}

// LLMRun runs inference over the current context.
type LLMRun struct {
	Base
	Ordered
}

// LLMSetTools replaces the tools offered to the model.
type LLMSetTools struct {
	Base
	Ordered
	Tools []LLMTool
}

// LLMSetToolChoice replaces the tool choice.
type LLMSetToolChoice struct {
	Base
	Ordered
	ToolChoice LLMToolChoice
}

// LLMConfigureOutput changes how LLM output is handled downstream.
type LLMConfigureOutput struct {
	Base
	Ordered
	// SkipTTS keeps following responses from being spoken.
	SkipTTS bool
}
