// Package openai is a hand-written streaming client for OpenAI-compatible
// Chat Completions servers (OpenAI, vLLM, Ollama, llama.cpp server, Groq).
// Its [Client] implements [llm.Provider], so it plugs into [llm.Service].
//
// The client sends the conversation snapshot with stream=true and
// include_usage, reads the server-sent events with internal/llmhttp's
// bounded reader and allocation-free scanner, assembles tool calls delta
// by delta by their index (several per delta, interleaved), reports usage,
// turns HTTP error bodies into [APIError]s, retries 429 and 5xx answers
// with backoff before the first token, and closes the response body as
// soon as the request's context is cancelled. Every phase is bounded
// ([Options].Timeouts: connect 10s, first byte 30s, idle 30s by default):
// a server that accepts and never answers ends the turn with a transient
// error instead of holding it.
//
// Configuration comes from [Options], with environment defaults:
// OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL.
package openai
