// Package uiagent lets an LLM see the user's web page and act on it while
// it answers: the "screen half" of a voice and UI agent
// (docs/ui-agent.md is the guide, docs/protocol.md §8 and §9 the wire).
//
// The browser streams accessibility snapshots (rtvi.UISnapshotFrame). The
// [Agent] keeps the latest one, renders it as the <ui_state> block of
// docs/protocol.md §9 ([RenderUIState]) and writes it into the LLM context as
// a user message (the page is untrusted input) just before the user's
// words at each user-turn inference. UI events
// from the page become <ui_event> blocks ([RenderEvent]) and go to typed
// handlers ([HandleEvent]). The model acts on the page through UI
// commands (rtvi.UICommandFrame: [Agent.ScrollTo], [Agent.Highlight],
// [Agent.SelectText], [Agent.Click], [Agent.SetInputValue], [Agent.Focus],
// [Agent.Toast], [Agent.Navigate], [Agent.SendCommand]), usually through
// the bundled reply tool ([Agent.ReplyTool]), which carries the spoken
// answer and every action in one guarded call. Long work runs in task
// groups ([TaskGroups]) whose progress the client shows as cards
// (rtvi.UITaskFrame, worded per client by the RTVI observer).
//
// What the page sends is untrusted: page text cannot open or close the
// agent's tags ("<" is written as "&lt;") nor start a line of its own
// (line breaks and control characters are written as escapes, see
// [EscapeText], [RenderUIState] and [RenderEvent]), the <ui_state> block
// is bounded ([RenderLimits]), and so
// are the task groups and workers running at once ([TaskGroupsOptions]).
//
// The package sits above processors/rtvi (the wire) and processors/llm
// (context, tools, inference). A pipeline with one LLM that sees the page
// is
//
//	transport.In → rtvi.Processor → STT → agent → pair.User() → llm.Service → TTS → transport.Out → pair.Assistant()
//
// and [NewVoiceAgent] builds it in one call ([VoiceAgent.Pipeline]),
// tying the reply tool, the context, the hook and the provider together.
// [Agent] shows the same wiring by hand, for pipelines of another shape.
package uiagent
