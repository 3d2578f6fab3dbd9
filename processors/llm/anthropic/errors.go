package anthropic

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
)

// APIError is an error answer from the API: an HTTP error status with
// Anthropic's {"type":"error","error":{...}} body, or an error event inside
// the stream (StatusCode 200).
type APIError struct {
	// StatusCode is the HTTP status (200 for an error inside the stream).
	StatusCode int
	// Type is Anthropic's error type, such as "overloaded_error".
	Type string
	// Message is Anthropic's error message.
	Message string
	// RequestID is the request-id header, for Anthropic's support.
	RequestID string
	// Body is the start of the response body, for the server log. Error
	// never includes it.
	Body string
}

// Error implements error. It names the status, the error type and the
// message, clipped; never the raw body.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("anthropic: ")
	if e.StatusCode == http.StatusOK {
		b.WriteString("error in stream")
	} else {
		b.WriteString("HTTP " + strconv.Itoa(e.StatusCode))
		if t := http.StatusText(e.StatusCode); t != "" {
			b.WriteString(" " + t)
		} else if e.StatusCode == 529 {
			b.WriteString(" Overloaded")
		}
	}
	if e.Type != "" {
		b.WriteString(": " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + llmhttp.Clip(e.Message, 200))
	}
	return b.String()
}

// Category implements [frames.Categorizer]: rate limits, overload and server
// errors are transient; bad requests, credentials, permissions and unknown
// models or endpoints (400, 401, 403, 404) are permanent. An error inside
// the stream is classified by its type.
func (e *APIError) Category() frames.ErrorCategory {
	status := e.StatusCode
	if status == http.StatusOK {
		status = typeStatus[e.Type]
	}
	switch {
	case llmhttp.Retryable(status):
		return frames.ErrorTransient
	case status == 400, status == 401, status == 403, status == 404:
		return frames.ErrorPermanent
	}
	return frames.ErrorUnknown
}

// typeStatus maps Anthropic's error types to the HTTP status each comes
// with, to classify errors sent inside the stream.
var typeStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
	"refusal":               400, // a stop_reason the client reports as an error
}

// bodyLimit is how much of an error body is kept for the log.
const bodyLimit = 2048

// readAPIError reads and closes an error answer.
func readAPIError(resp *http.Response) *APIError {
	raw := llmhttp.ReadErrorBody(resp)
	e := parseAPIError(resp.StatusCode, raw)
	e.RequestID = resp.Header.Get("Request-Id")
	return e
}

// parseAPIError reads an error body of any shape; one that is not
// Anthropic's error object keeps only its status (and the body for logs).
func parseAPIError(status int, raw []byte) *APIError {
	e := &APIError{StatusCode: status, Body: llmhttp.Clip(string(raw), bodyLimit)}
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil {
		e.Type, e.Message = env.Error.Type, env.Error.Message
	}
	return e
}
