// Package llmtest is a scripted model for the tests of the code that drives
// one: processors/llm's service, aggregators and function calls, and
// processors/uiagent's turns. Its Provider answers each request with the
// events the test scripts for it, records the requests, and can fail after
// its events or hang until its context ends, so that streaming, function
// calls, interruptions, cancellation and timeouts are tested without a model
// or the network. (A real client, such as processors/llm/openai, is tested
// against recorded HTTP traffic instead: see internal/openaiapi/openaiapitest.)
//
// It follows the net/http/httptest pattern: a normal package imported only
// from _test.go files. It imports only frames and processors/llm, so the
// tests of processors/llm that use it live in the external package llm_test.
package llmtest
