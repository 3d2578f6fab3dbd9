package telnyx

// The message shapes are those of Telnyx's "Stream call media over
// WebSocket" reference (developers.telnyx.com/api-reference/websockets/
// stream-call-media-over-websocket, an AsyncAPI document): its connected
// and start examples, and its frame list: media, dtmf, mark, error and stop
// from Telnyx; media, mark and clear to Telnyx. Telnyx writes
// sequence_number, chunk and timestamp as JSON strings holding numbers;
// the decoder also takes plain numbers. The fields of dtmf, mark, stop and
// error were read from the frame descriptions and cross-checked with
// Pipecat's serializer (docs/decisions/telephony-wire.md).

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
	// MaxParameters is the most custom parameters (and tags) a start
	// message may carry (default [DefaultMaxParameters]).
	MaxParameters int
}

const (
	// DefaultMaxMessage is 64 KiB: Telnyx's media messages carry one RTP
	// payload (20 ms: 160 bytes of G.711, 320 of L16 at 8 kHz).
	DefaultMaxMessage = 64 << 10
	// DefaultMaxPayload is 16 KiB, half a second of L16 at 16 kHz.
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
	// ErrBadMessage: the message is not the JSON object Telnyx sends, or a
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
	// KindStart identifies the stream, the call and the media format,
	// before any media.
	KindStart
	// KindMedia carries one RTP payload of the caller's audio.
	KindMedia
	// KindDTMF is a key the caller pressed.
	KindDTMF
	// KindMark echoes a mark the server sent: the media before it has
	// finished playing (at once when nothing was queued), or a clear
	// dropped it.
	KindMark
	// KindError reports a streaming error, for instance a media frame
	// Telnyx could not use.
	KindError
	// KindStop ends the stream.
	KindStop
)

var kindNames = [...]string{"unknown", "connected", "start", "media", "dtmf", "mark", "error", "stop"}

// String returns the kind's event name as Telnyx spells it.
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
	// StreamID is the message's stream_id, which a transport checks
	// against start's.
	StreamID string

	Connected Connected
	Start     Start
	Media     Media
	DTMF      DTMF
	Mark      Mark
	Error     Error
	Stop      Stop
}

// Connected is the connected message.
type Connected struct {
	Version string // "1.0.0"
	// AuthToken is the streaming auth token configured for the stream,
	// which Telnyx also sends as the x-telnyx-streaming-auth-token header
	// of the WebSocket upgrade; empty when none is configured.
	AuthToken string
}

// Start is the start message's metadata.
type Start struct {
	StreamID      string
	UserID        string
	CallControlID string // the call's id in Call Control commands (hang-up)
	CallSessionID string
	From, To      string
	Tags          []string
	// ClientState is the base64 client_state the call was given, as sent.
	ClientState      string
	CustomParameters map[string]string
	Format           Format
}

// Format is the start message's media_format: the RTP codec of the
// payloads (PCMU, PCMA, G722, OPUS, AMR-WB, L16), its rate and channels.
type Format struct {
	Encoding   string
	SampleRate int
	Channels   int
}

// The encodings Telnyx names in media_format and accepts back in RTP mode.
const (
	EncodingPCMU  = "PCMU"
	EncodingPCMA  = "PCMA"
	EncodingG722  = "G722"
	EncodingOpus  = "OPUS"
	EncodingAMRWB = "AMR-WB"
	EncodingL16   = "L16"
)

// Media is a media message.
type Media struct {
	// Track is "inbound" or "outbound".
	Track string
	// Chunk counts the track's media messages.
	Chunk int64
	// Timestamp is the payload's position in the stream, in milliseconds.
	Timestamp int64
	// Payload is the decoded RTP payload (no RTP header), in the buffer the
	// caller gave Decode. Telnyx does not promise order: a transport that
	// needs it orders by Chunk.
	Payload []byte
}

// DTMF is a dtmf message.
type DTMF struct {
	Digit string // one of 0-9, *, #, A-D
}

// Mark is the echo of a mark.
type Mark struct {
	Name string
}

// Error is an error message's payload.
type Error struct {
	Code   int64
	Title  string
	Detail string
}

// Stop is the stop message.
type Stop struct {
	UserID        string
	CallControlID string
}

// Decoder reads Telnyx's incoming messages. Its zero value uses the
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
// then zero but for Kind, Name and StreamID when they were read.
func (d *Decoder) Decode(msg []byte, payload []byte) (Event, error) {
	lim := d.Limits.withDefaults()
	if len(msg) > lim.MaxMessage {
		return Event{}, fmt.Errorf("telnyx: message of %d bytes: %w (%d)", len(msg), ErrTooLarge, lim.MaxMessage)
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
			return Event{Kind: KindMedia, Name: w.Event, StreamID: w.StreamID},
				fmt.Errorf("telnyx: media of stream %q: media.payload: %w", w.StreamID, w.Media.Payload.Err)
		}
		return Event{}, fmt.Errorf("telnyx: %w: %v", ErrBadMessage, err)
	}
	ev := Event{Name: w.Event, Sequence: int64(w.SequenceNumber), StreamID: w.StreamID}
	fail := func(what string, cause error) (Event, error) {
		return Event{Kind: ev.Kind, Name: ev.Name, StreamID: ev.StreamID},
			fmt.Errorf("telnyx: %s of stream %q: %s: %w", ev.Name, ev.StreamID, what, cause)
	}
	switch w.Event {
	case "connected":
		ev.Kind = KindConnected
		ev.Connected = Connected{Version: w.Version, AuthToken: w.AuthToken}
	case "start":
		ev.Kind = KindStart
		s := w.Start
		if s == nil || w.StreamID == "" {
			return fail("no stream_id", ErrBadMessage)
		}
		if len(s.CustomParameters) > lim.MaxParameters || len(s.Tags) > lim.MaxParameters {
			return fail(fmt.Sprintf("%d custom parameters, %d tags", len(s.CustomParameters), len(s.Tags)), ErrTooLarge)
		}
		ev.Start = Start{
			StreamID: w.StreamID, UserID: s.UserID, CallControlID: s.CallControlID, CallSessionID: s.CallSessionID,
			From: s.From, To: s.To, Tags: s.Tags, ClientState: s.ClientState, CustomParameters: s.CustomParameters,
			Format: Format{Encoding: s.MediaFormat.Encoding, SampleRate: int(s.MediaFormat.SampleRate), Channels: int(s.MediaFormat.Channels)},
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
		ev.DTMF = DTMF{Digit: w.DTMF.Digit}
	case "mark":
		ev.Kind = KindMark
		if w.Mark == nil {
			return fail("no mark", ErrBadMessage)
		}
		ev.Mark = Mark{Name: w.Mark.Name}
	case "error":
		ev.Kind = KindError
		if w.Payload != nil {
			ev.Error = Error{Code: int64(w.Payload.Code), Title: w.Payload.Title, Detail: w.Payload.Detail}
		}
	case "stop":
		ev.Kind = KindStop
		if w.Stop != nil {
			ev.Stop = Stop{UserID: w.Stop.UserID, CallControlID: w.Stop.CallControlID}
		}
	case "":
		return fail("no event", ErrBadMessage)
	default:
		if len(ev.Name) > 64 {
			ev.Name = ev.Name[:64]
		}
		return Event{Kind: KindUnknown, Name: ev.Name, Sequence: ev.Sequence, StreamID: ev.StreamID}, nil
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
		case "sequence_number":
			v, ok := s.Value()
			return ok && seq.UnmarshalJSON(v) == nil
		case "stream_id":
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
		case "version", "x-telnyx-streaming-auth-token", "start", "dtmf", "mark", "payload", "stop":
			return false // another event's field: encoding/json's path decides
		}
		if jsonwire.Foreign(key, "event", "sequence_number", "stream_id", "media", "version", "x-telnyx-streaming-auth-token", "start", "dtmf", "mark", "payload", "stop") {
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
		ev.StreamID = jsonwire.Intern(&d.sid, sid)
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

// wireMessage is every incoming message's fields; Telnyx's names.
type wireMessage struct {
	Event          string          `json:"event"`
	SequenceNumber jsonwire.Number `json:"sequence_number"`
	StreamID       string          `json:"stream_id"`
	Version        string          `json:"version"`
	AuthToken      string          `json:"x-telnyx-streaming-auth-token"`
	Start          *wireStart      `json:"start"`
	Media          wireMedia       `json:"media"`
	DTMF           *wireDTMF       `json:"dtmf"`
	Mark           *wireMark       `json:"mark"`
	Payload        *wireError      `json:"payload"`
	Stop           *wireStop       `json:"stop"`
}

type wireStart struct {
	UserID           string            `json:"user_id"`
	CallControlID    string            `json:"call_control_id"`
	CallSessionID    string            `json:"call_session_id"`
	From             string            `json:"from"`
	To               string            `json:"to"`
	Tags             []string          `json:"tags"`
	ClientState      string            `json:"client_state"`
	CustomParameters map[string]string `json:"custom_parameters"`
	MediaFormat      struct {
		Encoding   string          `json:"encoding"`
		SampleRate jsonwire.Number `json:"sample_rate"`
		Channels   jsonwire.Number `json:"channels"`
	} `json:"media_format"`
}

type wireMedia struct {
	Track     string           `json:"track"`
	Chunk     jsonwire.Number  `json:"chunk"`
	Timestamp jsonwire.Number  `json:"timestamp"`
	Payload   jsonwire.Payload `json:"payload"`
}

type wireDTMF struct {
	Digit string `json:"digit"`
}

type wireMark struct {
	Name string `json:"name"`
}

type wireError struct {
	Code   jsonwire.Number `json:"code"`
	Title  string          `json:"title"`
	Detail string          `json:"detail"`
}

type wireStop struct {
	UserID        string `json:"user_id"`
	CallControlID string `json:"call_control_id"`
}

// AppendMedia appends a media message to dst: payload, an RTP payload (no
// header) in the codec the stream was started with for bidirectional RTP
// mode, in base64. Telnyx accepts chunks of 20 ms to 30 s and plays them
// in order.
func AppendMedia(dst []byte, payload []byte) []byte {
	dst = append(dst, `{"event":"media","media":{"payload":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, payload)
	return append(dst, `"}}`...)
}

// AppendMark appends a mark message to dst: Telnyx sends a mark of the
// same name back when the media before it has finished playing (at once if
// none is queued), or when a clear drops it.
func AppendMark(dst []byte, name string) []byte {
	dst = append(dst, `{"event":"mark","mark":{"name":`...)
	dst = jsonwire.AppendString(dst, name)
	return append(dst, `}}`...)
}

// AppendClear appends a clear message to dst: Telnyx stops what it is
// playing, drops the queued media and sends the queued marks back.
func AppendClear(dst []byte) []byte {
	return append(dst, `{"event":"clear"}`...)
}
