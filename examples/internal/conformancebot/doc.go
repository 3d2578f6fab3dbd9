// Package conformancebot is the conformance bot's pipeline
// (docs/protocol.md §10): RTVI, task groups and an echo LLM between a
// transport's input and output. examples/conformance serves it alone;
// examples/cluster runs it on every worker by default, so the same client
// test suites can run against a front door. Its behaviour, row by row, is
// documented and tested in examples/conformance.
package conformancebot
