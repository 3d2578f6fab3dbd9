// Command conformance is the conformance bot: a small SmallWebRTC server
// whose behaviour is fixed by docs/protocol.md §10, so that any
// RTVI client test suite (framewire's own in e2e/, and independent ones)
// can check framewire end to end with the real Pipecat browser clients
// (@pipecat-ai/client-js 1.13 with small-webrtc-transport 1.10, and
// client-js 1.9 speaking RTVI 1.3.0).
//
// Run it with
//
//	go run -tags "opus nolibopusfile" ./examples/conformance -addr 127.0.0.1:7861
//
// (127.0.0.1:7861 is the default; without the opus tag the bot audio is
// PCMU instead of Opus). It prints "listening on http://ADDR" on stdout
// once it accepts connections, logs with zap on stderr (-v for debug
// logs), and on SIGINT or SIGTERM closes every session (the clients get
// peerLeft) and exits. It answers CORS preflights from any origin, so the
// test page may be served from elsewhere (-allow-origin narrows or, when
// empty, disables that).
//
// Routes: POST and PATCH /api/offer, POST /start, POST and PATCH
// /sessions/<id>/api/offer, served by transports/webrtc; and Pipecat's
// WebSocket transport (conformance-bot.md §14), served by
// transports/websocket: GET /ws, the socket that client.connect({wsUrl})
// opens, and POST /connect, whose answer {"wsUrl"} startBotAndConnect
// hands to it. The second line it prints names both. Every session runs
// the pipeline of examples/internal/conformancebot:
//
//	in → audio meter → RTVI → task groups → user aggregator → echo LLM → tone → out → assistant aggregator
//
// where the tone plays over the WebSocket transport only: a 440 Hz tone at
// 24 kHz from client-ready on, which the client can hear (over WebRTC the
// bot is silent). client-message {t:"audio-stats"} is answered, on either
// transport, with server-response {t:"audio-stats", d:{samples,
// sample_rate, num_channels, rms}} over the user's audio so far.
//
// and answers, by the spec's row numbers:
//
//  1. client-ready with bot-ready (the client's version echoed, 2.1.0 or
//     1.3.0) — the RTVI processor;
//  2. the same after POST /start and an offer on the session path;
//  3. client-message {t:"echo", d:X} with server-response {t:"echo", d:X};
//  4. client-message {t:"ui-command", d:{command, payload}} with ui-command
//     {command, payload};
//  5. ui-snapshot with server-message {type:"ui_state", text:<ui_state>},
//     rendered by uiagent.RenderUIState;
//  6. ui-event with server-message {type:"ui_event", event, payload};
//  7. client-message {t:"start-job-group", d:{workers, label?,
//     cancellable?, hold_ms?}} with the ui-job-group lifecycle: group_started,
//     a job_update {text:"working"} and, after hold_ms, a job_completed
//     {worker:<name>} per worker, then group_completed;
//  8. ui-cancel-job-group (or ui-cancel-task) with a "cancelled"
//     job_completed for every unfinished worker, then group_completed;
//  9. send-text C with bot-llm-started, bot-llm-text chunks reading
//     "echo: C", bot-llm-stopped, from the echo LLM through processors/llm;
//  10. bad input with the RTVI processor's errors, never a disconnect;
//  11. disconnect-bot by ending the session: peerLeft, then the peer
//     connection closes;
//  12. an Opus track on transceiver 0 from the start (the transport sends
//     silence while the bot is quiet);
//  13. the 1.3.0 vocabulary (ui-task, task_id, agents, ...) for 1.3.x
//     clients, chosen by the RTVI observer;
//  14. any number of independent sessions, one after another or at once.
//
// A client-message of any other type gets an error-response naming the
// types the bot knows, as does a malformed ui-command or start-job-group.
package main
