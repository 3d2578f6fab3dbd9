package openairealtime

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
)

// Error is a failure the Realtime API reported: a refused handshake (Status
// set) or an error event, or a response that failed. Error() is short and
// carries no upstream text; Message and Body keep what the server said,
// for the server's log.
type Error struct {
	// Status is the HTTP status of a refused handshake; 0 for errors
	// reported inside the session.
	Status int
	// Type is the error type: "invalid_request_error", "server_error",
	// "rate_limit_exceeded", ... (the server's words).
	Type string
	// Code is the error code, when the server gave one.
	Code string
	// Message is the server's explanation. It is not part of Error().
	Message string
	// Param names the offending parameter, when the server said.
	Param string
	// EventID is the id of the client event that caused it, when known.
	EventID string
	// Body is the start of a refused handshake's body. It is not part of
	// Error().
	Body string
	// RetryAfter is the wait a refused handshake asked for (Retry-After),
	// which the next attempt honours up to 30 s.
	RetryAfter time.Duration
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("openairealtime: ")
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, "connection refused with HTTP %d", e.Status)
	case e.rateLimited():
		b.WriteString("rate limited")
	case e.Type != "":
		b.WriteString(e.Type)
	default:
		b.WriteString("error")
	}
	if e.Code != "" && e.Code != e.Type {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	return b.String()
}

func (e *Error) rateLimited() bool {
	return e.Status == http.StatusTooManyRequests || strings.Contains(e.Type, "rate_limit") || strings.Contains(e.Code, "rate_limit")
}

// Category implements [frames.Categorizer]: a refused key or a request the
// server cannot accept is permanent for the handshake; rate limits, server
// errors and 5xx are transient; an invalid event inside a session is
// unknown (the session goes on).
func (e *Error) Category() frames.ErrorCategory {
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound || e.Status == http.StatusBadRequest:
		return frames.ErrorPermanent
	case e.rateLimited(), e.Status >= 500, e.Type == "server_error":
		return frames.ErrorTransient
	case e.Status != 0:
		return frames.ErrorTransient
	}
	return frames.ErrorUnknown
}

// connError is a lost or unusable connection; it is transient.
type connError struct{ err error }

func (e *connError) Error() string                  { return "openairealtime: connection lost: " + e.err.Error() }
func (e *connError) Unwrap() error                  { return e.err }
func (e *connError) Category() frames.ErrorCategory { return frames.ErrorTransient }

// maxBody bounds what is kept of a refused handshake's body.
const maxBody = 2048

// benign error codes: the server reports them, but nothing went wrong for
// the conversation (a cancel that raced the response's end, a commit of an
// empty buffer when the user said nothing).
func benign(code string) bool {
	switch code {
	case "response_cancel_not_active", "input_audio_buffer_commit_empty":
		return true
	}
	return false
}
