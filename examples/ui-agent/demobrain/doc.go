// Package demobrain is the offline "demo brain" of the ui-agent example: a
// deterministic stand-in for an LLM that implements [llm.Provider].
//
// It reads what a real model would read, the rendered <ui_state> block and
// the user's last message, and answers the way a real model would, with a
// call to the UI agent's bundled reply tool (scroll_to, highlight,
// select_text, fills, click and a spoken answer) or to the research tool
// that starts a task group. Its calls go through the same function-calling
// path as a model's, so `make run` shows the whole framework working with
// no API key and no network. It understands a handful of phrasings around
// the demo page (pointing at products, deixis in the article, form filling,
// task groups) and says so when it does not understand.
package demobrain
