// Package jsontext holds the byte-level pieces of JSON text that the
// hand-written, allocation-free scanners under processors/ share: skipping
// white space, decoding one backslash escape (with UTF-16 surrogate
// pairing) and unescaping a string's contents into a caller's buffer.
//
// It sits below those scanners and imports only the standard library. Each
// scanner keeps its own design (the strict reader of processors/rtvi, the
// lenient pull parser of processors/llm/openai), its own error texts and
// its own rules for control characters and invalid UTF-8; this package
// supplies only the logic that was the same in both. Escapes decode exactly
// as encoding/json decodes them, so a scanner and encoding/json agree on
// every string both accept.
package jsontext
