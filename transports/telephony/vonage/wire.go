package vonage

// The wire is that of Vonage's "WebSockets in the Vonage Voice API" guide
// (developer.vonage.com/en/voice/voice-api/concepts/websockets) and the
// NCCO reference's connect action with a websocket endpoint
// (developer.vonage.com/en/voice/voice-api/ncco-reference): binary
// messages carry 16-bit linear PCM, mono, at the rate of the endpoint's
// content-type (audio/l16;rate=8000 or 16000), 20 ms a message both ways;
// text messages carry JSON events from Vonage (websocket:connected first,
// with the content-type and the endpoint's headers; websocket:dtmf;
// websocket:notify; websocket:cleared) and JSON commands to it (clear,
// notify). docs/decisions/telephony-wire.md says which facts were read
// where, and which were not confirmed on Vonage's own pages.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/framewire/framewire/transports/telephony/internal/jsonwire"
)

// Limits bound what a [Decoder] accepts. A zero field takes its default.
type Limits struct {
	// MaxText is the largest text message, in bytes (default
	// [DefaultMaxText]).
	MaxText int
	// MaxAudio is the largest binary message, in bytes (default
	// [DefaultMaxAudio]).
	MaxAudio int
	// MaxHeaders is the most headers a websocket:connected event may
	// carry (default [DefaultMaxHeaders]).
	MaxHeaders int
}

const (
	// DefaultMaxText is 16 KiB: Vonage's events are small; the connected
	// event carries the endpoint's headers.
	DefaultMaxText = 16 << 10
	// DefaultMaxAudio is 8 KiB: Vonage sends 20 ms a message, 320 bytes at
	// 8 kHz and 640 at 16 kHz.
	DefaultMaxAudio = 8 << 10
	// DefaultMaxHeaders is 64 headers.
	DefaultMaxHeaders = 64
)

func (l Limits) withDefaults() Limits {
	if l.MaxText <= 0 {
		l.MaxText = DefaultMaxText
	}
	if l.MaxAudio <= 0 {
		l.MaxAudio = DefaultMaxAudio
	}
	if l.MaxHeaders <= 0 {
		l.MaxHeaders = DefaultMaxHeaders
	}
	return l
}

// FrameBytes is the size of the 20 ms binary message Vonage sends and
// expects at sampleRate: 320 bytes at 8000 Hz, 640 at 16000 Hz. A
// transport sends its audio in messages of exactly this size.
func FrameBytes(sampleRate int) int { return sampleRate / 50 * 2 }

// MaxQueuedFrames is how many binary messages Vonage buffers for playback
// (about 60 s of 20 ms frames): a transport that sends faster than real
// time stays under it.
const MaxQueuedFrames = 3072

// Errors a [Decoder] wraps, so a transport can count refusals by cause.
var (
	// ErrTooLarge: the message is over the [Limits].
	ErrTooLarge = errors.New("over the limit")
	// ErrBadMessage: a text message is not the JSON event Vonage sends, or
	// a field the event needs is missing or of the wrong type.
	ErrBadMessage = errors.New("malformed message")
	// ErrBadAudio: a binary message is empty or holds half a sample.
	ErrBadAudio = errors.New("malformed audio")
)

// Kind is the kind of an incoming text message.
type Kind uint8

const (
	// KindUnknown is an event this package does not know; [Event.Name]
	// holds its name. A transport should count and ignore it.
	KindUnknown Kind = iota
	// KindConnected is websocket:connected, the first message: the audio
	// format and the endpoint's headers.
	KindConnected
	// KindDTMF is websocket:dtmf, a key the caller pressed.
	KindDTMF
	// KindNotify is websocket:notify: the audio sent before a notify
	// command has been played; it carries the command's payload back.
	KindNotify
	// KindCleared is websocket:cleared: a clear command emptied the
	// playback buffer.
	KindCleared
)

var kindNames = [...]string{"unknown", "websocket:connected", "websocket:dtmf", "websocket:notify", "websocket:cleared"}

// String returns the kind's event name as Vonage spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one decoded text message. Only the part named by Kind is set;
// the others are zero.
type Event struct {
	Kind Kind
	// Name is the message's event field; for KindUnknown, the unknown name
	// (at most 64 bytes of it).
	Name string

	Connected Connected
	DTMF      DTMF
	Notify    Notify
}

// Connected is the websocket:connected event.
type Connected struct {
	// ContentType is the audio format, as the NCCO endpoint asked for it:
	// "audio/l16;rate=16000".
	ContentType string
	// SampleRate is ContentType's rate, 0 when it has none.
	SampleRate int
	// Headers are the event's other string fields: the headers the NCCO
	// endpoint gave, such as a caller id or a token.
	Headers map[string]string
}

// DTMF is the websocket:dtmf event.
type DTMF struct {
	Digit string // one of 0-9, *, #, A-D
	// Duration is how long the key was held, in milliseconds, 0 when
	// absent.
	Duration int64
}

// Notify is the websocket:notify event.
type Notify struct {
	// Name is payload.name, the name [AppendNotify] sent; empty when the
	// payload has none.
	Name string
	// Payload is the payload object as sent, raw JSON.
	Payload json.RawMessage
}

// Decoder reads Vonage's incoming messages. Its zero value uses the
// default [Limits]; it keeps no state between messages and may be shared.
type Decoder struct {
	Limits Limits
}

// DecodeAudio decodes a binary message, 16-bit little-endian PCM, into
// samples appended to dst, and returns the extended slice; dst[:0] of a
// reused slice decodes without allocating. It refuses an empty message, an
// odd length and one over MaxAudio with an error wrapping [ErrBadAudio] or
// [ErrTooLarge]; that a message is exactly [FrameBytes] is the transport's
// to check, as Vonage's own last frame may be short.
func (d *Decoder) DecodeAudio(frame []byte, dst []int16) ([]int16, error) {
	lim := d.Limits.withDefaults()
	switch {
	case len(frame) > lim.MaxAudio:
		return dst, fmt.Errorf("vonage: audio of %d bytes: %w (%d)", len(frame), ErrTooLarge, lim.MaxAudio)
	case len(frame) == 0 || len(frame)%2 != 0:
		return dst, fmt.Errorf("vonage: audio of %d bytes: %w: not whole 16-bit samples", len(frame), ErrBadAudio)
	}
	n := len(frame) / 2
	if cap(dst)-len(dst) < n {
		grown := make([]int16, len(dst), len(dst)+n)
		copy(grown, dst)
		dst = grown
	}
	out := dst[len(dst) : len(dst)+n]
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(frame[2*i:]))
	}
	return dst[:len(dst)+n], nil
}

// DecodeText reads one text message. An unknown event is not an error: it
// comes back as KindUnknown. An error names the event and wraps
// [ErrTooLarge] or [ErrBadMessage]; the Event is then zero but for Kind
// and Name when they were read.
func (d *Decoder) DecodeText(msg []byte) (Event, error) {
	lim := d.Limits.withDefaults()
	if len(msg) > lim.MaxText {
		return Event{}, fmt.Errorf("vonage: message of %d bytes: %w (%d)", len(msg), ErrTooLarge, lim.MaxText)
	}
	var w wireEvent
	if err := json.Unmarshal(msg, &w); err != nil {
		return Event{}, fmt.Errorf("vonage: %w: %v", ErrBadMessage, err)
	}
	ev := Event{Name: w.Event}
	fail := func(what string, cause error) (Event, error) {
		return Event{Kind: ev.Kind, Name: ev.Name}, fmt.Errorf("vonage: %s: %s: %w", ev.Name, what, cause)
	}
	switch w.Event {
	case "websocket:connected":
		ev.Kind = KindConnected
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(msg, &fields); err != nil {
			return fail(err.Error(), ErrBadMessage)
		}
		if len(fields) > lim.MaxHeaders+2 {
			return fail(fmt.Sprintf("%d fields", len(fields)), ErrTooLarge)
		}
		c := Connected{}
		for k, raw := range fields {
			if k == "event" {
				continue
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				continue // a header that is not a string is not one this package reads
			}
			if k == "content-type" {
				c.ContentType = v
				c.SampleRate = rateOf(v)
				continue
			}
			if c.Headers == nil {
				c.Headers = make(map[string]string)
			}
			c.Headers[k] = v
		}
		ev.Connected = c
	case "websocket:dtmf":
		ev.Kind = KindDTMF
		digit := w.Digit
		if digit == "" && w.DTMF != nil {
			digit = w.DTMF.Digit
		}
		if !jsonwire.ValidDigit(digit) {
			return fail("no digit of 0-9, *, #, A-D", ErrBadMessage)
		}
		duration := w.Duration
		if duration == 0 && w.DTMF != nil {
			duration = w.DTMF.Duration
		}
		ev.DTMF = DTMF{Digit: digit, Duration: int64(duration)}
	case "websocket:notify":
		ev.Kind = KindNotify
		if len(w.Payload) > 0 && !bytes.Equal(w.Payload, []byte("null")) {
			var p struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(w.Payload, &p) // a payload without a string name is still a notify
			ev.Notify = Notify{Name: p.Name, Payload: w.Payload}
		}
	case "websocket:cleared":
		ev.Kind = KindCleared
	case "":
		return fail("no event", ErrBadMessage)
	default:
		if len(ev.Name) > 64 {
			ev.Name = ev.Name[:64]
		}
		return Event{Kind: KindUnknown, Name: ev.Name}, nil
	}
	return ev, nil
}

// wireEvent is the fields of Vonage's events this package reads. The DTMF
// digit is a top-level field; a nested dtmf object is read too, as some
// clients expect one.
type wireEvent struct {
	Event    string          `json:"event"`
	Digit    string          `json:"digit"`
	Duration number          `json:"duration"`
	DTMF     *wireDTMF       `json:"dtmf"`
	Payload  json.RawMessage `json:"payload"`
}

type wireDTMF struct {
	Digit    string `json:"digit"`
	Duration number `json:"duration"`
}

// rateOf returns the rate parameter of a content type such as
// "audio/l16;rate=16000", 0 when it has none.
func rateOf(contentType string) int {
	for _, part := range strings.Split(contentType, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && strings.EqualFold(k, "rate") {
			if r, err := strconv.Atoi(v); err == nil && r > 0 {
				return r
			}
		}
	}
	return 0
}

// number is an integer Vonage writes as a JSON number (or a string).
type number int64

func (n *number) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	*n = 0
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64) // Vonage may write a duration as 260 or 260.0
	if err != nil || math.IsNaN(v) || math.Abs(v) > 1<<53 {
		return errors.New("not a number")
	}
	*n = number(v)
	return nil
}

// AppendAudio appends samples to dst as one binary message's payload:
// 16-bit little-endian PCM. A transport sends [FrameBytes] of it per
// binary message, at the stream's rate, in real time or a little ahead.
func AppendAudio(dst []byte, samples []int16) []byte {
	n := 2 * len(samples)
	if cap(dst)-len(dst) < n {
		grown := make([]byte, len(dst), len(dst)+n)
		copy(grown, dst)
		dst = grown
	}
	out := dst[len(dst) : len(dst)+n]
	for i, s := range samples {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(s))
	}
	return dst[:len(dst)+n]
}

// AppendNotify appends a notify command to dst, a text message: Vonage
// sends a websocket:notify event carrying the payload {"name": name} back
// once the audio sent before the command has been played, so the echo
// says how far the caller heard.
func AppendNotify(dst []byte, name string) []byte {
	dst = append(dst, `{"action":"notify","payload":{"name":`...)
	dst = jsonwire.AppendString(dst, name)
	return append(dst, `}}`...)
}

// AppendClear appends a clear command to dst, a text message: Vonage
// stops playing and discards the audio it has queued, and answers with
// websocket:cleared.
func AppendClear(dst []byte) []byte {
	return append(dst, `{"action":"clear"}`...)
}
