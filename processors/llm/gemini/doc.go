// Package gemini is a streaming client for the Gemini API
// (streamGenerateContent with server-sent events). Its [Client] implements
// [llm.Provider], so it plugs into [llm.Service] exactly where the
// OpenAI-compatible client does, and the service emits the same frames for
// either.
//
// The client turns framewire's OpenAI-shaped conversation into Gemini's
// contents: roles user and model, text, functionCall and functionResponse
// parts, the system prompt as systemInstruction, developer messages (the
// UI agent's <ui_state>) as user text, and tool schemas reduced to the
// OpenAPI subset Gemini accepts. Gemini's function calls carry no id (newer
// versions may send one): the client makes stable ids, and maps results
// back to their calls by name and order. It parses the stream with an
// allocation-free scanner, reports token usage, turns safety and
// recitation stops and blocked prompts into errors, retries 429 and 5xx
// answers before the first event, and bounds every phase of the exchange
// with a timeout (Options.HTTP, of package upstream, as every service
// client).
//
// Configuration comes from [Options], with environment defaults:
// GOOGLE_API_KEY or GEMINI_API_KEY, GEMINI_BASE_URL and GEMINI_MODEL.
package gemini
