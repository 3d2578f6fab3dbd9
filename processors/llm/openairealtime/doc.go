// Package openairealtime is framewire's speech-to-speech model: the OpenAI
// Realtime API over its WebSocket, in place of the STT, LLM and TTS of a
// cascaded pipeline.
//
//	transport.In → rtvi → [uiagent] → rt.Pipeline() → transport.Out → rt.PlayedTap()
//
// The [Service] configures the server session from [Options]
// (session.update: instructions, voice, PCM16 at 24 kHz both ways, server
// or framework-side turn detection, input transcription, tools), sends the
// user's audio (8 to 48 kHz, mono or stereo; other frames are dropped)
// through the project's resampler, and turns the server's
// events into the frames the rest of framewire already understands: the
// model's audio as [frames.TTSAudioRaw] at the pipeline's output rate
// between [frames.TTSStarted] and [frames.TTSStopped], its transcript as
// [frames.LLMText] and a [frames.TTSText] per sentence inside
// [frames.LLMFullResponseStart] and [frames.LLMFullResponseEnd], the
// user's transcript as [frames.Transcription] (and, for RTVI's
// user-llm-text, a one-message [frames.LLMContext] per user turn, which no
// inference follows here), server VAD as [frames.UserStartedSpeaking],
// [frames.UserStoppedSpeaking] and [frames.Interruption]. RTVI observers
// therefore send the same messages as for a cascaded pipeline. Typed
// turns ([frames.LLMMessagesAppend], RTVI's send-text) become message
// items; [frames.TTSSpeak] is said by the model verbatim.
//
// The server keeps the conversation: context frames from aggregators are
// dropped, and after a lost connection the new session starts empty (the
// processor reconnects a bounded number of times, honouring Retry-After).
// The server runs one response at a time and refuses a response.create
// while one is active, so every request for a response (a user turn, a
// function call's follow-up, a verbatim answer) waits for the active
// response's end and they go one at a time; one the server refuses
// anyway (it started a response by itself) goes again after that one. An
// interruption drops the requests still waiting. Options.Timeouts bound
// the connection, the server's first event and its silence.
//
// Function calls run through an [llm.Service] inside the Service, so they
// use the same registry, JSON Schema declarations, timeouts and
// settle-once rules as with any other model: every call settles once, its
// output goes back as a function_call_output item, and one response.create
// follows when the last call of the response has settled and a result
// asked for it. An interruption truncates the model's audio item at the
// position the user actually heard (counted by [Service.PlayedTap] after
// the output transport) and cancels the response.
//
// The UI agent works with it: give its BeforeInference to
// Options.BeforeResponse and the <ui_state> snapshot goes into the
// conversation before each user turn's response, in place of the previous
// turn's; register
// its reply tool, and the answers it speaks (frames.TTSSpeak) are said by
// the model verbatim.
package openairealtime
