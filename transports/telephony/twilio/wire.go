package twilio

// The message shapes are those of Twilio's "Media Streams - WebSocket
// Messages" page (twilio.com/docs/voice/media-streams/websocket-messages):
// its property tables and examples for connected, start, media, dtmf, stop
// and mark from Twilio, and media, mark and clear to Twilio. Twilio writes
// sequenceNumber, chunk and timestamp as JSON strings holding numbers; the
// decoder also takes plain numbers.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Limits bound what a [Decoder] accepts. A zero field takes its default.
type Limits struct {
	// MaxMessage is the largest text message, in bytes (default
	// [DefaultMaxMessage]).
	MaxMessage int
	// MaxPayload is the largest decoded media payload, in bytes (default
	// [DefaultMaxPayload]).
	MaxPayload int
	// MaxParameters is the most custom parameters a start message may
	// carry (default [DefaultMaxParameters]).
	MaxParameters int
}

const (
	// DefaultMaxMessage is 64 KiB: Twilio's media messages carry 20 ms
	// (about 0.3 KiB) and its start message a few hundred bytes plus the
	// custom parameters.
	DefaultMaxMessage = 64 << 10
	// DefaultMaxPayload is 16 KiB of μ-law, two seconds at 8 kHz.
	DefaultMaxPayload = 16 << 10
	// DefaultMaxParameters is 64 custom parameters.
	DefaultMaxParameters = 64
)

func (l Limits) withDefaults() Limits {
	if l.MaxMessage <= 0 {
		l.MaxMessage = DefaultMaxMessage
	}
	if l.MaxPayload <= 0 {
		l.MaxPayload = DefaultMaxPayload
	}
	if l.MaxParameters <= 0 {
		l.MaxParameters = DefaultMaxParameters
	}
	return l
}

// Errors a [Decoder] wraps, so a transport can count refusals by cause.
var (
	// ErrTooLarge: the message or its payload is over the [Limits].
	ErrTooLarge = errors.New("over the limit")
	// ErrBadMessage: the message is not the JSON object Twilio sends, or a
	// field the event needs is missing or of the wrong type.
	ErrBadMessage = errors.New("malformed message")
	// ErrBadPayload: the media payload is not standard base64.
	ErrBadPayload = errors.New("payload is not base64")
)

// Kind is the kind of an incoming message.
type Kind uint8

const (
	// KindUnknown is an event this package does not know; [Event.Name]
	// holds its name. Twilio may add events: a transport should count and
	// ignore them rather than end the call.
	KindUnknown Kind = iota
	// KindConnected is the first message: the protocol and its version.
	KindConnected
	// KindStart carries the stream's metadata, once, before any media.
	KindStart
	// KindMedia carries 20 ms of the caller's audio.
	KindMedia
	// KindDTMF is a key the caller pressed.
	KindDTMF
	// KindMark echoes a mark the server sent: the audio before it has
	// been played, or cleared.
	KindMark
	// KindStop ends the stream: the call hung up or the stream was stopped.
	KindStop
)

var kindNames = [...]string{"unknown", "connected", "start", "media", "dtmf", "mark", "stop"}

// String returns the kind's event name as Twilio spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one decoded incoming message. Only the part named by Kind is
// set; the others are zero.
type Event struct {
	Kind Kind
	// Name is the message's event field; for KindUnknown, the unknown name
	// (at most 64 bytes of it).
	Name string
	// Sequence is the message's sequenceNumber (1 for the first message
	// after connected), 0 when absent.
	Sequence int64
	// StreamSID is the message's streamSid: every message but connected
	// names its stream, and a transport checks it against start's.
	StreamSID string

	Connected Connected
	Start     Start
	Media     Media
	DTMF      DTMF
	Mark      Mark
	Stop      Stop
}

// Connected is the connected message.
type Connected struct {
	Protocol string // "Call"
	Version  string // "1.0.0"
}

// Start is the start message's metadata.
type Start struct {
	StreamSID  string
	AccountSID string
	CallSID    string
	// Tracks are the media flows to expect: "inbound", "outbound".
	Tracks []string
	// CustomParameters are the <Parameter> elements of the <Stream>.
	CustomParameters map[string]string
	Format           Format
}

// Format is the start message's mediaFormat. Twilio documents one value:
// audio/x-mulaw at 8000 Hz, mono.
type Format struct {
	Encoding   string
	SampleRate int
	Channels   int
}

// EncodingMuLaw is the one encoding Twilio's media messages carry.
const EncodingMuLaw = "audio/x-mulaw"

// Media is a media message.
type Media struct {
	// Track is "inbound" (the caller) or "outbound" (what Twilio plays).
	Track string
	// Chunk counts the track's media messages from 1.
	Chunk int64
	// Timestamp is the audio's position in the stream, in milliseconds.
	Timestamp int64
	// Payload is the decoded μ-law, in the buffer the caller gave Decode.
	Payload []byte
}

// DTMF is a dtmf message.
type DTMF struct {
	Track string // "inbound_track"
	Digit string // one of 0-9, *, #, A-D
}

// Mark is the echo of a mark.
type Mark struct {
	Name string
}

// Stop is the stop message.
type Stop struct {
	AccountSID string
	CallSID    string
}

// Decoder reads Twilio's incoming messages. Its zero value uses the
// default [Limits]; it keeps no state between messages and may be shared.
type Decoder struct {
	Limits Limits
}

// Decode reads one text message. A media message's payload is decoded
// into payload's spare capacity (payload[:0] of a reused buffer of
// MaxPayload bytes keeps the media path free of buffer growth);
// Event.Media.Payload is that slice. An unknown event is not an error: it
// comes back as KindUnknown. An error names the event and its stream and
// wraps [ErrTooLarge], [ErrBadMessage] or [ErrBadPayload]; the Event is
// then zero but for Kind, Name and StreamSID when they were read.
func (d *Decoder) Decode(msg []byte, payload []byte) (Event, error) {
	lim := d.Limits.withDefaults()
	if len(msg) > lim.MaxMessage {
		return Event{}, fmt.Errorf("twilio: message of %d bytes: %w (%d)", len(msg), ErrTooLarge, lim.MaxMessage)
	}
	var w wireMessage
	w.Media.Payload = payloadField{buf: payload, limit: lim.MaxPayload}
	if err := json.Unmarshal(msg, &w); err != nil {
		if w.Media.Payload.err != nil {
			return Event{Kind: KindMedia, Name: w.Event, StreamSID: w.StreamSid},
				fmt.Errorf("twilio: media of stream %q: media.payload: %w", w.StreamSid, w.Media.Payload.err)
		}
		return Event{}, fmt.Errorf("twilio: %w: %v", ErrBadMessage, err)
	}
	ev := Event{Name: w.Event, Sequence: int64(w.SequenceNumber), StreamSID: w.StreamSid}
	fail := func(what string, cause error) (Event, error) {
		return Event{Kind: ev.Kind, Name: ev.Name, StreamSID: ev.StreamSID},
			fmt.Errorf("twilio: %s of stream %q: %s: %w", ev.Name, ev.StreamSID, what, cause)
	}
	switch w.Event {
	case "connected":
		ev.Kind = KindConnected
		ev.Connected = Connected{Protocol: w.Protocol, Version: w.Version}
	case "start":
		ev.Kind = KindStart
		s := w.Start
		if s == nil || s.StreamSid == "" {
			return fail("no start.streamSid", ErrBadMessage)
		}
		if len(s.CustomParameters) > lim.MaxParameters {
			return fail(fmt.Sprintf("%d custom parameters", len(s.CustomParameters)), ErrTooLarge)
		}
		ev.Start = Start{
			StreamSID: s.StreamSid, AccountSID: s.AccountSid, CallSID: s.CallSid,
			Tracks: s.Tracks, CustomParameters: s.CustomParameters,
			Format: Format{Encoding: s.MediaFormat.Encoding, SampleRate: int(s.MediaFormat.SampleRate), Channels: int(s.MediaFormat.Channels)},
		}
		if ev.StreamSID == "" {
			ev.StreamSID = s.StreamSid
		}
	case "media":
		ev.Kind = KindMedia
		m := &w.Media
		if !m.Payload.set {
			return fail("no media.payload", ErrBadMessage)
		}
		ev.Media = Media{Track: m.Track, Chunk: int64(m.Chunk), Timestamp: int64(m.Timestamp), Payload: m.Payload.out}
	case "dtmf":
		ev.Kind = KindDTMF
		if w.DTMF == nil || !validDigit(w.DTMF.Digit) {
			return fail("no dtmf.digit of 0-9, *, #, A-D", ErrBadMessage)
		}
		ev.DTMF = DTMF{Track: w.DTMF.Track, Digit: w.DTMF.Digit}
	case "mark":
		ev.Kind = KindMark
		if w.Mark == nil {
			return fail("no mark", ErrBadMessage)
		}
		ev.Mark = Mark{Name: w.Mark.Name}
	case "stop":
		ev.Kind = KindStop
		if w.Stop != nil {
			ev.Stop = Stop{AccountSID: w.Stop.AccountSid, CallSID: w.Stop.CallSid}
		}
	case "":
		return fail("no event", ErrBadMessage)
	default:
		ev.Kind = KindUnknown
		if len(ev.Name) > 64 {
			ev.Name = ev.Name[:64]
		}
		return Event{Kind: KindUnknown, Name: ev.Name, Sequence: ev.Sequence, StreamSID: ev.StreamSID}, nil
	}
	return ev, nil
}

// wireMessage is every incoming message's fields; Twilio's names.
type wireMessage struct {
	Event          string     `json:"event"`
	SequenceNumber number     `json:"sequenceNumber"`
	StreamSid      string     `json:"streamSid"`
	Protocol       string     `json:"protocol"`
	Version        string     `json:"version"`
	Start          *wireStart `json:"start"`
	Media          wireMedia  `json:"media"`
	DTMF           *wireDTMF  `json:"dtmf"`
	Mark           *wireMark  `json:"mark"`
	Stop           *wireStop  `json:"stop"`
}

type wireStart struct {
	StreamSid        string            `json:"streamSid"`
	AccountSid       string            `json:"accountSid"`
	CallSid          string            `json:"callSid"`
	Tracks           []string          `json:"tracks"`
	CustomParameters map[string]string `json:"customParameters"`
	MediaFormat      struct {
		Encoding   string `json:"encoding"`
		SampleRate number `json:"sampleRate"`
		Channels   number `json:"channels"`
	} `json:"mediaFormat"`
}

type wireMedia struct {
	Track     string       `json:"track"`
	Chunk     number       `json:"chunk"`
	Timestamp number       `json:"timestamp"`
	Payload   payloadField `json:"payload"`
}

type wireDTMF struct {
	Track string `json:"track"`
	Digit string `json:"digit"`
}

type wireMark struct {
	Name string `json:"name"`
}

type wireStop struct {
	AccountSid string `json:"accountSid"`
	CallSid    string `json:"callSid"`
}

// number is an integer Twilio writes as a string ("3") or a JSON number.
type number int64

func (n *number) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	*n = 0
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' || v > (1<<62)/10 {
			return errNotInteger
		}
		v = v*10 + int64(c-'0')
	}
	if len(b) == 0 {
		return errNotInteger
	}
	if neg {
		v = -v
	}
	*n = number(v)
	return nil
}

var errNotInteger = errors.New("not an integer of at most 18 digits")

// payloadField decodes a base64 JSON string as the decoder reads it, into
// buf's spare capacity (growing it only when the payload does not fit), so
// the payload is never held as a string.
type payloadField struct {
	buf   []byte
	limit int
	out   []byte
	set   bool
	err   error
}

func (p *payloadField) UnmarshalJSON(b []byte) error {
	p.set = true
	if len(b) < 2 || b[0] != '"' {
		p.err = fmt.Errorf("%w: not a string", ErrBadMessage)
		return p.err
	}
	b64 := b[1 : len(b)-1]
	if bytes.IndexByte(b64, '\\') >= 0 { // an escaped string: unquote it first
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			p.err = fmt.Errorf("%w: %v", ErrBadMessage, err)
			return p.err
		}
		b64 = []byte(s)
	}
	p.out, p.err = decodeBase64(b64, p.buf, p.limit)
	return p.err
}

// decodeBase64 decodes standard base64 into buf's spare capacity, refusing
// more than limit decoded bytes before decoding any.
func decodeBase64(b64, buf []byte, limit int) ([]byte, error) {
	n := base64.StdEncoding.DecodedLen(len(b64))
	if n > limit+2 { // DecodedLen counts padding as data
		return nil, fmt.Errorf("%d base64 bytes: %w (%d decoded)", len(b64), ErrTooLarge, limit)
	}
	if cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	out := buf[:n]
	m, err := base64.StdEncoding.Decode(out, b64)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	if m > limit {
		return nil, fmt.Errorf("%d bytes: %w (%d)", m, ErrTooLarge, limit)
	}
	return out[:m], nil
}

func validDigit(d string) bool {
	if len(d) != 1 {
		return false
	}
	c := d[0]
	return c >= '0' && c <= '9' || c == '*' || c == '#' || c >= 'A' && c <= 'D'
}

// AppendMedia appends a media message to dst: payload (μ-law at 8 kHz, no
// header) in base64 for the stream streamSID, which Twilio requires in
// every message it is sent. Twilio queues the audio and plays it in order.
func AppendMedia(dst []byte, streamSID string, payload []byte) []byte {
	dst = append(dst, `{"event":"media","streamSid":`...)
	dst = appendString(dst, streamSID)
	dst = append(dst, `,"media":{"payload":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, payload)
	return append(dst, `"}}`...)
}

// AppendMark appends a mark message to dst: Twilio sends a mark of the
// same name back when the audio queued before it has played, or when a
// clear discards it, so the echo says how far the caller heard.
func AppendMark(dst []byte, streamSID, name string) []byte {
	dst = append(dst, `{"event":"mark","streamSid":`...)
	dst = appendString(dst, streamSID)
	dst = append(dst, `,"mark":{"name":`...)
	dst = appendString(dst, name)
	return append(dst, `}}`...)
}

// AppendClear appends a clear message to dst: Twilio discards the audio it
// has queued and echoes the marks queued with it.
func AppendClear(dst []byte, streamSID string) []byte {
	dst = append(dst, `{"event":"clear","streamSid":`...)
	dst = appendString(dst, streamSID)
	return append(dst, '}')
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 passed through as bytes (Twilio's SIDs
// and the transport's mark names are ASCII).
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
