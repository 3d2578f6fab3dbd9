package frames

import "time"

// MetricKind names the kind of a metric sample.
type MetricKind uint8

const (
	// MetricTTFB is time to first byte of a service response.
	MetricTTFB MetricKind = iota + 1
	// MetricProcessing is the total processing time of a request.
	MetricProcessing
	// MetricLLMUsage is LLM token usage.
	MetricLLMUsage
	// MetricTTSUsage is characters synthesized.
	MetricTTSUsage
	// MetricSTTUsage is seconds of audio transcribed.
	MetricSTTUsage
)

// LLMTokenUsage counts the tokens of one LLM response.
type LLMTokenUsage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	CacheReadTokens  int
	ReasoningTokens  int
}

// Metric is one metric sample from one processor.
type Metric struct {
	Kind MetricKind
	// Processor names the processor that measured it.
	Processor string
	// Model names the model, when one applies.
	Model string
	// Value is the duration of TTFB and processing metrics.
	Value time.Duration
	// Usage is set for MetricLLMUsage.
	Usage LLMTokenUsage
	// Characters is set for MetricTTSUsage.
	Characters int
	// AudioSeconds is set for MetricSTTUsage.
	AudioSeconds float64
}

// Metrics carries metric samples.
type Metrics struct {
	Base
	System
	Data []Metric
}

// InputTransportMessage is a message that arrived from the client (for
// example RTVI JSON on the data channel).
type InputTransportMessage struct {
	Base
	System
	// Message is the raw message as received.
	Message []byte
}

// InputTransportRefused reports a client message that a transport refused
// on arrival (past its rate limit), so that the processor of the
// messages' protocol answers the client in that protocol: processors/rtvi
// answers a refused request by its id. A transport pushes it downstream
// from its input and never parses a message itself; a transport that
// sets End ends the session when the frame, passed on, reaches its
// output, so that what the processor said goes out first.
type InputTransportRefused struct {
	Base
	System
	// Message is the refused message as received; nil when there is
	// nothing to answer.
	Message []byte
	// Answer is what to tell the sender of Message if it is a request
	// that expects an answer: the limit that refused it.
	Answer string
	// Notice, when not empty, tells the client that its messages are
	// being refused (a non-fatal error); transports send it at most about
	// once a second.
	Notice string
	// End, when not empty, is why the transport ends the session: the
	// client sent far over its limit for too long. The client is told
	// (a fatal error).
	End string
}

// OutputTransportMessage is a message for the client, sent in order.
type OutputTransportMessage struct {
	Base
	Ordered
	// Message is the encoded message.
	Message []byte
	// Type is the message's type, as the protocol names it ("bot-output"),
	// set by whoever encoded it, so that a transport, a logger or
	// telemetry need not parse Message; "" when unknown.
	Type string
	// Supersede, when not 0, says that a newer message with the same key
	// makes this one worthless to the client (an audio level, a progress
	// update): a transport that queues messages for a slow reader may
	// leave the older out. 0, the default, is never left out.
	Supersede uint64
}

// OutputTransportMessageUrgent is a message for the client that overtakes
// queued frames. RTVI messages use it. Type and Supersede are as in
// [OutputTransportMessage].
type OutputTransportMessageUrgent struct {
	Base
	System
	// Message is the encoded message.
	Message []byte
	// Type is the message's type; "" when unknown.
	Type string
	// Supersede is the supersede key; 0 for none.
	Supersede uint64
}
