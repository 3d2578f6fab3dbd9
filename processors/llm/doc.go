// Package llm is framewire's LLM layer: the conversation [Context], tools
// declared from Go types ([Function], [NewFunction]), the aggregator pair
// that keeps the context in step with the conversation ([Pair]: a user
// aggregator before the LLM service and an assistant aggregator after the
// output transport), and the streaming LLM [Service] that runs inference,
// streams text and dispatches function calls.
//
// A function may run on the server (a Go [Handler]) or on the client
// ([ClientFunction]: the browser's registerFunctionCallHandler answers
// through the RTVI processor). Either way each call settles exactly once
// (a result, its timeout, or its cancellation on interruption), and the
// assistant aggregator records one tool message per call.
//
// The service talks to a model through the small [Provider] interface, so
// any backend plugs in: the OpenAI-compatible client in package
// llm/openai, or an offline fake for demos and tests.
//
// A typical voice pipeline is
//
//	transport.In → STT → pair.User() → service → TTS → transport.Out → pair.Assistant()
//
// Every [frames.LLMContext] carries an immutable snapshot of the context,
// never the live object, so frames stay safe to read from any goroutine.
package llm
