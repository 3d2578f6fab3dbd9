package wire

// This file holds the models of server-to-client message data (docs/protocol.md
// §6). They follow Python's model_dump(exclude_none=True):
// optional members without a value are omitted, never sent as null.

// BotReady is the data of bot-ready.
type BotReady struct {
	// Version is "2.1.0", or the client's own version for 1.x clients.
	Version string
	// About describes the server library (an object).
	About Payload
}

// AppendJSON implements [Payload].
func (d BotReady) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "version", d.Version, true)
	if Present(d.About) {
		dst = d.About.AppendJSON(appendKey(dst, "about", false))
	}
	return append(dst, '}')
}

// Error is the data of error. The member is "error", not "message"
// (which the JS type says but no server sends); fatal makes the client
// disconnect.
type Error struct {
	Error string
	Fatal bool
}

// AppendJSON implements [Payload].
func (d Error) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "error", d.Error, true)
	dst = appendBool(appendKey(dst, "fatal", false), d.Fatal)
	return append(dst, '}')
}

// ErrorResponse is the data of error-response (the reply to a request
// that failed; the message's id is the request's).
type ErrorResponse struct {
	Error string
}

// AppendJSON implements [Payload].
func (d ErrorResponse) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "error", d.Error, true)
	return append(dst, '}')
}

// ServerResponse is the data of server-response: the request's type t
// and the answer d (omitted when nil).
type ServerResponse struct {
	T string
	D Payload
}

// AppendJSON implements [Payload].
func (d ServerResponse) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "t", d.T, true)
	if Present(d.D) {
		dst = d.D.AppendJSON(appendKey(dst, "d", false))
	}
	return append(dst, '}')
}

// Text is the data of the text messages: user-llm-text, bot-llm-text,
// bot-transcription, bot-tts-text and system-log.
type Text struct {
	Text string
}

// AppendJSON implements [Payload].
func (d Text) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "text", d.Text, true)
	return append(dst, '}')
}

// AppendTextMessage appends a complete text message ({label, type,
// data:{text}}) of type typ: the hand-written hot path for bot-llm-text,
// bot-tts-text, user-llm-text and bot-transcription.
func AppendTextMessage(dst []byte, typ, text string) []byte {
	dst = append(dst, `{"label":"rtvi-ai","type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","data":{"text":`...)
	dst = appendString(dst, text)
	return append(dst, '}', '}')
}

// textMessageOverhead is the length of AppendTextMessage's output without
// the type and the quoted text.
const textMessageOverhead = len(`{"label":"rtvi-ai","type":"","data":{"text":}}`)

// EncodeTextMessage returns a text message in a buffer of exactly the
// right size: one allocation. typ must be one of the Type constants (it is
// not escaped).
func EncodeTextMessage(typ, text string) []byte {
	return AppendTextMessage(make([]byte, 0, textMessageOverhead+len(typ)+quotedLen(text)), typ, text)
}

// Transcription is the data of user-transcription.
type Transcription struct {
	Text string
	// UserID may be empty.
	UserID string
	// Timestamp is an ISO 8601 UTC time with milliseconds.
	Timestamp string
	// Final is false for interim results.
	Final bool
}

// AppendJSON implements [Payload].
func (d Transcription) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "text", d.Text, true)
	dst = appendStringField(dst, "user_id", d.UserID, false)
	dst = appendStringField(dst, "timestamp", d.Timestamp, false)
	dst = appendBool(appendKey(dst, "final", false), d.Final)
	return append(dst, '}')
}

// Spoken statuses of bot-output (RTVI 2.0+).
const (
	SpokenNew        = "new"
	SpokenInProgress = "in-progress"
	SpokenCompleted  = "completed"
)

// SpokenProgress says how much of a bot-output segment has been spoken.
type SpokenProgress struct {
	AccumulatedText string
	RemainingText   string
}

// AppendJSON implements [Payload].
func (p SpokenProgress) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "accumulated_text", p.AccumulatedText, true)
	dst = appendStringField(dst, "remaining_text", p.RemainingText, false)
	return append(dst, '}')
}

// BotOutput is the data of bot-output (§6.4). Members without a value
// are omitted: 1.x clients get only text, spoken and aggregated_by;
// progress messages have no spoken member.
type BotOutput struct {
	Text string
	// AggregatedBy is "sentence", "word", "token" or a custom string.
	AggregatedBy string
	// SegmentID ties progress messages to their segment; 0 omits it.
	SegmentID uint64
	// Spoken is true for text a TTS service has spoken (v1 meaning).
	Spoken OptBool
	// WillBeSpoken says whether the text will be spoken.
	WillBeSpoken OptBool
	// SpokenStatus is SpokenNew, SpokenInProgress or SpokenCompleted;
	// empty omits it.
	SpokenStatus string
	// SpokenProgress is omitted when nil.
	SpokenProgress *SpokenProgress
}

// AppendJSON implements [Payload].
func (d BotOutput) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "text", d.Text, true)
	dst = appendStringField(dst, "aggregated_by", d.AggregatedBy, false)
	if d.SegmentID != 0 {
		dst = appendInt(appendKey(dst, "segment_id", false), int64(d.SegmentID))
	}
	if d.Spoken != OptUnset {
		dst = appendBool(appendKey(dst, "spoken", false), d.Spoken == OptTrue)
	}
	if d.WillBeSpoken != OptUnset {
		dst = appendBool(appendKey(dst, "will_be_spoken", false), d.WillBeSpoken == OptTrue)
	}
	if d.SpokenStatus != "" {
		dst = appendStringField(dst, "spoken_status", d.SpokenStatus, false)
	}
	if d.SpokenProgress != nil {
		dst = d.SpokenProgress.AppendJSON(appendKey(dst, "spoken_progress", false))
	}
	return append(dst, '}')
}

// AudioLevel is the data of user-audio-level and bot-audio-level.
type AudioLevel struct {
	// Value is in [0, 1].
	Value float64
}

// AppendJSON implements [Payload].
func (d AudioLevel) AppendJSON(dst []byte) []byte {
	dst = appendFloat(appendKey(append(dst, '{'), "value", true), d.Value)
	return append(dst, '}')
}

// FunctionCallStarted is the data of llm-function-call-started. It
// has no tool_call_id; the name is omitted below the NAME report level.
type FunctionCallStarted struct {
	FunctionName string
}

// AppendJSON implements [Payload].
func (d FunctionCallStarted) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if d.FunctionName != "" {
		dst = appendStringField(dst, "function_name", d.FunctionName, true)
	}
	return append(dst, '}')
}

// FunctionCallInProgress is the data of llm-function-call-in-progress.
type FunctionCallInProgress struct {
	ToolCallID string
	// FunctionName is omitted when empty (report level NONE). Client-side
	// function handlers only run when it is present.
	FunctionName string
	// Arguments is omitted when nil (below the ARGUMENTS level).
	Arguments Payload
}

// AppendJSON implements [Payload].
func (d FunctionCallInProgress) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "tool_call_id", d.ToolCallID, true)
	if d.FunctionName != "" {
		dst = appendStringField(dst, "function_name", d.FunctionName, false)
	}
	if Present(d.Arguments) {
		dst = d.Arguments.AppendJSON(appendKey(dst, "arguments", false))
	}
	return append(dst, '}')
}

// FunctionCallStopped is the data of llm-function-call-stopped.
type FunctionCallStopped struct {
	ToolCallID string
	// Cancelled is true when the call was cancelled rather than answered.
	Cancelled    bool
	FunctionName string
	// Result is omitted when nil (below FULL, or a falsy result).
	Result Payload
}

// AppendJSON implements [Payload].
func (d FunctionCallStopped) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "tool_call_id", d.ToolCallID, true)
	dst = appendBool(appendKey(dst, "cancelled", false), d.Cancelled)
	if d.FunctionName != "" {
		dst = appendStringField(dst, "function_name", d.FunctionName, false)
	}
	if Present(d.Result) {
		dst = d.Result.AppendJSON(appendKey(dst, "result", false))
	}
	return append(dst, '}')
}

// LLMFunctionCall is the data of the deprecated llm-function-call.
// Unlike every other message it keeps nulls, and the member is "args".
type LLMFunctionCall struct {
	FunctionName string
	ToolCallID   string
	Args         Payload
}

// AppendJSON implements [Payload].
func (d LLMFunctionCall) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "function_name", d.FunctionName, true)
	dst = appendStringField(dst, "tool_call_id", d.ToolCallID, false)
	dst = appendPayload(appendKey(dst, "args", false), d.Args)
	return append(dst, '}')
}

// Metrics is the data of metrics (§6.5): the entries of one metrics
// frame grouped by kind. Empty groups are omitted, so a frame with no
// supported entries gives {}.
type Metrics struct {
	TTFB       []TimingMetric
	TTFA       []TTFAMetric
	TTFAT      []TTFATMetric
	Processing []TimingMetric
	Tokens     []TokenUsage
	STTUsage   []STTUsageMetric
	Characters []CharactersMetric
}

// TimingMetric is a ttfb or processing entry.
type TimingMetric struct {
	Processor string
	// Model is omitted when empty.
	Model string
	// Value is in seconds.
	Value float64
}

// TTFAMetric is a time-to-first-audio entry (seconds).
type TTFAMetric struct {
	Processor, Model           string
	TTFA, TTFB, LeadingSilence float64
}

// TTFATMetric is a time-to-first-audible-token entry (seconds).
type TTFATMetric struct {
	Processor, Model          string
	TTFAT, TTFB, ThinkingTime float64
}

// TokenUsage is a tokens entry: the usage object alone, without a
// processor. Optional counts are omitted when zero.
type TokenUsage struct {
	PromptTokens, CompletionTokens, TotalTokens int
	CacheReadInputTokens                        int
	CacheCreationInputTokens                    int
	ReasoningTokens                             int
	InputAudioTokens                            int
	OutputAudioTokens                           int
	CacheReadInputAudioTokens                   int
}

// STTUsageMetric is an stt_usage entry.
type STTUsageMetric struct {
	Processor, Model string
	AudioSeconds     float64
}

// CharactersMetric is a characters (TTS usage) entry.
type CharactersMetric struct {
	Processor, Model string
	Value            int
}

func appendProcessor(dst []byte, processor, model string) []byte {
	dst = appendStringField(append(dst, '{'), "processor", processor, true)
	if model != "" {
		dst = appendStringField(dst, "model", model, false)
	}
	return dst
}

func appendFloatField(dst []byte, key string, v float64) []byte {
	return appendFloat(appendKey(dst, key, false), v)
}

func appendMetricList[T any](dst []byte, key string, first bool, list []T, entry func([]byte, *T) []byte) ([]byte, bool) {
	if len(list) == 0 {
		return dst, first
	}
	dst = append(appendKey(dst, key, first), '[')
	for i := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = entry(dst, &list[i])
	}
	return append(dst, ']'), false
}

// AppendJSON implements [Payload].
func (d Metrics) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	timing := func(dst []byte, m *TimingMetric) []byte {
		return append(appendFloatField(appendProcessor(dst, m.Processor, m.Model), "value", m.Value), '}')
	}
	dst, first = appendMetricList(dst, "ttfb", first, d.TTFB, timing)
	dst, first = appendMetricList(dst, "ttfa", first, d.TTFA, func(dst []byte, m *TTFAMetric) []byte {
		dst = appendFloatField(appendProcessor(dst, m.Processor, m.Model), "ttfa", m.TTFA)
		dst = appendFloatField(dst, "ttfb", m.TTFB)
		return append(appendFloatField(dst, "leading_silence", m.LeadingSilence), '}')
	})
	dst, first = appendMetricList(dst, "ttfat", first, d.TTFAT, func(dst []byte, m *TTFATMetric) []byte {
		dst = appendFloatField(appendProcessor(dst, m.Processor, m.Model), "ttfat", m.TTFAT)
		dst = appendFloatField(dst, "ttfb", m.TTFB)
		return append(appendFloatField(dst, "thinking_time", m.ThinkingTime), '}')
	})
	dst, first = appendMetricList(dst, "processing", first, d.Processing, timing)
	dst, first = appendMetricList(dst, "tokens", first, d.Tokens, func(dst []byte, u *TokenUsage) []byte {
		dst = appendInt(appendKey(append(dst, '{'), "prompt_tokens", true), int64(u.PromptTokens))
		dst = appendInt(appendKey(dst, "completion_tokens", false), int64(u.CompletionTokens))
		dst = appendInt(appendKey(dst, "total_tokens", false), int64(u.TotalTokens))
		opt := func(key string, v int) {
			if v != 0 {
				dst = appendInt(appendKey(dst, key, false), int64(v))
			}
		}
		opt("cache_read_input_tokens", u.CacheReadInputTokens)
		opt("cache_creation_input_tokens", u.CacheCreationInputTokens)
		opt("reasoning_tokens", u.ReasoningTokens)
		opt("input_audio_tokens", u.InputAudioTokens)
		opt("output_audio_tokens", u.OutputAudioTokens)
		opt("cache_read_input_audio_tokens", u.CacheReadInputAudioTokens)
		return append(dst, '}')
	})
	dst, first = appendMetricList(dst, "stt_usage", first, d.STTUsage, func(dst []byte, m *STTUsageMetric) []byte {
		dst = appendKey(appendProcessor(dst, m.Processor, m.Model), "value", false)
		dst = appendFloat(appendKey(append(dst, '{'), "audio_seconds", true), m.AudioSeconds)
		return append(dst, '}', '}')
	})
	dst, _ = appendMetricList(dst, "characters", first, d.Characters, func(dst []byte, m *CharactersMetric) []byte {
		return append(appendInt(appendKey(appendProcessor(dst, m.Processor, m.Model), "value", false), int64(m.Value)), '}')
	})
	return append(dst, '}')
}

// SearchResponse is the data of bot-llm-search-response (Google
// grounding results).
type SearchResponse struct {
	SearchResult    string
	RenderedContent string
	// Origins is always sent, as an array.
	Origins []SearchOrigin
}

// SearchOrigin is one grounding source.
type SearchOrigin struct {
	SiteURI, SiteTitle string
	Results            []SearchResult
}

// SearchResult is one grounded passage with its confidence scores.
type SearchResult struct {
	Text       string
	Confidence []float64
}

// AppendJSON implements [Payload].
func (d SearchResponse) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	if d.SearchResult != "" {
		dst = appendStringField(dst, "search_result", d.SearchResult, first)
		first = false
	}
	if d.RenderedContent != "" {
		dst = appendStringField(dst, "rendered_content", d.RenderedContent, first)
		first = false
	}
	dst = append(appendKey(dst, "origins", first), '[')
	for i, o := range d.Origins {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		f := true
		if o.SiteURI != "" {
			dst = appendStringField(dst, "site_uri", o.SiteURI, f)
			f = false
		}
		if o.SiteTitle != "" {
			dst = appendStringField(dst, "site_title", o.SiteTitle, f)
			f = false
		}
		dst = append(appendKey(dst, "results", f), '[')
		for j, r := range o.Results {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendStringField(append(dst, '{'), "text", r.Text, true)
			dst = append(appendKey(dst, "confidence", false), '[')
			for k, c := range r.Confidence {
				if k > 0 {
					dst = append(dst, ',')
				}
				dst = appendFloat(dst, c)
			}
			dst = append(dst, ']', '}')
		}
		dst = append(dst, ']', '}')
	}
	return append(dst, ']', '}')
}

// BotTTSAudio is the data of the legacy bot-tts-audio, which no
// current server sends. It is modelled for completeness.
type BotTTSAudio struct {
	// Audio is base64 PCM16.
	Audio       string
	SampleRate  int
	NumChannels int
}

// AppendJSON implements [Payload].
func (d BotTTSAudio) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "audio", d.Audio, true)
	dst = appendInt(appendKey(dst, "sample_rate", false), int64(d.SampleRate))
	dst = appendInt(appendKey(dst, "num_channels", false), int64(d.NumChannels))
	return append(dst, '}')
}

// AppendToContextResult is the data of the legacy
// append-to-context-result, which no server sends.
type AppendToContextResult struct {
	Result Payload
}

// AppendJSON implements [Payload].
func (d AppendToContextResult) AppendJSON(dst []byte) []byte {
	dst = appendPayload(appendKey(append(dst, '{'), "result", true), d.Result)
	return append(dst, '}')
}
