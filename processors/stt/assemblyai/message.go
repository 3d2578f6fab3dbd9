package assemblyai

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/jsontext"
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

// serverMessage holds the fields of the rare messages the client reads
// with encoding/json (Begin and Error); Turns take the scanner's path.
type serverMessage struct {
	Type string `json:"type"`

	// Begin
	ID        string          `json:"id"`
	ExpiresAt json.RawMessage `json:"expires_at"`

	// Error
	ErrorCode int    `json:"error_code"`
	Error     string `json:"error"`
}

// parser decodes server messages, reusing its storage from one message to
// the next: what it holds is valid until the next parse. Turn messages,
// the stream's hot path, are scanned without allocating; the fields of a
// Turn it does not use (turn_order, the confidences, word timings) are
// skipped.
type parser struct {
	s jsontext.Scanner

	// The message just parsed.
	typ        []byte
	endOfTurn  bool
	formatted  bool
	transcript []byte
	words      []byte // the words' texts, joined with spaces
	lang       []byte

	msg serverMessage // a Begin or Error message
}

// parse decodes one message and says what it is.
func (p *parser) parse(data []byte) (msgKind, error) {
	p.typ, p.transcript, p.words, p.lang = p.typ[:0], p.transcript[:0], p.words[:0], p.lang[:0]
	p.endOfTurn, p.formatted = false, false
	s := &p.s
	s.Prefix, s.Strict = "assemblyai", true
	s.Reset(data)
	if !s.Open('{') {
		s.Fail("not an object")
		return msgOther, s.Err()
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "type":
			p.typ = s.AppendString(p.typ[:0])
		case "end_of_turn":
			p.endOfTurn = s.Bool()
		case "turn_is_formatted":
			p.formatted = s.Bool()
		case "transcript":
			p.transcript = s.AppendString(p.transcript[:0])
		case "language_code":
			p.lang = s.AppendString(p.lang[:0])
		case "words":
			p.scanWords()
		default:
			s.Skip()
		}
	}
	s.End()
	if err := s.Err(); err != nil {
		return msgOther, err
	}
	switch string(p.typ) {
	case "Turn":
		return msgTurn, nil
	case "SpeechStarted":
		return msgSpeechStarted, nil
	case "Termination":
		return msgTermination, nil
	case "Begin", "Error", "":
		return p.parseRare(data)
	}
	return msgOther, nil
}

// scanWords reads a Turn's words, keeping only their texts.
func (p *parser) scanWords() {
	s := &p.s
	p.words = p.words[:0]
	if !s.Open('[') {
		return
	}
	for first := true; s.More(']', &first); {
		if !s.Open('{') {
			continue // null; or an error, which ends the loop
		}
		start := len(p.words) // a word's text starts here (after a space)
		for f := true; s.More('}', &f); {
			if string(s.Key()) != "text" {
				s.Skip()
				continue
			}
			p.words = p.words[:start] // a repeated key: the last one wins
			if start > 0 {
				p.words = append(p.words, ' ')
			}
			n := len(p.words)
			if p.words = s.AppendString(p.words); len(p.words) == n {
				p.words = p.words[:start] // an empty text adds no space
			}
		}
	}
}

// parseRare decodes a Begin or Error message (or the older, typeless
// {"error": "..."}) with encoding/json.
func (p *parser) parseRare(data []byte) (msgKind, error) {
	p.msg = serverMessage{}
	if err := json.Unmarshal(data, &p.msg); err != nil {
		return msgOther, fmt.Errorf("assemblyai: bad %s message: %w", p.typ, err)
	}
	switch p.msg.Type {
	case "Begin":
		if p.msg.ID == "" {
			return msgOther, errors.New("assemblyai: Begin without a session id")
		}
		return msgBegin, nil
	case "Error":
		return msgError, nil
	case "":
		if p.msg.Error != "" {
			return msgError, nil
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
	var lang string
	if len(p.lang) > 0 {
		lang = string(p.lang)
	}
	if p.endOfTurn && (p.formatted || !formatTurns) {
		return stt.Event{Kind: stt.EventFinal, Text: string(p.transcript), Language: lang, Finalized: true}, true
	}
	text := p.words
	if len(text) == 0 {
		text = p.transcript
	}
	if len(text) == 0 {
		return stt.Event{}, false
	}
	return stt.Event{Kind: stt.EventInterim, Text: string(text), Language: lang}, true
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
