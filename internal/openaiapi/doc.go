// Package openaiapi holds what the OpenAI-compatible clients under
// processors/ (llm/openai, stt/openai and tts/openai) share about OpenAI's
// error answers: reading an error body of any shape (OpenAI's error
// object, a FastAPI detail, or plain text) into its fields, describing it
// in one short line, and classifying its status for the pipeline.
//
// Sending, retrying and timing the requests is internal/llmhttp's (one
// implementation for every upstream client, with its connect, first-byte
// and idle bounds). This package imports only package frames (for error
// categories). Each client keeps its own exported APIError type, error
// texts and error categories; this package only supplies the parts that
// were the same in all three.
package openaiapi
