// Package anthropic is a streaming client for Anthropic's Messages API
// (Claude). Its [Client] implements [llm.Provider], so it plugs into
// [llm.Service] exactly where the OpenAI-compatible client does, and the
// service emits the same frames for either.
//
// The client turns framewire's OpenAI-shaped conversation into Anthropic's:
// system messages become the top-level system prompt (or, when they are
// the whole context, the one user turn: the API needs one), tool results become
// user-role tool_result blocks, consecutive messages of one role are merged
// (Anthropic requires the roles to alternate), and developer messages (the
// UI agent's <ui_state>) become user-role text, as Anthropic has no role
// for them. It parses the event stream (message_start, content_block_*,
// message_delta, message_stop, ping and mid-stream error events) with an
// allocation-free scanner, assembles tool-use input per content block,
// leaves the service's own tool calls (server_tool_use, mcp_tool_use) to
// the service, continues a turn the service paused (stop_reason
// pause_turn) by sending the answer so far back, reports token usage,
// retries 429, 529 and 5xx answers before the first event, and bounds
// every phase of the exchange with a timeout (Options.HTTP, of package
// upstream, as every service client).
//
// Configuration comes from [Options], with environment defaults:
// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_MODEL.
package anthropic
