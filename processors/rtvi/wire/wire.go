package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Label is the value of the "label" field of every RTVI message.
const Label = "rtvi-ai"

// ProtocolVersion is the RTVI protocol version framewire speaks and
// announces in bot-ready (to clients that are not 1.x).
const ProtocolVersion = "2.1.0"

// Message types sent by the client (docs/protocol.md §5).
const (
	TypeClientReady           = "client-ready"
	TypeDisconnectBot         = "disconnect-bot"
	TypeClientMessage         = "client-message"
	TypeSendText              = "send-text"
	TypeAppendToContext       = "append-to-context" // removed from the server; answered "Unsupported type"
	TypeLLMFunctionCallResult = "llm-function-call-result"
	TypeDTMF                  = "dtmf"
	TypeRawAudio              = "raw-audio"
	TypeRawAudioBatch         = "raw-audio-batch"
	TypeUIEvent               = "ui-event"
	TypeUISnapshot            = "ui-snapshot"
	TypeUICancelJobGroup      = "ui-cancel-job-group"
	TypeUICancelTask          = "ui-cancel-task" // RTVI 1.3.0 name of ui-cancel-job-group
)

// Message types sent by the server (docs/protocol.md §6).
const (
	TypeBotReady                  = "bot-ready"
	TypeError                     = "error"
	TypeErrorResponse             = "error-response"
	TypeServerResponse            = "server-response"
	TypeServerMessage             = "server-message"
	TypeMetrics                   = "metrics"
	TypeUserStartedSpeaking       = "user-started-speaking"
	TypeUserStoppedSpeaking       = "user-stopped-speaking"
	TypeVADUserStartedSpeaking    = "vad-user-started-speaking"
	TypeVADUserStoppedSpeaking    = "vad-user-stopped-speaking"
	TypeUserMuteStarted           = "user-mute-started"
	TypeUserMuteStopped           = "user-mute-stopped"
	TypeBotStartedSpeaking        = "bot-started-speaking"
	TypeBotStoppedSpeaking        = "bot-stopped-speaking"
	TypeBotInterrupted            = "bot-interrupted"
	TypeUserTranscription         = "user-transcription"
	TypeUserLLMText               = "user-llm-text"
	TypeBotLLMStarted             = "bot-llm-started"
	TypeBotLLMStopped             = "bot-llm-stopped"
	TypeBotLLMText                = "bot-llm-text"
	TypeBotTranscription          = "bot-transcription" // deprecated by the client, still sent
	TypeBotOutput                 = "bot-output"
	TypeBotTTSStarted             = "bot-tts-started"
	TypeBotTTSStopped             = "bot-tts-stopped"
	TypeBotTTSText                = "bot-tts-text"
	TypeLLMFunctionCallStarted    = "llm-function-call-started"
	TypeLLMFunctionCallInProgress = "llm-function-call-in-progress"
	TypeLLMFunctionCallStopped    = "llm-function-call-stopped"
	TypeLLMFunctionCall           = "llm-function-call" // deprecated
	TypeUserAudioLevel            = "user-audio-level"
	TypeBotAudioLevel             = "bot-audio-level"
	TypeSystemLog                 = "system-log"
	TypeBotLLMSearchResponse      = "bot-llm-search-response"
	TypeUICommand                 = "ui-command"
	TypeUIJobGroup                = "ui-job-group"
	TypeUITask                    = "ui-task"                  // RTVI 1.3.0 name of ui-job-group
	TypeBotTTSAudio               = "bot-tts-audio"            // legacy; never sent by framewire
	TypeAppendToContextResult     = "append-to-context-result" // legacy; never sent by framewire
)

// Payload is the data of a message, or a value inside it (a ui-command
// payload, a server-message body), that can append its own JSON encoding.
// Every wire model of this package implements it; [RawJSON] carries
// already-encoded JSON and [JSON] wraps any Go value.
type Payload interface {
	AppendJSON(dst []byte) []byte
}

// RawJSON is a Payload holding one encoded JSON value, sent verbatim (so
// nulls inside it are kept, as Python does for plain dicts). The decoder
// uses it for the opaque parts of client messages. An empty RawJSON counts
// as absent; invalid JSON is sent as null rather than corrupt the message.
type RawJSON []byte

// AppendJSON implements [Payload].
func (j RawJSON) AppendJSON(dst []byte) []byte {
	if len(j) == 0 || validJSON(j) != nil {
		return append(dst, "null"...)
	}
	return append(dst, j...)
}

// MarshalJSON lets a RawJSON sit inside values encoded with encoding/json.
func (j RawJSON) MarshalJSON() ([]byte, error) { return j.AppendJSON(nil), nil }

// String returns the JSON text.
func (j RawJSON) String() string { return string(j) }

// JSON wraps a Go value that is encoded with encoding/json when the message
// is sent. It is for application data on cold paths (server messages,
// responses, command payloads); a value that cannot be encoded is sent as
// null. The value must not change after it has been handed over.
func JSON(v any) Payload { return jsonValue{v} }

type jsonValue struct{ v any }

func (j jsonValue) AppendJSON(dst []byte) []byte {
	b, err := json.Marshal(j.v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}

// Present reports whether p is written when it is a message's data or an
// optional member: not nil, and not an empty RawJSON.
func Present(p Payload) bool {
	switch v := p.(type) {
	case nil:
		return false
	case RawJSON:
		return len(v) > 0
	}
	return true
}

// appendPayload appends p, or null when it is absent.
func appendPayload(dst []byte, p Payload) []byte {
	if !Present(p) {
		return append(dst, "null"...)
	}
	return p.AppendJSON(dst)
}

// Message is one RTVI message: the envelope and its typed data. Decode
// returns messages whose Data is one of this package's client models (for
// example *SendText); senders fill Data with any [Payload].
type Message struct {
	// Type is the kebab-case message type, for example "bot-llm-text".
	Type string
	// ID is the request id. The encoder writes it for client messages and
	// for the three replies that echo a request (bot-ready, server-response,
	// error-response), even when empty; other server messages carry no id
	// unless one is set.
	ID string
	// Data is the payload; nil means the message has no data key.
	Data Payload

	idSet bool // decoded with an id (always true for decoded messages)
}

// carriesID reports whether messages of type t always have an id key.
func carriesID(t string) bool {
	switch t {
	case TypeBotReady, TypeServerResponse, TypeErrorResponse,
		TypeClientReady, TypeDisconnectBot, TypeClientMessage, TypeSendText, TypeAppendToContext,
		TypeLLMFunctionCallResult, TypeDTMF, TypeRawAudio, TypeRawAudioBatch,
		TypeUIEvent, TypeUISnapshot, TypeUICancelJobGroup, TypeUICancelTask:
		return true
	}
	return false
}

// AppendJSON appends the encoded message, keys in Python's order: label,
// type, id, data.
func (m Message) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"label":"rtvi-ai","type":`...)
	dst = appendString(dst, m.Type)
	if m.ID != "" || m.idSet || carriesID(m.Type) {
		dst = appendStringField(dst, "id", m.ID, false)
	}
	if Present(m.Data) {
		dst = appendKey(dst, "data", false)
		dst = m.Data.AppendJSON(dst)
	}
	return append(dst, '}')
}

// Encode returns the encoded message in a new buffer.
func (m Message) Encode() []byte { return m.AppendJSON(make([]byte, 0, 64)) }

// MarshalJSON implements json.Marshaler.
func (m Message) MarshalJSON() ([]byte, error) { return m.Encode(), nil }

// Errors returned by [Decode]. The processor maps each to the reply §5.1
// prescribes.
var (
	// ErrNotRTVI: the input is JSON but not an object with label "rtvi-ai".
	// It is ignored with a log line and no reply.
	ErrNotRTVI = errors.New("rtvi: not an RTVI message")
)

// EnvelopeError reports an RTVI message whose envelope (type, id, data) is
// invalid. The server answers with an error message (not an
// error-response): "Invalid RTVI transport message: <Err>".
type EnvelopeError struct {
	Err error
}

// Error returns the text sent to the client in the error message.
func (e *EnvelopeError) Error() string { return "Invalid RTVI transport message: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *EnvelopeError) Unwrap() error { return e.Err }

// DataError reports a message of a known type whose data does not match
// its model. The server answers with an error-response for ID:
// "Invalid message: <Err>".
type DataError struct {
	ID, Type string
	Err      error
}

// Error returns the text sent to the client in the error-response.
func (e *DataError) Error() string { return "Invalid message: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *DataError) Unwrap() error { return e.Err }

// Decode parses one client-to-server RTVI message. On success Data holds
// the typed model of a known type (see [DecodeData]), or the raw data of
// an unknown type (a [RawJSON], nil when absent), which the processor
// answers with "Unsupported type".
//
// Errors: input that is not JSON wraps [ErrInvalidJSON]; JSON that is not
// an object labelled "rtvi-ai" is [ErrNotRTVI]; a bad envelope is an
// [*EnvelopeError]; bad data of a known type is a [*DataError], returned
// with the envelope fields filled in.
func Decode(b []byte) (Message, error) {
	r := reader{b: b}
	if r.peek() != kindObject {
		if err := validJSON(b); err != nil {
			return Message{}, err
		}
		return Message{}, ErrNotRTVI
	}
	// One walk checks the whole input and picks out the envelope; the data
	// is then decoded from its (already checked) bytes.
	var (
		m                    Message
		label                string
		labelOK              bool
		haveType, haveID     bool
		typeErr, idErr, dErr error
		dataStart, dataEnd   = -1, -1
	)
	err := r.object(func(key []byte) error {
		switch string(key) {
		case "label":
			if r.peek() == kindString {
				s, err := r.str()
				label, labelOK = s, err == nil
				return err
			}
			labelOK = false
			return r.skip()
		case "type":
			k := r.peek()
			if k != kindString {
				typeErr = &fieldError{path: []string{"type"}, msg: "expected string, got " + k.String()}
				return r.skip()
			}
			s, err := r.str()
			m.Type, haveType, typeErr = s, true, nil
			return err
		case "id":
			k := r.peek()
			if k != kindString {
				idErr = &fieldError{path: []string{"id"}, msg: "expected string, got " + k.String()}
				haveID = false
				return r.skip()
			}
			s, err := r.str()
			m.ID, haveID, idErr = s, true, nil
			return err
		case "data":
			switch k := r.peek(); k {
			case kindObject:
				dErr = nil
				dataStart = r.i
			case kindNull:
				dErr = nil
				dataStart = -1
				return r.skip()
			default:
				dErr = &fieldError{path: []string{"data"}, msg: "expected object or null, got " + k.String()}
				dataStart = -1
				return r.skip()
			}
			if err := r.skip(); err != nil {
				return err
			}
			dataEnd = r.i
			return nil
		}
		return r.skip()
	})
	if err != nil {
		return Message{}, err
	}
	if r.ws(); r.i != len(b) {
		return Message{}, r.syntax("trailing data after value")
	}
	if !labelOK || label != Label {
		return Message{}, ErrNotRTVI
	}
	switch {
	case typeErr != nil:
		return Message{}, &EnvelopeError{typeErr}
	case !haveType:
		return Message{}, &EnvelopeError{missing("type")}
	case idErr != nil:
		return Message{Type: m.Type}, &EnvelopeError{idErr}
	case !haveID:
		return Message{Type: m.Type}, &EnvelopeError{missing("id")}
	case dErr != nil:
		return Message{Type: m.Type, ID: m.ID}, &EnvelopeError{dErr}
	}
	var data []byte
	if dataStart >= 0 {
		data = b[dataStart:dataEnd]
	}
	p, err := decodeData(m.Type, data)
	if err != nil {
		return Message{Type: m.Type, ID: m.ID}, &DataError{ID: m.ID, Type: m.Type, Err: err}
	}
	m.Data = p
	m.idSet = true
	return m, nil
}

// DecodeData decodes the data of a client message of type typ. data is
// the encoded data object, or nil when the message had no data (or null).
// Known types give their model (for example *UIEvent); unknown types
// give a copy of data as [RawJSON] (nil when absent). The client-ready
// model is lenient, as in Python: it never fails.
func DecodeData(typ string, data []byte) (Payload, error) {
	if data != nil {
		if err := validJSON(data); err != nil {
			return nil, err
		}
	}
	return decodeData(typ, data)
}

// decodeData is DecodeData for data already checked to be one JSON value.
func decodeData(typ string, data []byte) (Payload, error) {
	r := reader{b: data}
	var (
		p   Payload
		err error
	)
	switch typ {
	case TypeClientReady:
		if data == nil {
			return nil, nil
		}
		p = decodeClientReady(&r)
	case TypeDisconnectBot:
		if data == nil {
			return nil, nil
		}
		p, err = decodeEmpty(&r)
	case TypeClientMessage:
		p, err = decodeClientMessage(&r)
	case TypeSendText:
		p, err = decodeSendText(&r)
	case TypeAppendToContext:
		p, err = decodeAppendToContext(&r)
	case TypeLLMFunctionCallResult:
		p, err = decodeFunctionCallResult(&r)
	case TypeDTMF:
		p, err = decodeDTMF(&r)
	case TypeRawAudio:
		p, err = decodeRawAudio(&r)
	case TypeRawAudioBatch:
		p, err = decodeRawAudioBatch(&r)
	case TypeUIEvent:
		p, err = decodeUIEvent(&r)
	case TypeUISnapshot:
		p, err = decodeUISnapshot(&r)
	case TypeUICancelJobGroup:
		p, err = decodeUICancel(&r, VocabularyJobGroup)
	case TypeUICancelTask:
		p, err = decodeUICancel(&r, VocabularyTask)
	default:
		if data == nil {
			return nil, nil
		}
		return RawJSON(append([]byte(nil), data...)), nil
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// requireObject returns the error for data that is absent where the model
// needs an object.
func requireObject(r *reader) error {
	if len(r.b) == 0 {
		return &fieldError{msg: "data: expected object, got null"}
	}
	return nil
}

// String describes the message for logs (type and id only: data may be
// large or private).
func (m Message) String() string {
	if m.ID == "" {
		return m.Type
	}
	return fmt.Sprintf("%s#%s", m.Type, m.ID)
}

// Falsy reports whether j is a value Python treats as false: null,
// false, 0, "", {} or [].
func (j RawJSON) Falsy() bool {
	r := reader{b: j}
	switch r.peek() {
	case kindNull, kindInvalid:
		return true
	case kindBool:
		v, _ := r.boolean()
		return !v
	case kindNumber:
		v, err := r.number()
		return err == nil && v == 0
	case kindString:
		b, err := r.stringBytes(&r.scratch)
		return err == nil && len(b) == 0
	case kindObject:
		empty := true
		_ = r.object(func([]byte) error { empty = false; return errStop })
		return empty
	case kindArray:
		empty := true
		_ = r.array(func(int) error { empty = false; return errStop })
		return empty
	}
	return false
}

// errStop ends a walk early.
var errStop = stopError{}

type stopError struct{}

func (stopError) Error() string { return "stop" }
