// Package upstream holds what every service client (the LLM, STT and TTS
// clients under processors/) shares about reaching its service: the HTTP
// client that sends requests and dials websockets, the bounds on each
// phase of an exchange, and the retries of a request that failed before
// any answer. Each client's Options embeds [HTTP], so
//
//	anthropic.New(anthropic.Options{HTTP: upstream.HTTP{
//		Timeouts:   upstream.Timeouts{FirstByte: 5 * time.Second},
//		MaxRetries: -1,
//	}})
//
// means the same for every client: a zero field takes the client's
// default, a negative one turns that bound (or the retries) off. A bound
// that runs out is a [*TimeoutError], which is transient.
//
// The defaults are one of two sets: [LLMTimeouts] for the language
// models (connect 10s, first byte 30s, idle 30s) and [SpeechTimeouts] for
// speech in and out (10s, 10s, 20s); docs/security.md lists them.
package upstream
