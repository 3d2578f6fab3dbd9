// Command ui-agent is the framewire demo that `make run` starts: a web page
// with a product grid, an essay and a job application form, and an agent
// that sees the page and acts on it while it talks to the user.
//
// The Go server serves the page (built from the real @pipecat-ai browser
// packages by build.sh and embedded) on http://127.0.0.1:7860, with two
// transports: the SmallWebRTC signalling (the page's default), and
// Pipecat's WebSocket transport under /ws/ (POST /ws/connect, the socket
// at /ws/ws) for the page opened with ?transport=websocket. Each browser
// session, on either, gets the same pipeline:
//
//	transport in → RTVI → (STT) → UI agent → user aggregator → LLM → (TTS) → transport out → assistant aggregator
//
// with the RTVI observer turning its frames into messages for the page.
// The UI agent renders the page's accessibility snapshot as <ui_state> for
// the model and runs its reply tool (scroll, highlight, select, fill,
// click, answer); a second tool starts task groups of simulated research
// workers whose progress the page shows as cards.
//
// Without an LLM configured the "demo brain" answers (package demobrain):
// deterministic, offline, and calling the same tools a model would. With
// OPENAI_API_KEY set (and optionally OPENAI_BASE_URL and OPENAI_MODEL) the
// OpenAI-compatible client is used instead; FRAMEWIRE_BRAIN=demo forces the
// demo brain.
//
// Usage:
//
//	examples/ui-agent/build.sh && go run ./examples/ui-agent [-addr 127.0.0.1:7860]
package main
