package frames

// Text is a piece of text travelling through the pipeline.
type Text struct {
	Base
	Ordered
	Text string
	// SkipTTS asks a TTS service not to speak the text.
	SkipTTS bool
	// NoContext keeps the text out of the LLM context (Pipecat's
	// append_to_context=False), so the zero value appends.
	NoContext bool
}

// LLMText is a token or chunk streamed by an LLM.
type LLMText struct {
	Base
	Ordered
	Text string
	// SkipTTS asks a TTS service not to speak the text.
	SkipTTS bool
}

// AggregatedText is text grouped by an aggregator (a sentence, a word).
type AggregatedText struct {
	Base
	Ordered
	Text string
	// AggregatedBy says how the text was grouped: "sentence", "word", ...
	AggregatedBy string
	// ContextID ties the text to a TTS request.
	ContextID string
	// WillBeSpoken is true when a TTS service will speak the text.
	WillBeSpoken bool
}

// AggregatedTextProgress reports how much of an AggregatedText segment a
// TTS with word timestamps has spoken, in step with the audio. The RTVI
// observer turns it into bot-output progress for 2.x clients.
type AggregatedTextProgress struct {
	Base
	Ordered
	// Text is the whole segment.
	Text string
	// AggregatedBy is the segment's aggregation ("sentence", ...).
	AggregatedBy string
	// SegmentID is the frame id of the segment's AggregatedText frame.
	SegmentID uint64
	// AccumulatedText is the part spoken so far; RemainingText the rest.
	AccumulatedText, RemainingText string
	// ContextID ties the progress to a TTS request.
	ContextID string
}

// TTSText is text a TTS service spoke, released in step with its audio.
type TTSText struct {
	Base
	Ordered
	Text string
	// AggregatedBy says how the text was grouped ("word" or "sentence").
	AggregatedBy string
	// ContextID ties the text to a TTS request.
	ContextID string
	// NoContext keeps the spoken text out of the LLM context (Pipecat's
	// append_to_context=False); it comes from the TTSSpeak that asked for
	// the speech, so the zero value appends.
	NoContext bool
	// Unspoken says the text could not be spoken (the synthesis failed or
	// timed out): clients show it as text (RTVI bot-output with spoken
	// false) at once instead of waiting for audio that will not come.
	Unspoken bool
}

// Transcription is a final speech-to-text result.
type Transcription struct {
	Base
	Ordered
	Text string
	// UserID names the speaker.
	UserID string
	// Timestamp is an ISO 8601 time string, as the STT service reported.
	Timestamp string
	// Language is a BCP 47 language tag, when known.
	Language string
	// Finalized is true when the service marked the result final.
	Finalized bool
	// Confidence is the service's confidence in Text, in (0, 1]; 0 when
	// the service reports none. It stays on the server (logs, traces): the
	// RTVI wire has no field for it.
	Confidence float64
}

// InterimTranscription is a partial speech-to-text result that may change.
type InterimTranscription struct {
	Base
	Ordered
	Text string
	// UserID names the speaker.
	UserID string
	// Timestamp is an ISO 8601 time string.
	Timestamp string
	// Language is a BCP 47 language tag, when known.
	Language string
}

// InputDTMF is one key pressed on a keypad (a phone's, or the client's
// DTMF message), delivered as urgent input in the order pressed.
type InputDTMF struct {
	Base
	System
	// Button is "0"-"9", "*" or "#".
	Button string
}

// InputTextRaw is text typed by the user, delivered as urgent input.
type InputTextRaw struct {
	Base
	System
	Text string
}

// TTSSpeak asks the TTS service to speak Text verbatim.
type TTSSpeak struct {
	Base
	Ordered
	Text string
	// NoContext keeps the text out of the LLM context.
	NoContext bool
}

// TTSStarted brackets the start of a TTS response.
type TTSStarted struct {
	Base
	Ordered
	// ContextID ties the frames of one TTS request together.
	ContextID string
}

// TTSStopped brackets the end of a TTS response.
type TTSStopped struct {
	Base
	Ordered
	// ContextID ties the frames of one TTS request together.
	ContextID string
}
