package twilio

// The message shapes are those of Twilio's "Media Streams - WebSocket
// Messages" page (twilio.com/docs/voice/media-streams/websocket-messages):
// its property tables and examples for connected, start, media, dtmf, stop
// and mark from Twilio, and media, mark and clear to Twilio. Twilio writes
// sequenceNumber, chunk and timestamp as JSON strings holding numbers; the
// decoder also takes plain numbers.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/framewire/framewire/transports/telephony/internal/jsonwire"
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
	ErrTooLarge = jsonwire.ErrTooLarge
	// ErrBadMessage: the message is not the JSON object Twilio sends, or a
	// field the event needs is missing or of the wrong type.
	ErrBadMessage = jsonwire.ErrBadMessage
	// ErrBadPayload: the media payload is not standard base64.
	ErrBadPayload = jsonwire.ErrBadPayload
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
// default [Limits]. A Decoder belongs to one connection: it remembers the
// last stream SID it read, to hand the same string back without
// allocating, so it is not safe for concurrent use.
type Decoder struct {
	Limits Limits

	sid string // the last streamSid read
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
	if ev, ok := d.decodeMedia(msg, payload, lim); ok {
		return ev, nil
	}
	return d.decodeJSON(msg, payload, lim)
}

// decodeJSON is Decode's path through encoding/json, for every message the
// fast path does not take.
func (d *Decoder) decodeJSON(msg, payload []byte, lim Limits) (Event, error) {
	var w wireMessage
	w.Media.Payload = jsonwire.Payload{Buf: payload, Limit: lim.MaxPayload}
	if err := json.Unmarshal(msg, &w); err != nil {
		if w.Media.Payload.Err != nil {
			return Event{Kind: KindMedia, Name: w.Event, StreamSID: w.StreamSid},
				fmt.Errorf("twilio: media of stream %q: media.payload: %w", w.StreamSid, w.Media.Payload.Err)
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
		if !m.Payload.Set {
			return fail("no media.payload", ErrBadMessage)
		}
		ev.Media = Media{Track: m.Track, Chunk: int64(m.Chunk), Timestamp: int64(m.Timestamp), Payload: m.Payload.Out}
	case "dtmf":
		ev.Kind = KindDTMF
		if w.DTMF == nil || !jsonwire.ValidDigit(w.DTMF.Digit) {
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
		if len(ev.Name) > 64 {
			ev.Name = ev.Name[:64]
		}
		return Event{Kind: KindUnknown, Name: ev.Name, Sequence: ev.Sequence, StreamSID: ev.StreamSID}, nil
	}
	return ev, nil
}

// decodeMedia is Decode's fast path: a well-formed media message read
// without encoding/json. It gives up (false) on anything else, errors
// included, for encoding/json's path to read.
func (d *Decoder) decodeMedia(msg, payload []byte, lim Limits) (Event, bool) {
	s := jsonwire.NewScanner(msg)
	var (
		isMedia bool
		seq     jsonwire.Number
		sid     []byte
		m       wireMedia
		track   []byte
	)
	m.Payload = jsonwire.Payload{Buf: payload, Limit: lim.MaxPayload}
	ok := s.Members(func(key []byte) bool {
		switch string(key) {
		case "event":
			v, ok := s.PlainString()
			isMedia = ok && string(v) == "media"
			return isMedia
		case "sequenceNumber":
			v, ok := s.Value()
			return ok && seq.UnmarshalJSON(v) == nil
		case "streamSid":
			v, ok := s.PlainString()
			sid = v
			return ok
		case "media":
			return s.Members(func(key []byte) bool {
				switch string(key) {
				case "track":
					v, ok := s.PlainString()
					track = v
					return ok
				case "chunk":
					v, ok := s.Value()
					return ok && m.Chunk.UnmarshalJSON(v) == nil
				case "timestamp":
					v, ok := s.Value()
					return ok && m.Timestamp.UnmarshalJSON(v) == nil
				case "payload":
					v, ok := s.Value()
					return ok && m.Payload.UnmarshalJSON(v) == nil
				}
				if jsonwire.Foreign(key, "track", "chunk", "timestamp", "payload") {
					return false
				}
				_, ok := s.Value()
				return ok
			})
		case "protocol", "version", "start", "dtmf", "mark", "stop":
			return false // another event's field: encoding/json's path decides
		}
		if jsonwire.Foreign(key, "event", "sequenceNumber", "streamSid", "media", "protocol", "version", "start", "dtmf", "mark", "stop") {
			return false
		}
		_, ok := s.Value()
		return ok
	})
	if !ok || !s.End() || !isMedia || !m.Payload.Set {
		return Event{}, false
	}
	ev := Event{Kind: KindMedia, Name: "media", Sequence: int64(seq),
		Media: Media{Chunk: int64(m.Chunk), Timestamp: int64(m.Timestamp), Payload: m.Payload.Out}}
	if sid != nil {
		ev.StreamSID = jsonwire.Intern(&d.sid, sid)
	}
	switch string(track) {
	case "inbound":
		ev.Media.Track = "inbound"
	case "outbound":
		ev.Media.Track = "outbound"
	default:
		ev.Media.Track = string(track)
	}
	return ev, true
}

// wireMessage is every incoming message's fields; Twilio's names.
type wireMessage struct {
	Event          string          `json:"event"`
	SequenceNumber jsonwire.Number `json:"sequenceNumber"`
	StreamSid      string          `json:"streamSid"`
	Protocol       string          `json:"protocol"`
	Version        string          `json:"version"`
	Start          *wireStart      `json:"start"`
	Media          wireMedia       `json:"media"`
	DTMF           *wireDTMF       `json:"dtmf"`
	Mark           *wireMark       `json:"mark"`
	Stop           *wireStop       `json:"stop"`
}

type wireStart struct {
	StreamSid        string            `json:"streamSid"`
	AccountSid       string            `json:"accountSid"`
	CallSid          string            `json:"callSid"`
	Tracks           []string          `json:"tracks"`
	CustomParameters map[string]string `json:"customParameters"`
	MediaFormat      struct {
		Encoding   string          `json:"encoding"`
		SampleRate jsonwire.Number `json:"sampleRate"`
		Channels   jsonwire.Number `json:"channels"`
	} `json:"mediaFormat"`
}

type wireMedia struct {
	Track     string           `json:"track"`
	Chunk     jsonwire.Number  `json:"chunk"`
	Timestamp jsonwire.Number  `json:"timestamp"`
	Payload   jsonwire.Payload `json:"payload"`
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

// AppendMedia appends a media message to dst: payload (μ-law at 8 kHz, no
// header) in base64 for the stream streamSID, which Twilio requires in
// every message it is sent. Twilio queues the audio and plays it in order.
func AppendMedia(dst []byte, streamSID string, payload []byte) []byte {
	dst = append(dst, `{"event":"media","streamSid":`...)
	dst = jsonwire.AppendString(dst, streamSID)
	dst = append(dst, `,"media":{"payload":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, payload)
	return append(dst, `"}}`...)
}

// AppendMark appends a mark message to dst: Twilio sends a mark of the
// same name back when the audio queued before it has played, or when a
// clear discards it, so the echo says how far the caller heard.
func AppendMark(dst []byte, streamSID, name string) []byte {
	dst = append(dst, `{"event":"mark","streamSid":`...)
	dst = jsonwire.AppendString(dst, streamSID)
	dst = append(dst, `,"mark":{"name":`...)
	dst = jsonwire.AppendString(dst, name)
	return append(dst, `}}`...)
}

// AppendClear appends a clear message to dst: Twilio discards the audio it
// has queued and echoes the marks queued with it.
func AppendClear(dst []byte, streamSID string) []byte {
	dst = append(dst, `{"event":"clear","streamSid":`...)
	dst = jsonwire.AppendString(dst, streamSID)
	return append(dst, '}')
}
