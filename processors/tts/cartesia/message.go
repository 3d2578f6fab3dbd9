package cartesia

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/tts"
)

// message is one server message on the websocket: chunk, timestamps,
// phoneme_timestamps, flush_done, done or error.
type message struct {
	Type       string `json:"type"`
	ContextID  string `json:"context_id"`
	Done       bool   `json:"done"`
	StatusCode int    `json:"status_code"`
	// Data is base64 PCM (chunk).
	Data string `json:"data"`
	// WordTimestamps (timestamps).
	WordTimestamps *wordTimestamps `json:"word_timestamps"`
	// Error fields: the older single string, or title, message and code.
	Error     string `json:"error"`
	Title     string `json:"title"`
	Message   string `json:"message"`
	ErrorCode string `json:"error_code"`
}

type wordTimestamps struct {
	Words []string  `json:"words"`
	Start []float64 `json:"start"`
	End   []float64 `json:"end"`
}

// parseMessage decodes a server message and checks its shape.
func parseMessage(data []byte) (message, error) {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return message{}, fmt.Errorf("cartesia: bad message: %w", err)
	}
	if m.Type == "" {
		return message{}, fmt.Errorf("cartesia: message without a type: %.80q", data)
	}
	if w := m.WordTimestamps; w != nil && len(w.Words) != len(w.Start) {
		return message{}, fmt.Errorf("cartesia: timestamps for %d words with %d start times", len(w.Words), len(w.Start))
	}
	return m, nil
}

// appendAudio decodes the chunk's audio into dst.
func (m *message) appendAudio(dst []byte) ([]byte, error) {
	n := base64.StdEncoding.DecodedLen(len(m.Data))
	if cap(dst)-len(dst) < n {
		grown := make([]byte, len(dst), len(dst)+n)
		copy(grown, dst)
		dst = grown
	}
	k, err := base64.StdEncoding.Decode(dst[len(dst):len(dst)+n], []byte(m.Data))
	if err != nil {
		return dst, fmt.Errorf("cartesia: chunk for context %q: bad base64 audio: %w", m.ContextID, err)
	}
	return dst[:len(dst)+k], nil
}

// words converts the timestamps, dropping words with impossible times.
func (m *message) words() []tts.Word {
	w := m.WordTimestamps
	if w == nil {
		return nil
	}
	out := make([]tts.Word, 0, len(w.Words))
	for i, text := range w.Words {
		s := w.Start[i]
		if text == "" || math.IsNaN(s) || s < 0 || s > 24*3600 {
			continue
		}
		out = append(out, tts.Word{Text: text, Start: time.Duration(s * float64(time.Second))})
	}
	return out
}

// apiError turns an error message into an error.
func (m *message) apiError() *APIError {
	e := &APIError{StatusCode: m.StatusCode, Code: m.ErrorCode, ContextID: m.ContextID}
	switch {
	case m.Title != "" && m.Message != "":
		e.Message = m.Title + ": " + m.Message
	case m.Message != "":
		e.Message = m.Message
	case m.Title != "":
		e.Message = m.Title
	default:
		e.Message = m.Error
	}
	return e
}

// APIError is an error message from Cartesia for one generation.
type APIError struct {
	// StatusCode is the status the message carries (400 for a bad
	// request).
	StatusCode int
	// Message describes the error.
	Message string
	// Code is Cartesia's error code, when given (model_not_found).
	Code string
	// ContextID is the generation it was about.
	ContextID string
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("cartesia: ")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "status %d: ", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		b.WriteString("error without a message")
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (code %s)", e.Code)
	}
	return b.String()
}

// Category implements [frames.Categorizer].
func (e *APIError) Category() frames.ErrorCategory {
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return frames.ErrorPermanent
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500:
		return frames.ErrorTransient
	}
	return frames.ErrorUnknown
}
