package elevenlabs

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/llmhttp"
)

// APIError is an error from ElevenLabs: an HTTP error answer (the HTTP
// transport, or a refused websocket handshake), an error message in the
// stream, or the websocket closed by the server with a reason.
type APIError struct {
	// StatusCode is the HTTP status; 0 for an error inside the stream.
	StatusCode int
	// CloseCode is the websocket close status (1008, policy violation,
	// for a bad key or an exhausted quota) when the server closed the
	// connection; 0 otherwise.
	CloseCode int
	// Code is ElevenLabs' machine-readable status, such as
	// "invalid_api_key", "quota_exceeded", "too_many_concurrent_requests",
	// "system_busy" or "invalid_input_message", when it gave one.
	Code string
	// Message is ElevenLabs' description of the error.
	Message string
	// RetryAfter is the wait the answer asked for (its Retry-After
	// header), or 0.
	RetryAfter time.Duration
	// RequestID is the answer's request-id header, for ElevenLabs' support.
	RequestID string
	// Body is the start of the answer's body, for the server log. Error
	// never includes it.
	Body string
}

// Error implements error: the status, ElevenLabs' code and its message,
// clipped; never the body.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("elevenlabs: ")
	switch {
	case e.StatusCode != 0:
		b.WriteString("HTTP " + strconv.Itoa(e.StatusCode))
		if t := http.StatusText(e.StatusCode); t != "" {
			b.WriteString(" " + t)
		}
	case e.CloseCode != 0:
		b.WriteString("connection closed by the server with status " + strconv.Itoa(e.CloseCode))
	default:
		b.WriteString("error in the stream")
	}
	if e.Code != "" {
		b.WriteString(": " + llmhttp.Clip(e.Code, 60))
	}
	if e.Message != "" {
		b.WriteString(": " + llmhttp.Clip(e.Message, 200))
	}
	return b.String()
}

// Category implements [frames.Categorizer]: rate limits, a busy service
// and server errors are transient; a bad key, an exhausted quota, an
// unknown voice and a bad request are permanent.
func (e *APIError) Category() frames.ErrorCategory {
	switch e.Code {
	case "too_many_concurrent_requests", "system_busy", "rate_limit_exceeded":
		return frames.ErrorTransient
	case "invalid_api_key", "quota_exceeded", "voice_not_found", "model_not_found",
		"max_character_limit_exceeded", "invalid_input_message", "payment_required",
		"missing_permissions", "detected_unusual_activity":
		return frames.ErrorPermanent
	}
	switch s := e.StatusCode; {
	case llmhttp.Retryable(s):
		return frames.ErrorTransient
	case s == 400, s == 401, s == 402, s == 403, s == 404, s == 422:
		return frames.ErrorPermanent
	}
	switch e.CloseCode {
	case 1011, 1012, 1013, 1014: // internal error, restart, try again later, bad gateway
		return frames.ErrorTransient
	case 1008: // policy violation: bad key or quota, unless it says otherwise
		msg := strings.ToLower(e.Message)
		if strings.Contains(msg, "quota") || strings.Contains(msg, "api key") || strings.Contains(msg, "api_key") || strings.Contains(msg, "unauthori") {
			return frames.ErrorPermanent
		}
	}
	return frames.ErrorUnknown
}

// bodyLimit is how much of an error body is kept for the log.
const bodyLimit = 2048

// readAPIError reads (bounded) and closes an error answer.
func readAPIError(resp *http.Response) *APIError {
	raw := llmhttp.ReadErrorBody(resp)
	e := parseAPIError(resp.StatusCode, raw)
	e.RetryAfter = max(llmhttp.ParseRetryAfter(resp.Header.Get("Retry-After")), 0)
	e.RequestID = resp.Header.Get("Request-Id")
	return e
}

// parseAPIError reads an error body: ElevenLabs' {"detail": {"status" or
// "code", "message"}}, FastAPI's validation list {"detail": [{"loc",
// "msg"}]} (422), a plain {"detail": "text"}, or anything else, of which
// only the status is reported (the body stays on the error for the log).
func parseAPIError(status int, raw []byte) *APIError {
	e := &APIError{StatusCode: status, Body: llmhttp.Clip(string(raw), bodyLimit)}
	var env struct {
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
		Error   string          `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return e
	}
	e.Message = env.Message
	if env.Error != "" {
		e.Code = env.Error
	}
	if len(env.Detail) == 0 {
		return e
	}
	var obj struct {
		Status  string `json:"status"`
		Code    string `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	var text string
	var items []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	switch {
	case json.Unmarshal(env.Detail, &obj) == nil:
		e.Code, e.Message = obj.Status, obj.Message
		if e.Code == "" {
			e.Code = obj.Code
		}
		if e.Code == "" {
			e.Code = obj.Type
		}
	case json.Unmarshal(env.Detail, &text) == nil:
		e.Message = text
	case json.Unmarshal(env.Detail, &items) == nil:
		var parts []string
		for _, it := range items {
			var loc []string
			for _, l := range it.Loc {
				loc = append(loc, fmt.Sprint(l))
			}
			parts = append(parts, strings.Join(loc, ".")+": "+it.Msg)
		}
		e.Message = strings.Join(parts, "; ")
	}
	return e
}
