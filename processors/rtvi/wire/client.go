package wire

// This file holds the models of client-to-server message data (docs/protocol.md
// §5 and §8): decoders that validate like Python's pydantic models, and
// encoders that reproduce what was received (including explicit nulls in
// the about and snapshot models), so a decoded message re-encodes to an
// equal JSON value.

import (
	"errors"
	"strconv"
)

// OptBool is a boolean that may be absent on the wire, for options whose
// default is not false.
type OptBool uint8

// OptBool values.
const (
	OptUnset OptBool = iota
	OptFalse
	OptTrue
)

// OptBoolOf returns OptTrue or OptFalse.
func OptBoolOf(b bool) OptBool {
	if b {
		return OptTrue
	}
	return OptFalse
}

// Or returns the value, or def when unset.
func (b OptBool) Or(def bool) bool {
	switch b {
	case OptTrue:
		return true
	case OptFalse:
		return false
	}
	return def
}

func (r *reader) readOptBool() (OptBool, error) {
	v, err := r.readBool()
	if err != nil {
		return OptUnset, err
	}
	return OptBoolOf(v), nil
}

// ClientReady is the data of client-ready (§2.1).
type ClientReady struct {
	// Version is the client's RTVI protocol version, for example "2.1.0";
	// empty when the client sent none (or not a string).
	Version string
	// About describes the client library; nil when absent or invalid.
	About *AboutClient

	aboutErr error
}

// AboutError returns why the received about object was rejected (it is
// then replaced by {library:"unknown"}, never an error reply), or nil.
func (d *ClientReady) AboutError() error { return d.aboutErr }

// AppendJSON implements [Payload].
func (d ClientReady) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	if d.Version != "" {
		dst = appendStringField(dst, "version", d.Version, first)
		first = false
	}
	if d.About != nil {
		dst = appendKey(dst, "about", first)
		dst = d.About.AppendJSON(dst)
	}
	return append(dst, '}')
}

// decodeClientReady is lenient, like Python's handler: a version that is
// not a string counts as absent, and an invalid about is dropped (its
// error is kept for the log).
func decodeClientReady(r *reader) Payload {
	d := &ClientReady{}
	_ = r.object(func(key []byte) error {
		switch string(key) {
		case "version":
			if r.peek() == kindString {
				s, err := r.str()
				d.Version = s
				return err
			}
		case "about":
			if r.null() {
				return nil
			}
			sub, err := r.span()
			if err != nil {
				return err
			}
			a, err := decodeAbout(&sub)
			d.About, d.aboutErr = a, at(err, "about")
			return nil
		}
		return r.skip()
	})
	return d
}

// AboutClient is the about object of client-ready. Optional fields may
// arrive as null (Python clients) or be absent (the JS client); both are
// accepted and re-encoded as received.
type AboutClient struct {
	// Library is the client library, for example "@pipecat-ai/client-js".
	Library string
	// LibraryVersion is the library's version.
	LibraryVersion string
	// Platform is the OS name, for example "macOS".
	Platform string
	// PlatformVersion is the OS version.
	PlatformVersion string
	// PlatformDetails is an opaque object (browser, engine, ...).
	PlatformDetails RawJSON

	nulls uint8 // fields sent as explicit null
}

const (
	aboutNullLibraryVersion = 1 << iota
	aboutNullPlatform
	aboutNullPlatformVersion
	aboutNullPlatformDetails
)

// AppendJSON implements [Payload].
func (a AboutClient) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "library", a.Library, true)
	opt := func(key, v string, null uint8) {
		switch {
		case v != "":
			dst = appendStringField(dst, key, v, false)
		case a.nulls&null != 0:
			dst = append(appendKey(dst, key, false), "null"...)
		}
	}
	opt("library_version", a.LibraryVersion, aboutNullLibraryVersion)
	opt("platform", a.Platform, aboutNullPlatform)
	opt("platform_version", a.PlatformVersion, aboutNullPlatformVersion)
	switch {
	case len(a.PlatformDetails) > 0:
		dst = a.PlatformDetails.AppendJSON(appendKey(dst, "platform_details", false))
	case a.nulls&aboutNullPlatformDetails != 0:
		dst = append(appendKey(dst, "platform_details", false), "null"...)
	}
	return append(dst, '}')
}

func decodeAbout(r *reader) (*AboutClient, error) {
	a := &AboutClient{}
	haveLibrary := false
	optString := func(dst *string, null uint8, name string) error {
		s, isNull, err := r.readOptString()
		if isNull {
			a.nulls |= null
		}
		*dst = s
		return at(err, name)
	}
	err := r.readObject(func(key []byte) error {
		switch string(key) {
		case "library":
			s, err := r.readString()
			a.Library, haveLibrary = s, true
			return at(err, "library")
		case "library_version":
			return optString(&a.LibraryVersion, aboutNullLibraryVersion, "library_version")
		case "platform":
			return optString(&a.Platform, aboutNullPlatform, "platform")
		case "platform_version":
			return optString(&a.PlatformVersion, aboutNullPlatformVersion, "platform_version")
		case "platform_details":
			if r.null() {
				a.nulls |= aboutNullPlatformDetails
				return nil
			}
			raw, err := r.raw()
			a.PlatformDetails = raw
			return err
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	if !haveLibrary {
		return nil, missing("library")
	}
	return a, nil
}

// Empty is the data of messages without fields (disconnect-bot sends
// {}). Any members are ignored.
type Empty struct{}

// AppendJSON implements [Payload].
func (Empty) AppendJSON(dst []byte) []byte { return append(dst, '{', '}') }

func decodeEmpty(r *reader) (Payload, error) {
	return &Empty{}, r.skip()
}

// ClientMessage is the data of client-message: an app-defined type t
// and optional data d.
type ClientMessage struct {
	// T is the app-defined message type.
	T string
	// D is the app-defined data, verbatim; nil when absent.
	D RawJSON
}

// AppendJSON implements [Payload].
func (d ClientMessage) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "t", d.T, true)
	if len(d.D) > 0 {
		dst = d.D.AppendJSON(appendKey(dst, "d", false))
	}
	return append(dst, '}')
}

func decodeClientMessage(r *reader) (Payload, error) {
	if err := requireObject(r); err != nil {
		return nil, err
	}
	d := &ClientMessage{}
	haveT := false
	err := r.readObject(func(key []byte) error {
		switch string(key) {
		case "t":
			s, err := r.readString()
			d.T, haveT = s, true
			return at(err, "t")
		case "d":
			raw, err := r.raw()
			d.D = raw
			return err
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	if !haveT {
		return nil, missing("t")
	}
	return d, nil
}

// SendText is the data of send-text (RTVI 1.1+).
type SendText struct {
	// Content is the user's text.
	Content string
	// Options is nil when absent; then every option takes its default.
	Options *SendTextOptions
}

// SendTextOptions tunes send-text. Both options default to true.
type SendTextOptions struct {
	// RunImmediately interrupts the bot and runs the LLM at once.
	RunImmediately OptBool
	// AudioResponse asks for a spoken answer (false: text only).
	AudioResponse OptBool
}

// AppendJSON implements [Payload].
func (o SendTextOptions) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	if o.RunImmediately != OptUnset {
		dst = appendBool(appendKey(dst, "run_immediately", first), o.RunImmediately == OptTrue)
		first = false
	}
	if o.AudioResponse != OptUnset {
		dst = appendBool(appendKey(dst, "audio_response", first), o.AudioResponse == OptTrue)
	}
	return append(dst, '}')
}

// AppendJSON implements [Payload].
func (d SendText) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "content", d.Content, true)
	if d.Options != nil {
		dst = d.Options.AppendJSON(appendKey(dst, "options", false))
	}
	return append(dst, '}')
}

func decodeSendText(r *reader) (Payload, error) {
	if err := requireObject(r); err != nil {
		return nil, err
	}
	d := &SendText{}
	haveContent := false
	err := r.readObject(func(key []byte) error {
		switch string(key) {
		case "content":
			s, err := r.readString()
			d.Content, haveContent = s, true
			return at(err, "content")
		case "options":
			if r.null() {
				d.Options = nil
				return nil
			}
			o := &SendTextOptions{}
			err := r.readObject(func(key []byte) error {
				var err error
				switch string(key) {
				case "run_immediately":
					o.RunImmediately, err = r.readOptBool()
					return at(err, "run_immediately")
				case "audio_response":
					o.AudioResponse, err = r.readOptBool()
					return at(err, "audio_response")
				}
				return r.skip()
			})
			d.Options = o
			return at(err, "options")
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	if !haveContent {
		return nil, missing("content")
	}
	return d, nil
}

// AppendToContext is the data of the deprecated append-to-context,
// which the server answers with "Unsupported type append-to-context"
// (pipecat 1.0 removed it). It is decoded leniently, for logs.
type AppendToContext struct {
	Role           string
	Content        RawJSON
	RunImmediately OptBool
}

// AppendJSON implements [Payload].
func (d AppendToContext) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "role", d.Role, true)
	dst = appendPayload(appendKey(dst, "content", false), d.Content)
	if d.RunImmediately != OptUnset {
		dst = appendBool(appendKey(dst, "run_immediately", false), d.RunImmediately == OptTrue)
	}
	return append(dst, '}')
}

func decodeAppendToContext(r *reader) (Payload, error) {
	d := &AppendToContext{}
	if len(r.b) == 0 || r.peek() != kindObject {
		return d, nil
	}
	err := r.object(func(key []byte) error {
		switch string(key) {
		case "role":
			if r.peek() == kindString {
				s, err := r.str()
				d.Role = s
				return err
			}
		case "content":
			raw, err := r.raw()
			d.Content = raw
			return err
		case "run_immediately":
			if r.peek() == kindBool {
				b, err := r.boolean()
				d.RunImmediately = OptBoolOf(b)
				return err
			}
		}
		return r.skip()
	})
	return d, err
}

// FunctionCallResult is the data of llm-function-call-result: the
// result of a function call handled by the client. All four fields are
// required, as in Python.
type FunctionCallResult struct {
	FunctionName string
	ToolCallID   string
	// Arguments is the call's arguments object.
	Arguments RawJSON
	// Result is an object or a string.
	Result RawJSON
}

// AppendJSON implements [Payload].
func (d FunctionCallResult) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "function_name", d.FunctionName, true)
	dst = appendStringField(dst, "tool_call_id", d.ToolCallID, false)
	dst = appendPayload(appendKey(dst, "arguments", false), d.Arguments)
	dst = appendPayload(appendKey(dst, "result", false), d.Result)
	return append(dst, '}')
}

func decodeFunctionCallResult(r *reader) (Payload, error) {
	if err := requireObject(r); err != nil {
		return nil, err
	}
	d := &FunctionCallResult{}
	var seen uint8
	err := r.readObject(func(key []byte) error {
		var err error
		switch string(key) {
		case "function_name":
			seen |= 1
			d.FunctionName, err = r.readString()
			return at(err, "function_name")
		case "tool_call_id":
			seen |= 2
			d.ToolCallID, err = r.readString()
			return at(err, "tool_call_id")
		case "arguments":
			seen |= 4
			if k := r.peek(); k != kindObject {
				return at(wrongType("object", k), "arguments")
			}
			d.Arguments, err = r.raw()
			return err
		case "result":
			seen |= 8
			if k := r.peek(); k != kindObject && k != kindString {
				return at(wrongType("object or string", k), "result")
			}
			d.Result, err = r.raw()
			return err
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	for i, name := range []string{"function_name", "tool_call_id", "arguments", "result"} {
		if seen&(1<<i) == 0 {
			return nil, missing(name)
		}
	}
	return d, nil
}

// DTMF is the data of dtmf. RTVI 2.1.0 clients send Buttons; 2.0.x
// clients send one Button per message. framewire accepts both (docs/protocol.md
// §5), although Python 2.1 rejects the old form.
type DTMF struct {
	// Buttons are the keys pressed, in order ("0"-"9", "*", "#").
	Buttons []string
	// Button is the single key of the 2.0.x form.
	Button string
}

// Keys returns the keys of either form, in order.
func (d DTMF) Keys() []string {
	if len(d.Buttons) > 0 {
		return d.Buttons
	}
	if d.Button != "" {
		return []string{d.Button}
	}
	return nil
}

// AppendJSON implements [Payload].
func (d DTMF) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	if d.Buttons != nil {
		dst = append(appendKey(dst, "buttons", true), '[')
		for i, b := range d.Buttons {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, b)
		}
		dst = append(dst, ']')
		first = false
	}
	if d.Button != "" {
		dst = appendStringField(dst, "button", d.Button, first)
	}
	return append(dst, '}')
}

// validDTMFKey reports whether k is a DTMF key the protocol allows.
func validDTMFKey(k string) bool {
	if len(k) != 1 {
		return false
	}
	c := k[0]
	return (c >= '0' && c <= '9') || c == '*' || c == '#'
}

func decodeDTMF(r *reader) (Payload, error) {
	if err := requireObject(r); err != nil {
		return nil, err
	}
	d := &DTMF{}
	err := r.readObject(func(key []byte) error {
		switch string(key) {
		case "buttons":
			d.Buttons = []string{}
			err := r.readArray(func(i int) error {
				s, err := r.readString()
				if err == nil && !validDTMFKey(s) {
					err = &fieldError{msg: "invalid DTMF key " + quoteForError(s)}
				}
				d.Buttons = append(d.Buttons, s)
				return atIndex(err, i)
			})
			return at(err, "buttons")
		case "button":
			s, err := r.readString()
			if err == nil && !validDTMFKey(s) {
				err = &fieldError{msg: "invalid DTMF key " + quoteForError(s)}
			}
			d.Button = s
			return at(err, "button")
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	switch {
	case d.Buttons != nil && len(d.Buttons) == 0:
		return nil, &fieldError{path: []string{"buttons"}, msg: "at least 1 key required"}
	case d.Buttons == nil && d.Button == "":
		return nil, missing("buttons")
	}
	return d, nil
}

// quoteForError quotes a client string for an error text, cut short.
func quoteForError(s string) string {
	if len(s) > 32 {
		s = s[:32] + "..."
	}
	return string(appendString(nil, s))
}

// RawAudio is the data of raw-audio: base64 PCM16 with its format.
// The field names are camelCase on the wire.
type RawAudio struct {
	Base64Audio string
	SampleRate  int
	NumChannels int
}

// AppendJSON implements [Payload].
func (d RawAudio) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "base64Audio", d.Base64Audio, true)
	dst = appendAudioFormat(dst, d.SampleRate, d.NumChannels)
	return append(dst, '}')
}

// RawAudioBatch is the data of raw-audio-batch: several base64 PCM16
// buffers with one format.
type RawAudioBatch struct {
	Base64AudioBatch []string
	SampleRate       int
	NumChannels      int
}

// AppendJSON implements [Payload].
func (d RawAudioBatch) AppendJSON(dst []byte) []byte {
	dst = append(appendKey(append(dst, '{'), "base64AudioBatch", true), '[')
	for i, s := range d.Base64AudioBatch {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	dst = append(dst, ']')
	dst = appendAudioFormat(dst, d.SampleRate, d.NumChannels)
	return append(dst, '}')
}

func appendAudioFormat(dst []byte, rate, channels int) []byte {
	dst = appendInt(appendKey(dst, "sampleRate", false), int64(rate))
	return appendInt(appendKey(dst, "numChannels", false), int64(channels))
}

// ClientAudioRates are the sample rates a client's raw-audio may have: the
// rates real capture devices and codecs use, from 8 kHz to 48 kHz. Any
// other rate is refused before the audio is decoded, so a client cannot
// make the server resample from 1 Hz (16000 output samples per input
// sample) or design a filter for every prime rate it names.
var ClientAudioRates = [...]int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000}

// MaxClientAudioChannels is the most channels a client's raw-audio may have.
const MaxClientAudioChannels = 2

// ErrAudioFormat is wrapped by the [*DataError] of a raw-audio or
// raw-audio-batch whose sampleRate is not one of [ClientAudioRates] or
// whose numChannels is not 1 or 2. Unlike other audio problems, which
// Python only logs, the processor answers it with an error-response that
// names the bound.
var ErrAudioFormat = errors.New("unsupported audio format")

// audioRateError is the refusal of a rate not in ClientAudioRates; it
// names what is allowed so the client can tell what to send.
const audioRateError = "unsupported sample rate: want 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100 or 48000 Hz"

func clientAudioRate(v int64) bool {
	for _, r := range ClientAudioRates {
		if int64(r) == v {
			return true
		}
	}
	return false
}

func decodeAudioFormat(r *reader, key string, rate, channels *int, seen *uint8) (bool, error) {
	switch key {
	case "sampleRate":
		*seen |= 2
		v, err := r.readInt()
		if err == nil && !clientAudioRate(v) {
			err = &fieldError{msg: audioRateError + ", got " + strconv.FormatInt(v, 10), cause: ErrAudioFormat}
		}
		if err == nil {
			*rate = int(v)
		}
		return true, at(err, "sampleRate")
	case "numChannels":
		*seen |= 4
		v, err := r.readInt()
		if err == nil && (v < 1 || v > MaxClientAudioChannels) {
			err = &fieldError{msg: "unsupported channel count: want 1 or 2, got " + strconv.FormatInt(v, 10), cause: ErrAudioFormat}
		}
		if err == nil {
			*channels = int(v)
		}
		return true, at(err, "numChannels")
	}
	return false, nil
}

func decodeRawAudio(r *reader) (Payload, error) {
	if err := requireObject(r); err != nil {
		return nil, err
	}
	d := &RawAudio{}
	var seen uint8
	err := r.readObject(func(key []byte) error {
		if string(key) == "base64Audio" {
			seen |= 1
			s, err := r.readString()
			d.Base64Audio = s
			return at(err, "base64Audio")
		}
		if ok, err := decodeAudioFormat(r, string(key), &d.SampleRate, &d.NumChannels, &seen); ok {
			return err
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	for i, name := range []string{"base64Audio", "sampleRate", "numChannels"} {
		if seen&(1<<i) == 0 {
			return nil, missing(name)
		}
	}
	return d, nil
}

func decodeRawAudioBatch(r *reader) (Payload, error) {
	if err := requireObject(r); err != nil {
		return nil, err
	}
	d := &RawAudioBatch{}
	var seen uint8
	err := r.readObject(func(key []byte) error {
		if string(key) == "base64AudioBatch" {
			seen |= 1
			d.Base64AudioBatch = []string{}
			err := r.readArray(func(i int) error {
				s, err := r.readString()
				d.Base64AudioBatch = append(d.Base64AudioBatch, s)
				return atIndex(err, i)
			})
			return at(err, "base64AudioBatch")
		}
		if ok, err := decodeAudioFormat(r, string(key), &d.SampleRate, &d.NumChannels, &seen); ok {
			return err
		}
		return r.skip()
	})
	if err != nil {
		return nil, err
	}
	for i, name := range []string{"base64AudioBatch", "sampleRate", "numChannels"} {
		if seen&(1<<i) == 0 {
			return nil, missing(name)
		}
	}
	return d, nil
}

// UIEvent is the data of ui-event: an app-defined event name and an
// optional payload (RTVI 1.3.0+).
type UIEvent struct {
	Event string
	// Payload is verbatim; nil when absent.
	Payload RawJSON
}

// AppendJSON implements [Payload].
func (d UIEvent) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "event", d.Event, true)
	if len(d.Payload) > 0 {
		dst = d.Payload.AppendJSON(appendKey(dst, "payload", false))
	}
	return append(dst, '}')
}

func decodeUIEvent(r *reader) (Payload, error) {
	d := &UIEvent{}
	haveEvent := false
	if len(r.b) > 0 {
		err := r.readObject(func(key []byte) error {
			switch string(key) {
			case "event":
				s, err := r.readString()
				d.Event, haveEvent = s, true
				return at(err, "event")
			case "payload":
				raw, err := r.raw()
				d.Payload = raw
				return err
			}
			return r.skip()
		})
		if err != nil {
			return nil, err
		}
	}
	if !haveEvent {
		return nil, missing("event")
	}
	return d, nil
}

// UISnapshot is the data of ui-snapshot: the client's accessibility
// tree.
type UISnapshot struct {
	Tree *Snapshot
}

// AppendJSON implements [Payload].
func (d UISnapshot) AppendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), "tree", true)
	if d.Tree == nil {
		dst = append(dst, "null"...)
	} else {
		dst = d.Tree.AppendJSON(dst)
	}
	return append(dst, '}')
}

func decodeUISnapshot(r *reader) (Payload, error) {
	d := &UISnapshot{}
	if len(r.b) > 0 {
		err := r.readObject(func(key []byte) error {
			if string(key) == "tree" {
				s, err := decodeSnapshot(r)
				d.Tree = s
				return at(err, "tree")
			}
			return r.skip()
		})
		if err != nil {
			return nil, err
		}
	}
	if d.Tree == nil {
		return nil, missing("tree")
	}
	return d, nil
}

// UICancel is the data of ui-cancel-job-group ({job_id, reason?}) and
// of its RTVI 1.3.0 form ui-cancel-task ({task_id, reason?}).
type UICancel struct {
	// TaskID is the job group (task) to cancel.
	TaskID string
	// Reason is the optional human-readable reason; empty when absent.
	Reason string
	// Vocabulary is the form the message used.
	Vocabulary Vocabulary
}

// AppendJSON implements [Payload].
func (d UICancel) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), d.Vocabulary.idKey(), d.TaskID, true)
	if d.Reason != "" {
		dst = appendStringField(dst, "reason", d.Reason, false)
	}
	return append(dst, '}')
}

func decodeUICancel(r *reader, v Vocabulary) (Payload, error) {
	d := &UICancel{Vocabulary: v}
	idKey := v.idKey()
	haveID := false
	if len(r.b) > 0 {
		err := r.readObject(func(key []byte) error {
			switch string(key) {
			case idKey:
				s, err := r.readString()
				d.TaskID, haveID = s, true
				return at(err, idKey)
			case "reason":
				s, _, err := r.readOptString()
				d.Reason = s
				return at(err, "reason")
			}
			return r.skip()
		})
		if err != nil {
			return nil, err
		}
	}
	if !haveID {
		return nil, missing(idKey)
	}
	return d, nil
}
