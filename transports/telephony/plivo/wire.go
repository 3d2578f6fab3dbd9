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
	ErrTooLarge = errors.New("over the limit")
	// ErrBadMessage: the message is not the JSON object Plivo sends, or a
	// field the event needs is missing or of the wrong type.
	ErrBadMessage = errors.New("malformed message")
	// ErrBadPayload: the media payload is not standard base64.
	ErrBadPayload = errors.New("payload is not base64")
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
	w.Media.Payload = payloadField{buf: payload, limit: lim.MaxPayload}
	if err := json.Unmarshal(msg, &w); err != nil {
		if w.Media.Payload.err != nil {
			return Event{Kind: KindMedia, Name: w.Event, StreamID: w.StreamID},
				fmt.Errorf("plivo: media of stream %q: media.payload: %w", w.StreamID, w.Media.Payload.err)
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
		if !m.Payload.set {
			return fail("no media.payload", ErrBadMessage)
		}
		ev.Media = Media{Track: m.Track, Chunk: int64(m.Chunk), Timestamp: int64(m.Timestamp), Payload: m.Payload.out}
	case "dtmf":
		ev.Kind = KindDTMF
		if w.DTMF == nil || !validDigit(w.DTMF.Digit) {
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
	s := scanner{b: msg}
	var (
		isMedia bool
		seq     number
		sid     []byte
		m       wireMedia
		track   []byte
		extra   []byte
	)
	m.Payload = payloadField{buf: payload, limit: lim.MaxPayload}
	ok := s.members(func(key []byte) bool {
		switch string(key) {
		case "event":
			v, ok := s.plainString()
			isMedia = ok && string(v) == "media"
			return isMedia
		case "sequenceNumber":
			v, ok := s.value()
			return ok && seq.UnmarshalJSON(v) == nil
		case "streamId":
			v, ok := s.plainString()
			sid = v
			return ok
		case "extra_headers":
			v, ok := s.plainString()
			extra = v
			return ok && len(v) <= lim.MaxExtraHeaders
		case "media":
			return s.members(func(key []byte) bool {
				switch string(key) {
				case "track":
					v, ok := s.plainString()
					track = v
					return ok
				case "chunk":
					v, ok := s.value()
					return ok && m.Chunk.UnmarshalJSON(v) == nil
				case "timestamp":
					v, ok := s.value()
					return ok && m.Timestamp.UnmarshalJSON(v) == nil
				case "payload":
					v, ok := s.value()
					return ok && m.Payload.UnmarshalJSON(v) == nil
				}
				if foreign(key, "track", "chunk", "timestamp", "payload") {
					return false
				}
				_, ok := s.value()
				return ok
			})
		case "name", "start", "dtmf":
			return false // another event's field: encoding/json's path decides
		}
		if foreign(key, "event", "sequenceNumber", "streamId", "media", "extra_headers", "name", "start", "dtmf") {
			return false
		}
		_, ok := s.value()
		return ok
	})
	if !ok || !s.end() || !isMedia || !m.Payload.set {
		return Event{}, false
	}
	ev := Event{Kind: KindMedia, Name: "media", Sequence: int64(seq),
		Media: Media{Chunk: int64(m.Chunk), Timestamp: int64(m.Timestamp), Payload: m.Payload.out}}
	if sid != nil {
		ev.StreamID = intern(&d.sid, sid)
	}
	if extra != nil {
		ev.ExtraHeaders = intern(&d.extra, extra)
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
	Event          string     `json:"event"`
	SequenceNumber number     `json:"sequenceNumber"`
	StreamID       string     `json:"streamId"`
	ExtraHeaders   string     `json:"extra_headers"`
	Name           *string    `json:"name"`
	Start          *wireStart `json:"start"`
	Media          wireMedia  `json:"media"`
	DTMF           *wireDTMF  `json:"dtmf"`
}

type wireStart struct {
	CallID      string   `json:"callId"`
	StreamID    string   `json:"streamId"`
	AccountID   string   `json:"accountId"`
	Tracks      []string `json:"tracks"`
	MediaFormat struct {
		Encoding   string `json:"encoding"`
		SampleRate number `json:"sampleRate"`
	} `json:"mediaFormat"`
}

type wireMedia struct {
	Track     string       `json:"track"`
	Chunk     number       `json:"chunk"`
	Timestamp number       `json:"timestamp"`
	Payload   payloadField `json:"payload"`
}

type wireDTMF struct {
	Digit string `json:"digit"`
}

// number is an integer the provider writes as a string ("3") or a JSON number.
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

// decodeBase64 decodes standard base64, padded or not, into buf's spare
// capacity, refusing more than limit decoded bytes before decoding any.
func decodeBase64(b64, buf []byte, limit int) ([]byte, error) {
	enc := base64.StdEncoding
	if len(b64)%4 != 0 {
		enc = base64.RawStdEncoding // the padding left out
	}
	n := enc.DecodedLen(len(b64))
	if n > limit+2 { // DecodedLen counts padding as data
		return nil, fmt.Errorf("%d base64 bytes: %w (%d decoded)", len(b64), ErrTooLarge, limit)
	}
	if cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	out := buf[:n]
	m, err := enc.Decode(out, b64)
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

// scanner walks one JSON text for Decode's media fast path: the media
// messages, nearly all of a call's, are read without encoding/json and
// without allocating. It is strict: at anything it does not read exactly
// as encoding/json would (an escaped key or string, non-ASCII, a key that
// matches a field only case-insensitively, a field of another event), the
// fast path gives up and Decode takes encoding/json's path, which also
// reports the errors. FuzzDecodeFastPath holds the two paths equal.
type scanner struct {
	b     []byte
	i     int
	depth int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips space and then c, if c is next.
func (s *scanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString reads a string of printable ASCII without escapes and
// returns its contents, a subslice of the message.
func (s *scanner) plainString() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// value skips one JSON value, checking its grammar, and returns its text.
func (s *scanner) value() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) {
		return nil, false
	}
	start := s.i
	ok := false
	switch c := s.b[s.i]; {
	case c == '"':
		ok = s.skipString()
	case c == '{':
		ok = s.skipObject()
	case c == '[':
		ok = s.skipArray()
	case c == 't':
		ok = s.literal("true")
	case c == 'f':
		ok = s.literal("false")
	case c == 'n':
		ok = s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		ok = s.skipNumber()
	}
	if !ok {
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

func (s *scanner) skipString() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.b) {
				return false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) {
					return false
				}
				for _, h := range s.b[j+1 : j+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func (s *scanner) skipNumber() bool {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) skipObject() bool {
	if s.depth++; s.depth > 32 {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // {
	if s.consume('}') {
		return true
	}
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.skipString() || !s.consume(':') {
			return false
		}
		if _, ok := s.value(); !ok {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

func (s *scanner) skipArray() bool {
	if s.depth++; s.depth > 32 {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // [
	if s.consume(']') {
		return true
	}
	for {
		if _, ok := s.value(); !ok {
			return false
		}
		if s.consume(']') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// members calls member for each key of the object that comes next, with
// the scanner at the key's value; member reads the value or returns false
// to give up.
func (s *scanner) members(member func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		key, ok := s.plainString()
		if !ok || !s.consume(':') || !member(key) {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// end reports whether only space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// foreign reports whether encoding/json could match key to one of fields
// other than exactly (it folds case, and some non-ASCII letters): the fast
// path then gives up.
func foreign(key []byte, fields ...string) bool {
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	for _, f := range fields {
		if bytes.EqualFold(key, []byte(f)) {
			return true
		}
	}
	return false
}

// intern returns b as a string, the one it returned last time when b is
// the same, so that a stream id repeated in every message costs nothing.
func intern(last *string, b []byte) string {
	if string(b) != *last {
		*last = string(b)
	}
	return *last
}

// AppendPlayAudio appends a playAudio message to dst: payload, raw audio
// of contentType ([EncodingMuLaw] at 8000 Hz, or [EncodingL16] at 8000 or
// 16000 Hz) at sampleRate, in base64. Plivo queues it and plays it to the
// caller in order.
func AppendPlayAudio(dst []byte, contentType string, sampleRate int, payload []byte) []byte {
	dst = append(dst, `{"event":"playAudio","media":{"contentType":`...)
	dst = appendString(dst, contentType)
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
	dst = appendString(dst, streamID)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, name)
	return append(dst, '}')
}

// AppendClearAudio appends a clearAudio message to dst: Plivo drops the
// audio it has queued and answers with clearedAudio.
func AppendClearAudio(dst []byte, streamID string) []byte {
	dst = append(dst, `{"event":"clearAudio","streamId":`...)
	dst = appendString(dst, streamID)
	return append(dst, '}')
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 passed through as bytes (the stream
// ids and the transport's mark names are ASCII).
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
