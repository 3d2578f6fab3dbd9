// Package stttest holds the helpers the tests of the streaming speech-to-
// text clients (processors/stt/assemblyai, processors/stt/deepgram) share:
// the caller's audio as frames, and the transcription frames a service
// pushed, listed compactly for a comparison. Each client's tests keep their
// own fake server, which speaks that service's wire shapes.
//
// It follows the net/http/httptest pattern: a normal package imported only
// from _test.go files. It imports only frames.
package stttest
