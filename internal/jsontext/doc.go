// Package jsontext reads JSON text for the hand-written, allocation-free
// decoders under processors/. It holds the byte-level pieces (skipping
// white space, decoding one backslash escape with UTF-16 surrogate
// pairing, unescaping a string's contents into a caller's buffer) and
// [Scanner], the pull parser the stream-event decoders share: the LLM
// clients (processors/llm/openai, anthropic, gemini), the ElevenLabs
// speech client and, in its Strict mode, the AssemblyAI one.
//
// It sits below those decoders and imports only the standard library. The
// strict reader of processors/rtvi keeps its own design and uses only the
// byte-level pieces. Escapes decode exactly as encoding/json decodes them,
// so a scanner and encoding/json agree on every string both accept.
package jsontext
