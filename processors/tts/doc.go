// Package tts is framewire's text-to-speech layer: the [Service] processor
// that turns the LLM's streamed text into speech, and the small
// [Synthesizer] interface that engines implement.
//
// The service sits after the LLM service and before the output transport:
//
//	transport.In → STT → user aggregator → LLM → tts.Service → transport.Out → assistant aggregator
//
// It groups tokens into sentences with a [SentenceAggregator] (which never
// splits numbers, abbreviations or URLs), synthesizes each sentence as a
// job, resamples the audio to the pipeline's output rate, and releases the
// spoken text as frames.TTSText in step with the audio, so the assistant
// aggregator after the output transport records what was actually said.
// An interruption cancels the synthesis in flight.
//
// Engines live in sub-packages: tts/openai (any OpenAI-compatible
// /v1/audio/speech server, streaming PCM), tts/cartesia (Cartesia's
// websocket API with word timestamps) and tts/espeak (the offline default:
// Debian's espeak-ng run as a subprocess).
package tts
