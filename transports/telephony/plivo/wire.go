package plivo

// The message shapes are those of Plivo's "Stream Event Protocol" page
// (plivo.com/docs/voice/audio-streaming/audio-streaming) and its "Audio
// Streaming Protocol Reference": start and media from Plivo with their
// examples, dtmf, playedStream and clearedAudio; playAudio, checkpoint
// and clearAudio to Plivo, with the examples of the checkpoint and
// playAudio pages (docs.plivo.com .../the-stream-element/checkpoint-event,
// .../play-audio-event). Plivo writes sequenceNumber and chunk as JSON
// numbers and timestamp as a string; the decoder takes either.

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
	// MaxExtraHeaders is the longest extra_headers string a message may
	// carry (default [DefaultMaxExtraHeaders]).
	MaxExtraHeaders int
}

const (
	// DefaultMaxMessage is 64 KiB.
	DefaultMaxMessage = 64 << 10
	// DefaultMaxPayload is 32 KiB, a second of L16 at 16 kHz.
	DefaultMaxPayload = 32 << 10
	// DefaultMaxExtraHeaders is 1 KiB; Plivo limits the <Stream>'s
	// extraHeaders attribute to 512 bytes.
	DefaultMaxExtraHeaders = 1 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxMessage <= 0 {
		l.MaxMessage = DefaultMaxMessage
	}
	if l.MaxPayload <= 0 {
		l.MaxPayload = DefaultMaxPayload
	}
	if l.MaxExtraHeaders <= 0 {
		l.MaxExtraHeaders = DefaultMaxExtraHeaders
	}
	return l
}

// Errors a [Decoder] wraps, so a transport can count refusals by cause.
var (
	// ErrTooLarge: the message or a part of it is over the [Limits].
	ErrTooLarge = jsonwire.ErrTooLarge
	// ErrBadMessage: the message is not the JSON object Plivo sends, or a
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
	// KindStart is the first message: the call, the stream and the media
	// format. Plivo sends no connected message.
	KindStart
	// KindMedia carries a chunk of the caller's audio.
	KindMedia
	// KindDTMF is a key the caller pressed.
	KindDTMF
	// KindPlayedStream answers a checkpoint: the audio sent before it has
	// been played to the caller. Plivo sends it only when that audio
	// played; what a clear does to the checkpoints queued behind the
	// cleared audio is not documented.
	KindPlayedStream
	// KindClearedAudio answers a clearAudio: the queued audio is gone.
	KindClearedAudio
)

var kindNames = [...]string{"unknown", "start", "media", "dtmf", "playedStream", "clearedAudio"}

// String returns the kind's event name as Plivo spells it.
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
	// Sequence is the message's sequenceNumber, 0 when absent.
	Sequence int64
	// StreamID is the message's streamId (start's start.streamId), which a
	// transport checks against start's.
	StreamID string
	// ExtraHeaders is the message's extra_headers: the <Stream>'s
	// extraHeaders attribute as Plivo passes it on ("k=v;k=v").
	ExtraHeaders string

	Start Start
	Media Media
	DTMF  DTMF
	// Checkpoint is the name of a played checkpoint (KindPlayedStream).
	Checkpoint string
}

// Start is the start message's metadata.
type Start struct {
	CallID    string // the call's UUID, for the REST API (hang-up)
	StreamID  string
	AccountID string
	// Tracks are the audio tracks streamed: "inbound", "outbound".
	Tracks []string
	Format Format
}

// Format is the start message's mediaFormat. The <Stream>'s contentType
// chooses it: audio/x-l16 at 8000 or 16000 Hz (Plivo's default, 8000) or
// audio/x-mulaw at 8000 Hz; always mono.
type Format struct {
	Encoding   string
	SampleRate int
}

// The content types Plivo streams and plays.
const (
	EncodingMuLaw = "audio/x-mulaw"
	EncodingL16   = "audio/x-l16"
)

// Media is a media message.
type Media struct {
	// Track is "inbound" (the caller) or "outbound".
	Track string
	// Chunk counts the track's chunks.
	Chunk int64
	// Timestamp is Plivo's timestamp of the chunk, Unix milliseconds.
	Timestamp int64
	// Payload is the decoded audio, in the buffer the caller gave Decode.
	Payload []byte
}

// DTMF is a dtmf message.
type DTMF struct {
	Digit string // one of 0-9, *, #, A-D
}

// Decoder reads Plivo's incoming messages. Its zero value uses the
// default [Limits]. A Decoder belongs to one connection: it remembers the
// last stream id it read, to hand the same string back without
// allocating, so it is not safe for concurrent use.
type Decoder struct {
	Limits Limits

	sid   string // the last stream id read
	extra string // the last extra_headers read
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
		return Event{}, fmt.Errorf("plivo: message of %d bytes: %w (%d)", len(msg), ErrTooLarge, lim.MaxMessage)
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
				fmt.Errorf("plivo: media of stream %q: media.payload: %w", w.StreamID, w.Media.Payload.Err)
		}
		return Event{}, fmt.Errorf("plivo: %w: %v", ErrBadMessage, err)
	}
	ev := Event{Name: w.Event, Sequence: int64(w.SequenceNumber), StreamID: w.StreamID, ExtraHeaders: w.ExtraHeaders}
	if w.Event == "start" && w.Start != nil && ev.StreamID == "" {
		ev.StreamID = w.Start.StreamID
	}
	fail := func(what string, cause error) (Event, error) {
		return Event{Kind: ev.Kind, Name: ev.Name, StreamID: ev.StreamID},
			fmt.Errorf("plivo: %s of stream %q: %s: %w", ev.Name, ev.StreamID, what, cause)
	}
	if len(w.ExtraHeaders) > lim.MaxExtraHeaders {
		return fail(fmt.Sprintf("extra_headers of %d bytes", len(w.ExtraHeaders)), ErrTooLarge)
	}
	switch w.Event {
	case "start":
		ev.Kind = KindStart
		s := w.Start
		if s == nil || s.StreamID == "" {
			return fail("no start.streamId", ErrBadMessage)
		}
		ev.Start = Start{
			CallID: s.CallID, StreamID: s.StreamID, AccountID: s.AccountID, Tracks: s.Tracks,
			Format: Format{Encoding: s.MediaFormat.Encoding, SampleRate: int(s.MediaFormat.SampleRate)},
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
	case "playedStream":
		ev.Kind = KindPlayedStream
		if w.Name == nil {
			return fail("no name", ErrBadMessage)
		}
		ev.Checkpoint = *w.Name
	case "clearedAudio":
		ev.Kind = KindClearedAudio
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
		extra   []byte
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
		case "streamId":
			v, ok := s.PlainString()
			sid = v
			return ok
		case "extra_headers":
			v, ok := s.PlainString()
			extra = v
			return ok && len(v) <= lim.MaxExtraHeaders
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
		case "name", "start", "dtmf":
			return false // another event's field: encoding/json's path decides
		}
		if jsonwire.Foreign(key, "event", "sequenceNumber", "streamId", "media", "extra_headers", "name", "start", "dtmf") {
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
	if extra != nil {
		ev.ExtraHeaders = jsonwire.Intern(&d.extra, extra)
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

// wireMessage is every incoming message's fields; Plivo's names.
type wireMessage struct {
	Event          string          `json:"event"`
	SequenceNumber jsonwire.Number `json:"sequenceNumber"`
	StreamID       string          `json:"streamId"`
	ExtraHeaders   string          `json:"extra_headers"`
	Name           *string         `json:"name"`
	Start          *wireStart      `json:"start"`
	Media          wireMedia       `json:"media"`
	DTMF           *wireDTMF       `json:"dtmf"`
}

type wireStart struct {
	CallID      string   `json:"callId"`
	StreamID    string   `json:"streamId"`
	AccountID   string   `json:"accountId"`
	Tracks      []string `json:"tracks"`
	MediaFormat struct {
		Encoding   string          `json:"encoding"`
		SampleRate jsonwire.Number `json:"sampleRate"`
	} `json:"mediaFormat"`
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

// AppendPlayAudio appends a playAudio message to dst: payload, raw audio
// of contentType ([EncodingMuLaw] at 8000 Hz, or [EncodingL16] at 8000 or
// 16000 Hz) at sampleRate, in base64. Plivo queues it and plays it to the
// caller in order.
func AppendPlayAudio(dst []byte, contentType string, sampleRate int, payload []byte) []byte {
	dst = append(dst, `{"event":"playAudio","media":{"contentType":`...)
	dst = jsonwire.AppendString(dst, contentType)
	dst = append(dst, `,"sampleRate":`...)
	dst = strconv.AppendInt(dst, int64(sampleRate), 10)
	dst = append(dst, `,"payload":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, payload)
	return append(dst, `"}}`...)
}

// AppendCheckpoint appends a checkpoint message to dst: Plivo answers with
// a playedStream of the same name once the audio sent before it has been
// played, so the answer says how far the caller heard.
func AppendCheckpoint(dst []byte, streamID, name string) []byte {
	dst = append(dst, `{"event":"checkpoint","streamId":`...)
	dst = jsonwire.AppendString(dst, streamID)
	dst = append(dst, `,"name":`...)
	dst = jsonwire.AppendString(dst, name)
	return append(dst, '}')
}

// AppendClearAudio appends a clearAudio message to dst: Plivo drops the
// audio it has queued and answers with clearedAudio.
func AppendClearAudio(dst []byte, streamID string) []byte {
	dst = append(dst, `{"event":"clearAudio","streamId":`...)
	dst = jsonwire.AppendString(dst, streamID)
	return append(dst, '}')
}
