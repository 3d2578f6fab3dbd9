package llm

import (
	"context"
	"iter"

	"github.com/framewire/framewire/frames"
)

// Provider is a model backend: it streams one response to a conversation.
// Implement it to plug any model into [Service]: the OpenAI-compatible
// client in package llm/openai, or an offline fake.
//
// Stream yields the response's events in order and ends after the last
// one. A failure is yielded once as a non-nil error, after which the
// sequence ends. The provider must stop promptly and release its resources
// (close the HTTP body) when ctx is cancelled or when the consumer stops
// iterating. req is immutable: read it, never change it.
type Provider interface {
	Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[Event, error]
}

// ProviderFunc adapts a function to [Provider].
type ProviderFunc func(ctx context.Context, req *frames.LLMContext) iter.Seq2[Event, error]

// Stream implements [Provider].
func (fn ProviderFunc) Stream(ctx context.Context, req *frames.LLMContext) iter.Seq2[Event, error] {
	return fn(ctx, req)
}

// EventKind says what an [Event] carries.
type EventKind uint8

const (
	// EventText carries a piece of the answer's text.
	EventText EventKind = iota + 1
	// EventToolCall carries one complete function call.
	EventToolCall
	// EventUsage carries the response's token usage.
	EventUsage
)

// Event is one step of a streamed response.
type Event struct {
	Kind EventKind
	// Text is set for EventText.
	Text string
	// ToolCall is set for EventToolCall: the whole call, arguments
	// assembled. Arguments that are not valid JSON are reported to the
	// model as an error result, not run.
	ToolCall frames.LLMToolCall
	// Usage is set for EventUsage.
	Usage frames.LLMTokenUsage
}

// TextEvent returns an [EventText] event.
func TextEvent(text string) Event { return Event{Kind: EventText, Text: text} }

// ToolCallEvent returns an [EventToolCall] event.
func ToolCallEvent(call frames.LLMToolCall) Event { return Event{Kind: EventToolCall, ToolCall: call} }

// UsageEvent returns an [EventUsage] event.
func UsageEvent(u frames.LLMTokenUsage) Event { return Event{Kind: EventUsage, Usage: u} }
