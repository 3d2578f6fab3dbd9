// Package bustest runs a test over every [bus.Bus] implementation, so
// that package bus and the packages built on it (processors/uiagent/uibus)
// check their calls the same way: [Each] runs a subtest over the
// in-process bus and over NATS with an embedded server, each with a
// caller's and a callee's bus ([Pair]) and a way to make the callee die
// without a word, and checks that the subtest leaves no goroutine behind.
//
// It is for tests only: it starts NATS servers (internal/natstest).
package bustest
