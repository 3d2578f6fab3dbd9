// Package openaiapitest is a fake OpenAI-compatible HTTP server for the
// tests of the clients that share package openaiapi (processors/stt/openai,
// processors/tts/openai, ...): it answers requests with canned answers read
// from the test's testdata/, counts them, and can drop a connection the way
// a flaky network does, so retries and error texts are tested without the
// network.
//
// It follows the net/http/httptest pattern: a normal package imported only
// from _test.go files. Of framewire it imports only frames, for the error
// categories its checks compare.
package openaiapitest
