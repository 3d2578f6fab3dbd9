// Package openaiapi holds the HTTP plumbing shared by the OpenAI-compatible
// clients under processors/ (llm/openai, stt/openai and tts/openai): building
// an authorized POST, retrying 429, 5xx and connection failures with capped
// exponential backoff and Retry-After, and reading an error answer into its
// fields.
//
// It sits below those clients and imports only package frames (for error
// categories). Each client keeps its own exported APIError type, error texts
// and error categories; this package only supplies the parts that were the
// same in all three.
package openaiapi
