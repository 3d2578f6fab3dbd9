// Command voice-bot is a complete voice agent: a Pipecat browser client
// (@pipecat-ai/client-js with the SmallWebRTC transport) connects to it,
// speaks, and hears the answer; speaking over the bot interrupts it.
//
//	go run ./examples/voice-bot
//
// Each session's pipeline is
//
//	WebRTC in → RTVI → VAD → STT → turn tracker → user aggregator → LLM → TTS → WebRTC out → assistant aggregator
//
// with the services picked from the environment. Without any variable set
// it runs offline: espeak-ng speaks (apt-get install espeak-ng), the "LLM"
// is an echo that repeats what it heard, and, since there is no offline
// speech-to-text, the bot tells each client that it cannot hear and answers
// typed messages (RTVI send-text) out loud. It serves no page: point a
// client at http://ADDR/api/offer (the demo issue ships the UI).
//
// Environment:
//
//	ADDR               listen address (default localhost:7860)
//	SYSTEM_PROMPT      the system prompt (default: short spoken answers)
//	VOICE_DEBUG        any value: debug logs
//
//	Speech-to-text, the first that applies (VOICE_STT=deepgram|assemblyai|openai|none forces one):
//	DEEPGRAM_API_KEY   Deepgram live streaming (DEEPGRAM_MODEL, default nova-3-general)
//	ASSEMBLYAI_API_KEY AssemblyAI Universal Streaming (ASSEMBLYAI_BASE_URL, ASSEMBLYAI_MODEL)
//	STT_BASE_URL       an OpenAI-compatible /v1/audio/transcriptions server: Groq,
//	                   Speaches/faster-whisper-server, whisper.cpp (STT_API_KEY, STT_MODEL)
//	OPENAI_API_KEY     OpenAI transcription (STT_MODEL, default gpt-4o-transcribe), at
//	                   OPENAI_BASE_URL when that is set and STT_BASE_URL is not
//	STT_LANGUAGE       language tag (default: detected)
//	VOICE_VAD=energy   the energy VAD instead of Silero VAD (the default when its model is
//	                   there: make silero-model)
//
//	LLM, the first that applies (VOICE_LLM=openai|anthropic|gemini|echo forces one):
//	OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL
//	                   any OpenAI-compatible Chat Completions server (OpenAI, Ollama,
//	                   vLLM, llama.cpp)
//	ANTHROPIC_API_KEY  Anthropic Messages (ANTHROPIC_BASE_URL, ANTHROPIC_MODEL)
//	GOOGLE_API_KEY or GEMINI_API_KEY
//	                   Gemini (GEMINI_BASE_URL, GEMINI_MODEL)
//	otherwise          the offline echo bot
//
//	Text-to-speech, the first that applies (VOICE_TTS=cartesia|elevenlabs|openai|espeak forces one):
//	CARTESIA_API_KEY + CARTESIA_VOICE_ID
//	                   Cartesia websocket with word timestamps (CARTESIA_MODEL)
//	ELEVENLABS_API_KEY + ELEVENLABS_VOICE_ID
//	                   ElevenLabs websocket with word timestamps (ELEVENLABS_MODEL,
//	                   ELEVENLABS_BASE_URL)
//	TTS_BASE_URL       an OpenAI-compatible /v1/audio/speech server such as Kokoro-FastAPI
//	                   (TTS_API_KEY, TTS_MODEL, TTS_VOICE)
//	OPENAI_API_KEY     OpenAI speech (TTS_MODEL, default gpt-4o-mini-tts; TTS_VOICE, default
//	                   alloy), at OPENAI_BASE_URL when that is set and TTS_BASE_URL is not
//	otherwise          espeak-ng (ESPEAK_VOICE, default en-us; ESPEAK_SPEED in words per minute)
//
// For example, fully local with Ollama, a faster-whisper server and Kokoro:
//
//	OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2 \
//	STT_BASE_URL=http://localhost:8000/v1 STT_MODEL=Systran/faster-whisper-small \
//	TTS_BASE_URL=http://localhost:8880/v1 TTS_MODEL=kokoro TTS_VOICE=af_heart \
//	go run ./examples/voice-bot
package main
