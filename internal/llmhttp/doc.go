// Package llmhttp is the streaming HTTP plumbing shared by the clients of
// upstream model services: the LLM clients (processors/llm/openai,
// anthropic and gemini) and the OpenAI-compatible speech clients
// (processors/tts/openai, processors/stt/openai). It holds a bounded
// server-sent-events reader (its events are read with internal/jsontext's
// Scanner), and [Open] and [Send], which post a request with retries
// before the first byte and watch every phase of the exchange with its own
// timeout (connect, first byte, idle between chunks), turning a timeout
// into a [TimeoutError] the pipeline classifies as transient.
//
// [Timeouts] is the one shape of those bounds for every upstream client,
// the websocket ones (processors/tts/cartesia, processors/stt/deepgram)
// included: each client's options embed it, with [LLMTimeouts] or
// [SpeechTimeouts] as defaults, and report a bound that ran out as a
// [TimeoutError].
//
// It sits below those clients, beside internal/openaiapi (whose error and
// retry rules it follows), and imports only package frames (for error
// categories). Each client keeps its own request
// encoder, event decoder and exported APIError type.
package llmhttp
