// Command phone-bot is the voice bot on a phone line: a Twilio number's
// incoming calls are answered by framewire's telephony transport, the
// caller speaks and hears the answers, speaking over the bot interrupts
// it, and keys pressed reach the pipeline (the bot says them back; # hangs
// up).
//
//	TWILIO_AUTH_TOKEN=... PUBLIC_URL=https://abc.ngrok.app go run ./examples/phone-bot
//
// It serves POST /twilio/answer, Twilio's incoming-call webhook (the
// X-Twilio-Signature checked with TWILIO_AUTH_TOKEN; twilio.Webhook), which
// answers with TwiML that connects the call to GET /twilio/stream, the
// bidirectional Media Stream (telephony.Server; the stream must carry the
// one-time token the webhook put in it). Each call's pipeline is
//
//	call in → keypad → VAD → STT → turn tracker → user aggregator → LLM → TTS → call out → assistant aggregator
//
// the pipeline of examples/voice-bot on the call's transport: the caller's
// 8 kHz μ-law is resampled to the pipeline's rate on the way in and the
// bot's voice to 8 kHz on the way out, and the output's marks make "the bot
// stopped speaking" mean the caller stopped hearing it. Without any
// service variable it runs offline: PocketSphinx listens when the binary
// is built with -tags pocketsphinx (Debian's libpocketsphinx-dev and
// pocketsphinx-en-us), the "LLM" repeats what it heard, and espeak-ng
// speaks. Without PocketSphinx the bot says it cannot hear, and answers
// keys. README.md says how to point a real number at it; cmd/callsim calls
// it without one.
//
// Environment:
//
//	ADDR                 listen address (default localhost:8080)
//	PUBLIC_URL           where Twilio reaches the bot, https://abc.ngrok.app (or the stream's
//	                     wss://abc.ngrok.app/twilio/stream); default: http://ADDR
//	TWILIO_AUTH_TOKEN    the account's auth token: checks the webhook's signature (required
//	                     unless PHONE_BOT_INSECURE=1)
//	TWILIO_ACCOUNT_SID   with the auth token: a call the bot ends (#) is hung up through
//	                     Twilio's REST API (TWILIO_REST_BASE_URL: another API root, for tests)
//	PHONE_BOT_INSECURE=1 no signature check: local tests and callsim only
//	SYSTEM_PROMPT        the system prompt (default: short spoken answers)
//	VOICE_DEBUG          any value: debug logs
//	OTEL_EXPORTER_OTLP_*, FRAMEWIRE_METRICS_ADDR
//	                     traces and metrics (docs/observability.md); each call's span carries
//	                     the provider and the call id, never as metric labels
//
//	Speech-to-text, the first that applies (VOICE_STT=deepgram|openai|pocketsphinx|none forces one):
//	DEEPGRAM_API_KEY     Deepgram live streaming (DEEPGRAM_MODEL)
//	STT_BASE_URL or OPENAI_API_KEY
//	                     an OpenAI-compatible /v1/audio/transcriptions server (STT_API_KEY, STT_MODEL)
//	otherwise            PocketSphinx, offline, when built with -tags pocketsphinx
//
//	LLM, the first that applies (VOICE_LLM=openai|anthropic|echo forces one):
//	OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL: any OpenAI-compatible Chat Completions server
//	ANTHROPIC_API_KEY    Anthropic Messages (ANTHROPIC_BASE_URL, ANTHROPIC_MODEL)
//	otherwise            the offline echo
//
//	Text-to-speech (VOICE_TTS=openai|espeak forces one):
//	TTS_BASE_URL or OPENAI_API_KEY
//	                     an OpenAI-compatible /v1/audio/speech server (TTS_API_KEY, TTS_MODEL, TTS_VOICE)
//	otherwise            espeak-ng (ESPEAK_VOICE, ESPEAK_SPEED)
package main
