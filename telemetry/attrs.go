package telemetry

import "go.opentelemetry.io/otel/attribute"

// Attribute keys. The gen_ai.* keys follow the OpenTelemetry GenAI semantic
// conventions; the framewire.* keys are the framework's own, named
// framewire.<subject>.<property>.
const (
	// GenAI semantic conventions.
	KeyGenAIOperationName = attribute.Key("gen_ai.operation.name")
	KeyGenAISystem        = attribute.Key("gen_ai.system")
	KeyGenAIRequestModel  = attribute.Key("gen_ai.request.model")
	KeyGenAIInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	KeyGenAIOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
	KeyGenAIToolName      = attribute.Key("gen_ai.tool.name")
	KeyGenAIToolCallID    = attribute.Key("gen_ai.tool.call.id")
	KeyGenAITokenType     = attribute.Key("gen_ai.token.type")

	// Session.
	KeySessionID     = attribute.Key("framewire.session.id")
	KeySessionReason = attribute.Key("framewire.session.end_reason")
	// KeySessionTransport is the session's transport: webrtc or websocket.
	KeySessionTransport = attribute.Key("framewire.session.transport")

	// Turns.
	KeyTurnNumber      = attribute.Key("framewire.turn.number")
	KeyTurnKind        = attribute.Key("framewire.turn.kind") // voice, text or bot
	KeyTurnLatencyMS   = attribute.Key("framewire.turn.latency_ms")
	KeyTurnInterrupted = attribute.Key("framewire.turn.interrupted")

	// Any service span.
	KeyService      = attribute.Key("framewire.service")      // the processor's name
	KeyServiceKind  = attribute.Key("framewire.service.kind") // stt, llm or tts
	KeyServiceModel = attribute.Key("framewire.service.model")
	KeyTTFBMS       = attribute.Key("framewire.ttfb_ms")
	KeyOutcome      = attribute.Key("framewire.outcome") // ok, interrupted, error, cancelled
	KeyInterrupted  = attribute.Key("framewire.interrupted")
	KeyErrorCat     = attribute.Key("framewire.error.category")

	// Service details.
	KeySTTTranscript   = attribute.Key("framewire.stt.transcript_chars")
	KeySTTAudioSeconds = attribute.Key("framewire.stt.audio_seconds")
	KeyLLMOutputChars  = attribute.Key("framewire.llm.output_chars")
	KeyTTSCharacters   = attribute.Key("framewire.tts.characters")
	KeyToolGroupID     = attribute.Key("framewire.tool.group_id")

	// UI agent turns.
	KeyUISnapshotBytes = attribute.Key("framewire.ui.snapshot_bytes")
	KeyUICommands      = attribute.Key("framewire.ui.commands")
	KeyUICommandCount  = attribute.Key("framewire.ui.command_count")
	KeyUISkippedRefs   = attribute.Key("framewire.ui.skipped_refs")

	// Metric labels that are not GenAI conventions.
	KeyReason     = attribute.Key("reason")
	KeyKind       = attribute.Key("kind")
	KeyModel      = attribute.Key("model")
	KeyStatusCode = attribute.Key("http.response.status_code")
	KeyLimit      = attribute.Key("limit")
	KeyQueue      = attribute.Key("queue")
)

// Values of framewire.outcome.
const (
	OutcomeOK          = "ok"
	OutcomeInterrupted = "interrupted"
	OutcomeError       = "error"
	OutcomeCancelled   = "cancelled"
)
