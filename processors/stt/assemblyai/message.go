package assemblyai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/processors/stt"
)

// msgKind is the type of a server message.
type msgKind uint8

const (
	msgOther msgKind = iota // Warning, Heartbeat, unknown types
	msgBegin
	msgTurn
	msgSpeechStarted
	msgTermination
	msgError
)

// word is one entry of a Turn's words.
type word struct {
	Text        string  `json:"text"`
	Start       int64   `json:"start"`
	End         int64   `json:"end"`
	Confidence  float64 `json:"confidence"`
	WordIsFinal bool    `json:"word_is_final"`
}

// serverMessage holds the fields of every server message the client reads;
// one decode fills the ones the message has.
type serverMessage struct {
	Type string `json:"type"`

	// Begin
	ID        string          `json:"id"`
	ExpiresAt json.RawMessage `json:"expires_at"`

	// Turn
	TurnOrder           int64   `json:"turn_order"`
	TurnIsFormatted     bool    `json:"turn_is_formatted"`
	EndOfTurn           bool    `json:"end_of_turn"`
	Transcript          string  `json:"transcript"`
	EndOfTurnConfidence float64 `json:"end_of_turn_confidence"`
	Words               []word  `json:"words"`
	LanguageCode        string  `json:"language_code"`

	// Error
	ErrorCode int    `json:"error_code"`
	Error     string `json:"error"`
}

// parser decodes server messages, reusing its storage from one message to
// the next: what it returns is valid until the next parse.
type parser struct {
	msg  serverMessage
	text []byte // an interim transcript being joined from words
}

// parse decodes one message and says what it is.
func (p *parser) parse(data []byte) (msgKind, error) {
	p.msg = serverMessage{Words: p.msg.Words[:0]}
	if err := json.Unmarshal(data, &p.msg); err != nil {
		return msgOther, fmt.Errorf("assemblyai: bad message: %w", err)
	}
	switch p.msg.Type {
	case "Begin":
		if p.msg.ID == "" {
			return msgOther, errors.New("assemblyai: Begin without a session id")
		}
		return msgBegin, nil
	case "Turn":
		return msgTurn, nil
	case "SpeechStarted":
		return msgSpeechStarted, nil
	case "Termination":
		return msgTermination, nil
	case "Error":
		return msgError, nil
	case "":
		if p.msg.Error != "" {
			return msgError, nil // the older shape: {"error": "..."}
		}
	}
	return msgOther, nil
}

// event turns the Turn just parsed into an event; ok is false for a
// partial turn with no words yet. A turn is final at its end, and when
// formatted turns were asked for, at its formatted end (the unformatted
// one before it is still interim). Its transcript holds only the words
// that will not change, so an interim event joins all the words heard.
func (p *parser) event(formatTurns bool) (stt.Event, bool) {
	m := &p.msg
	if m.EndOfTurn && (m.TurnIsFormatted || !formatTurns) {
		return stt.Event{Kind: stt.EventFinal, Text: m.Transcript, Language: m.LanguageCode, Finalized: true}, true
	}
	text := m.Transcript
	if len(m.Words) > 0 {
		p.text = p.text[:0]
		for _, w := range m.Words {
			if w.Text == "" {
				continue
			}
			if len(p.text) > 0 {
				p.text = append(p.text, ' ')
			}
			p.text = append(p.text, w.Text...)
		}
		text = string(p.text)
	}
	if text == "" {
		return stt.Event{}, false
	}
	return stt.Event{Kind: stt.EventInterim, Text: text, Language: m.LanguageCode}, true
}

// expiresAt reads the Begin message's expires_at: Unix seconds (as
// documented) or an RFC 3339 time; the zero time otherwise.
func (p *parser) expiresAt() time.Time {
	raw := p.msg.ExpiresAt
	if len(raw) == 0 {
		return time.Time{}
	}
	if secs, err := strconv.ParseFloat(string(raw), 64); err == nil {
		if secs <= 0 || secs > 1e11 {
			return time.Time{}
		}
		return time.Unix(int64(secs), 0).UTC()
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// serverError is what an Error message said.
type serverError struct {
	code int
	text string
}

// maxServerText bounds the Error message text kept for the log.
const maxServerText = 300

func (p *parser) serverError() *serverError {
	return &serverError{code: p.msg.ErrorCode, text: shorten(p.msg.Error, maxServerText)}
}

// CloseError is a session the server closed with an error status. Error()
// names the status and what it means; Reason and Message hold the server's
// own words, for the log.
type CloseError struct {
	// Code is the websocket close status (AssemblyAI's error code).
	Code int
	// Reason is the close frame's reason.
	Reason string
	// Message is the text of the Error message the server sent before
	// closing, shortened.
	Message string
	// SessionID is the session's id, for support.
	SessionID string
}

// closeCodes says what AssemblyAI's close statuses mean, and which ones no
// new session can cure: credentials, the account, and requests the server
// will never accept.
var closeCodes = map[int]struct {
	what      string
	permanent bool
}{
	1008: {"unauthorized connection", true},
	1011: {"server error", false},
	1013: {"server overloaded, try again later", false},
	3005: {"server error", false},
	3006: {"input validation error", true},
	3007: {"audio chunk duration or rate violation", false},
	3008: {"session expired", false},
	3009: {"too many concurrent sessions", false},
	4000: {"bad sample rate", true},
	4001: {"not authorized", true},
	4002: {"insufficient funds", true},
	4003: {"feature requires a paid account", true},
	4004: {"session not found", false},
	4008: {"session expired", false},
	4010: {"session previously closed", false},
	4029: {"audio sent too fast", false},
	4030: {"session handled by another websocket", false},
	4031: {"session idle for too long", false},
	4032: {"audio too short", false},
	4033: {"audio too long", false},
	4034: {"audio too small to transcode", false},
	4100: {"invalid JSON", true},
	4101: {"invalid message schema", true},
	4102: {"too many streams", false},
	4103: {"session reconnected elsewhere", false},
}

// Error implements error.
func (e *CloseError) Error() string {
	s := "assemblyai: closed by the server with status " + strconv.Itoa(e.Code)
	switch c, known := closeCodes[e.Code]; {
	case known:
		s += " (" + c.what + ")"
	case e.Reason != "":
		s += " (" + shorten(e.Reason, 123) + ")"
	}
	return s
}

// Category implements [frames.Categorizer]: bad credentials, an account
// that cannot pay, and messages or parameters the server rejects are
// permanent; a dropped, expired or overloaded session is transient.
func (e *CloseError) Category() frames.ErrorCategory {
	if closeCodes[e.Code].permanent {
		return frames.ErrorPermanent
	}
	return frames.ErrorTransient
}
