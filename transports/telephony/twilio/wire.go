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
	s := scanner{b: msg}
	var (
		isMedia bool
		seq     number
		sid     []byte
		m       wireMedia
		track   []byte
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
		case "streamSid":
			v, ok := s.plainString()
			sid = v
			return ok
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
		case "protocol", "version", "start", "dtmf", "mark", "stop":
			return false // another event's field: encoding/json's path decides
		}
		if foreign(key, "event", "sequenceNumber", "streamSid", "media", "protocol", "version", "start", "dtmf", "mark", "stop") {
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
		ev.StreamSID = intern(&d.sid, sid)
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
