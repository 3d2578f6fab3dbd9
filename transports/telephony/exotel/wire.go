package exotel

// The message shapes are those of Exotel's "WebSocket protocol" page
// (developer.exotel.com/docs/agentstream/websocket-protocol): its event
// table (connected, start, media, dtmf, mark and stop from Exotel; media,
// mark and clear to Exotel, the bidirectional ones for the Voicebot applet
// only) and its examples of connected, start, media and dtmf; the audio
// format and chunk sizes are those of "Working with the Stream and
// Voicebot Applet" (developer.exotel.com/docs/agentstream/
// stream-voicebot-applet). Exotel writes sequence_number, chunk,
// timestamp, sample_rate and the DTMF duration as JSON strings holding
// numbers; the decoder also takes plain numbers.

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
	// DefaultMaxMessage is 256 KiB: Exotel sends about 100 ms a message,
	// 3.2 KB of 16-bit PCM at 8 kHz, 4.8 KB at 24 kHz, a third more in
	// base64.
	DefaultMaxMessage = 256 << 10
	// DefaultMaxPayload is 128 KiB, above the 100 KB Exotel accepts in
	// one outgoing chunk.
	DefaultMaxPayload = 128 << 10
	// DefaultMaxParameters is 16 custom parameters; the applet passes at
	// most 3.
	DefaultMaxParameters = 16
)

// The outgoing media chunk sizes Exotel asks for, in bytes of payload
// before base64: smaller chunks risk distortion, larger ones time out, and
// sizes that are not a multiple of ChunkMultiple leave gaps. A transport
// batches its 20 ms frames to these sizes; AppendMedia does not check
// them.
const (
	ChunkMultiple = 320     // 20 ms of 16-bit PCM at 8 kHz
	MinChunk      = 3200    // 100 ms of 16-bit PCM at 8 kHz
	MaxChunk      = 100_000 // "100 KB"
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
	// ErrBadMessage: the message is not the JSON object Exotel sends, or a
	// field the event needs is missing or of the wrong type.
	ErrBadMessage = jsonwire.ErrBadMessage
	// ErrBadPayload: the media payload is not standard base64.
	ErrBadPayload = jsonwire.ErrBadPayload
)

// Kind is the kind of an incoming message.
type Kind uint8

const (
	// KindUnknown is an event this package does not know; [Event.Name]
	// holds its name. A transport should count and ignore it.
	KindUnknown Kind = iota
	// KindConnected is the first message.
	KindConnected
	// KindStart carries the stream's metadata, once, before any media.
	KindStart
	// KindMedia carries a chunk of the caller's audio (about 100 ms).
	KindMedia
	// KindDTMF is a key the caller pressed (Voicebot only).
	KindDTMF
	// KindMark echoes a mark the server sent, once the audio before it
	// has finished playing (Voicebot only).
	KindMark
	// KindStop ends the stream.
	KindStop
)

var kindNames = [...]string{"unknown", "connected", "start", "media", "dtmf", "mark", "stop"}

// String returns the kind's event name as Exotel spells it.
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
	// Sequence is the message's sequence_number, 0 when absent.
	Sequence int64
	// StreamSID is the message's stream_sid, which a transport checks
	// against start's.
	StreamSID string

	Start Start
	Media Media
	DTMF  DTMF
	Mark  Mark
	Stop  Stop
}

// Start is the start message's metadata.
type Start struct {
	StreamSID  string
	CallSID    string // the call's sid, for the REST API (hang-up)
	AccountSID string
	From, To   string
	// CustomParameters are the query parameters of the applet's URL.
	CustomParameters map[string]string
	Format           Format
}

// Format is the start message's media_format. The applet's default is
// audio/x-raw: 16-bit little-endian PCM ("slin"), mono, at the
// sample-rate the stream URL asks for (8000, 16000 or 24000 Hz).
type Format struct {
	Encoding   string
	SampleRate int
	// BitRate is Exotel's bit_rate: the bits per sample (16).
	BitRate int
}

// EncodingRaw is the applet's default media encoding: 16-bit
// little-endian PCM.
const EncodingRaw = "audio/x-raw"

// Media is a media message.
type Media struct {
	// Chunk counts the media messages.
	Chunk int64
	// Timestamp is the chunk's position in the stream, in milliseconds.
	Timestamp int64
	// Payload is the decoded audio, in the buffer the caller gave Decode.
	Payload []byte
}

// DTMF is a dtmf message.
type DTMF struct {
	Digit string // one of 0-9, *, #, A-D
	// Duration is how long the key was held, in milliseconds, 0 when
	// absent.
	Duration int64
}

// Mark is the echo of a mark.
type Mark struct {
	Name string
}

// Stop is the stop message.
type Stop struct {
	CallSID    string
	AccountSID string
	Reason     string
}

// Decoder reads Exotel's incoming messages. Its zero value uses the
// default [Limits]. A Decoder belongs to one connection: it remembers the
// last stream id it read, to hand the same string back without
// allocating, so it is not safe for concurrent use.
type Decoder struct {
	Limits Limits

	sid string // the last stream id read
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
		return Event{}, fmt.Errorf("exotel: message of %d bytes: %w (%d)", len(msg), ErrTooLarge, lim.MaxMessage)
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
				fmt.Errorf("exotel: media of stream %q: media.payload: %w", w.StreamSid, w.Media.Payload.Err)
		}
		return Event{}, fmt.Errorf("exotel: %w: %v", ErrBadMessage, err)
	}
	ev := Event{Name: w.Event, Sequence: int64(w.SequenceNumber), StreamSID: w.StreamSid}
	fail := func(what string, cause error) (Event, error) {
		return Event{Kind: ev.Kind, Name: ev.Name, StreamSID: ev.StreamSID},
			fmt.Errorf("exotel: %s of stream %q: %s: %w", ev.Name, ev.StreamSID, what, cause)
	}
	switch w.Event {
	case "connected":
		ev.Kind = KindConnected
	case "start":
		ev.Kind = KindStart
		s := w.Start
		if s == nil || s.StreamSid == "" {
			return fail("no start.stream_sid", ErrBadMessage)
		}
		if len(s.CustomParameters) > lim.MaxParameters {
			return fail(fmt.Sprintf("%d custom parameters", len(s.CustomParameters)), ErrTooLarge)
		}
		ev.Start = Start{
			StreamSID: s.StreamSid, CallSID: s.CallSid, AccountSID: s.AccountSid, From: s.From, To: s.To,
			CustomParameters: s.CustomParameters,
			Format:           Format{Encoding: s.MediaFormat.Encoding, SampleRate: int(s.MediaFormat.SampleRate), BitRate: int(s.MediaFormat.BitRate)},
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
		ev.Media = Media{Chunk: int64(m.Chunk), Timestamp: int64(m.Timestamp), Payload: m.Payload.Out}
	case "dtmf":
		ev.Kind = KindDTMF
		if w.DTMF == nil || !jsonwire.ValidDigit(w.DTMF.Digit) {
			return fail("no dtmf.digit of 0-9, *, #, A-D", ErrBadMessage)
		}
		ev.DTMF = DTMF{Digit: w.DTMF.Digit, Duration: int64(w.DTMF.Duration)}
	case "mark":
		ev.Kind = KindMark
		if w.Mark == nil {
			return fail("no mark", ErrBadMessage)
		}
		ev.Mark = Mark{Name: w.Mark.Name}
	case "stop":
		ev.Kind = KindStop
		if w.Stop != nil {
			ev.Stop = Stop{CallSID: w.Stop.CallSid, AccountSID: w.Stop.AccountSid, Reason: w.Stop.Reason}
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
	)
	m.Payload = jsonwire.Payload{Buf: payload, Limit: lim.MaxPayload}
	ok := s.Members(func(key []byte) bool {
		switch string(key) {
		case "event":
			v, ok := s.PlainString()
			isMedia = ok && string(v) == "media"
			return isMedia
		case "sequence_number":
			v, ok := s.Value()
			return ok && seq.UnmarshalJSON(v) == nil
		case "stream_sid":
			v, ok := s.PlainString()
			sid = v
			return ok
		case "media":
			return s.Members(func(key []byte) bool {
				switch string(key) {
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
				if jsonwire.Foreign(key, "chunk", "timestamp", "payload") {
					return false
				}
				_, ok := s.Value()
				return ok
			})
		case "start", "dtmf", "mark", "stop":
			return false // another event's field: encoding/json's path decides
		}
		if jsonwire.Foreign(key, "event", "sequence_number", "stream_sid", "media", "start", "dtmf", "mark", "stop") {
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
	return ev, true
}

// wireMessage is every incoming message's fields; Exotel's names.
type wireMessage struct {
	Event          string          `json:"event"`
	SequenceNumber jsonwire.Number `json:"sequence_number"`
	StreamSid      string          `json:"stream_sid"`
	Start          *wireStart      `json:"start"`
	Media          wireMedia       `json:"media"`
	DTMF           *wireDTMF       `json:"dtmf"`
	Mark           *wireMark       `json:"mark"`
	Stop           *wireStop       `json:"stop"`
}

type wireStart struct {
	StreamSid        string            `json:"stream_sid"`
	CallSid          string            `json:"call_sid"`
	AccountSid       string            `json:"account_sid"`
	From             string            `json:"from"`
	To               string            `json:"to"`
	CustomParameters map[string]string `json:"custom_parameters"`
	MediaFormat      struct {
		Encoding   string          `json:"encoding"`
		SampleRate jsonwire.Number `json:"sample_rate"`
		BitRate    jsonwire.Number `json:"bit_rate"`
	} `json:"media_format"`
}

type wireMedia struct {
	Chunk     jsonwire.Number  `json:"chunk"`
	Timestamp jsonwire.Number  `json:"timestamp"`
	Payload   jsonwire.Payload `json:"payload"`
}

type wireDTMF struct {
	Digit    string          `json:"digit"`
	Duration jsonwire.Number `json:"duration"`
}

type wireMark struct {
	Name string `json:"name"`
}

type wireStop struct {
	CallSid    string `json:"call_sid"`
	AccountSid string `json:"account_sid"`
	Reason     string `json:"reason"`
}

// AppendMedia appends a media message to dst: payload, audio in the
// stream's format, in base64, for the stream streamSID. Exotel queues it
// and plays it in order; see [ChunkMultiple], [MinChunk] and [MaxChunk]
// for the sizes it asks for.
func AppendMedia(dst []byte, streamSID string, payload []byte) []byte {
	dst = append(dst, `{"event":"media","stream_sid":`...)
	dst = jsonwire.AppendString(dst, streamSID)
	dst = append(dst, `,"media":{"payload":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, payload)
	return append(dst, `"}}`...)
}

// AppendMark appends a mark message to dst: Exotel sends a mark of the
// same name back once the audio sent before it has finished playing.
func AppendMark(dst []byte, streamSID, name string) []byte {
	dst = append(dst, `{"event":"mark","stream_sid":`...)
	dst = jsonwire.AppendString(dst, streamSID)
	dst = append(dst, `,"mark":{"name":`...)
	dst = jsonwire.AppendString(dst, name)
	return append(dst, `}}`...)
}

// AppendClear appends a clear message to dst: Exotel drops the audio it
// has queued for the stream.
func AppendClear(dst []byte, streamSID string) []byte {
	dst = append(dst, `{"event":"clear","stream_sid":`...)
	dst = jsonwire.AppendString(dst, streamSID)
	return append(dst, '}')
}
