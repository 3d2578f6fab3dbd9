// Package ttstest holds the helpers the tests of the websocket speech
// clients (processors/tts/cartesia, processors/tts/elevenlabs) share:
// collecting what one Synthesize call yields, reading a fixture, and the
// check that a connection a TTS service warmed up ends with its task. Each
// client's tests keep their own fake server, which speaks that service's
// wire shapes, and their own cases.
//
// It follows the net/http/httptest pattern: a normal package imported only
// from _test.go files. It imports frames, pipeline and processors/tts.
package ttstest
