// Package llmhttp is the streaming HTTP plumbing shared by the LLM clients
// that are not OpenAI-compatible (processors/llm/anthropic and
// processors/llm/gemini): a bounded server-sent-events reader, a small
// allocation-free JSON pull scanner for the events, and [Open], which posts
// a request with retries before the first event and watches every phase of
// the exchange with its own timeout (connect, first event, idle between
// events), turning a timeout into a [TimeoutError] the pipeline classifies
// as transient.
//
// It sits below those clients, beside internal/openaiapi (whose error and
// retry rules it follows), and imports only package frames (for error
// categories) and internal/jsontext. Each client keeps its own request
// encoder, event decoder and exported APIError type.
package llmhttp
