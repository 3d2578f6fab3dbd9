// Package wire is RTVI on the wire: the messages framewire and the Pipecat
// browser clients (@pipecat-ai/client-js) exchange, including the UI Agent
// Protocol, and their hand-written JSON codec (fixed key order, no
// reflection, validation like Pipecat's pydantic models).
//
// Each message type has one data type named after it: client-ready's data
// is a [ClientReady], bot-output's a [BotOutput], ui-job-group's (ui-task
// for RTVI 1.3 clients) a [UITask]. [Decode] parses what a client sends;
// [DecodeServerMessage] parses what a server sends, for Go clients and
// tests; [Message] encodes either direction. The accessibility [Snapshot]
// and the built-in UI command payloads ([Toast], [ScrollTo], ...) live here
// too.
//
// The package knows nothing of pipelines or frames: package rtvi builds the
// protocol's processor, observer and frames on top of it (see
// docs/decisions/rtvi-packages.md).
package wire
