// Package uiagent lets an LLM see the user's web page and act on it while
// it answers: the "screen half" of a voice and UI agent.
//
// The browser streams accessibility snapshots (rtvi.UISnapshotFrame); the
// [Agent] keeps the latest one, renders it as the <ui_state> block of
// shared/spec/ui-agent.md §1.4 and injects it into the LLM context just
// before each user-turn inference. UI events from the page are written
// into the context as <ui_event> blocks and dispatched to handlers. The
// model acts on the page through UI commands (rtvi.UICommandFrame: scroll,
// highlight, select text, fill inputs, click, or an app's own command),
// usually with the bundled reply tool, which carries the spoken answer and
// every action in one call. Long work runs in task groups ([TaskGroups])
// whose progress the client shows as cards (rtvi.UITaskFrame).
//
// The package sits between processors/rtvi (the wire) and processors/llm
// (context, tools, inference) and imports both. A typical pipeline is
//
//	transport.In → rtvi.Processor → STT → agent → pair.User() → llm.Service → TTS → transport.Out → pair.Assistant()
//
// with the pair built as llm.NewPair(conv, llm.PairOptions{BeforeInference:
// agent.BeforeInference}), the service as llm.NewService(agent.Provider(p),
// ...) and the reply tool registered with the service and offered in the
// context. See the README of the package (doc comments of [Agent]) for the
// whole wiring.
package uiagent
