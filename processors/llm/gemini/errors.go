package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
)

// APIError is an error answer from the API: an HTTP error status with
// Google's {"error":{"code","message","status"}} body, or an error object
// inside the stream (StatusCode 200).
type APIError struct {
	// StatusCode is the HTTP status (200 for an error inside the stream).
	StatusCode int
	// Code is the error's own code, which inside the stream says what the
	// HTTP status would have been.
	Code int
	// Status is Google's canonical status, such as "RESOURCE_EXHAUSTED".
	Status string
	// Message is the error's message.
	Message string
	// Reason is the ErrorInfo reason from the details, such as
	// "API_KEY_INVALID", when given.
	Reason string
	// Retry is the RetryInfo delay from the details, when given.
	Retry time.Duration
	// Body is the start of the response body, for the server log. Error
	// never includes it.
	Body string
}

// Error implements error. It names the status, Google's status and
// reason, and the message, clipped; never the raw body.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("gemini: ")
	if e.StatusCode == http.StatusOK {
		b.WriteString("error in stream")
	} else {
		b.WriteString("HTTP " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode))
	}
	if e.Status != "" {
		b.WriteString(": " + e.Status)
	}
	if e.Reason != "" {
		b.WriteString(" (" + e.Reason + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + llmhttp.Clip(e.Message, 200))
	}
	return b.String()
}

// Category implements [frames.Categorizer]: rate limits and server errors
// are transient; bad requests, credentials, permissions and unknown models
// (400, 401, 403, 404) are permanent. An error inside the stream is
// classified by its code.
func (e *APIError) Category() frames.ErrorCategory {
	status := e.StatusCode
	if status == http.StatusOK {
		status = e.Code
	}
	switch {
	case llmhttp.Retryable(status):
		return frames.ErrorTransient
	case status == 400, status == 401, status == 403, status == 404:
		return frames.ErrorPermanent
	}
	return frames.ErrorUnknown
}

// RetryAfter returns the delay the error's RetryInfo asked for, used when
// the answer has no Retry-After header.
func (e *APIError) RetryAfter() time.Duration { return e.Retry }

const bodyLimit = 2048

// readAPIError reads and closes an error answer.
func readAPIError(resp *http.Response) *APIError {
	return parseAPIError(resp.StatusCode, llmhttp.ReadErrorBody(resp))
}

// wireError is Google's error object.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

func (w wireError) apply(e *APIError) {
	e.Code, e.Message, e.Status = w.Code, w.Message, w.Status
	for _, d := range w.Details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo"):
			e.Reason = d.Reason
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				e.Retry = v
			}
		}
	}
}

// parseAPIError reads an error body: Google's {"error": {...}}, also
// wrapped in an array as streaming endpoints sometimes send it; any other
// body keeps only its status (and the body for logs).
func parseAPIError(status int, raw []byte) *APIError {
	e := &APIError{StatusCode: status, Body: llmhttp.Clip(string(raw), bodyLimit)}
	var env struct {
		Error wireError `json:"error"`
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(trimmed, &list) == nil && len(list) > 0 {
			trimmed = list[0]
		}
	}
	if json.Unmarshal(trimmed, &env) == nil {
		env.Error.apply(e)
	}
	return e
}

// StopError reports an answer Gemini stopped, or a prompt it refused, for a
// reason other than a normal end: a safety or recitation filter, a blocked
// prompt, a malformed function call.
type StopError struct {
	// Reason is the finishReason or blockReason, such as "SAFETY".
	Reason string
	// Prompt is set when the prompt was blocked (promptFeedback), not the
	// answer stopped.
	Prompt bool
}

// Error implements error.
func (e *StopError) Error() string {
	if e.Prompt {
		return "gemini: the prompt was blocked (blockReason " + e.Reason + ")"
	}
	what := "stopped"
	if e.filtered() {
		what = "stopped by Gemini's content filter"
	}
	return "gemini: the answer was " + what + " (finishReason " + e.Reason + ")"
}

func (e *StopError) filtered() bool {
	switch e.Reason {
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "LANGUAGE":
		return true
	}
	return e.Prompt
}

// Category implements [frames.Categorizer]: a filtered answer or a blocked
// prompt is permanent (the same context is refused again); other stops
// are unknown.
func (e *StopError) Category() frames.ErrorCategory {
	if e.filtered() {
		return frames.ErrorPermanent
	}
	return frames.ErrorUnknown
}
