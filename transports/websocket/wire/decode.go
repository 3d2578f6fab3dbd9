package wire

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Defaults of a zero [Decoder].
const (
	// DefaultMaxMessageBytes is the largest WebSocket message decoded:
	// the 1 MiB the WebSocket client allows an RTVI message's JSON
	// (its transport's maxMessageSize) plus room for the protobuf
	// envelope around it.
	DefaultMaxMessageBytes = 1<<20 + 64
	// DefaultMaxAudioBytes is the largest PCM payload of one audio
	// frame: 64 KiB, over a third of a second at 48 kHz stereo. The
	// browser client sends 512 bytes at a time.
	DefaultMaxAudioBytes = 64 << 10
	// DefaultMinSampleRate and DefaultMaxSampleRate bound an audio
	// frame's rate: telephony's 8 kHz to 48 kHz, the rates the project's
	// resampler is tuned for.
	DefaultMinSampleRate = 8000
	DefaultMaxSampleRate = 48000
)

// Errors Decode wraps, for errors.Is. The wrapping error says what was
// wrong and with what values.
var (
	// ErrMalformed is input that is not a well-formed Frame: bad
	// protobuf, a known field with the wrong wire type, a string that is
	// not UTF-8, or more than one payload.
	ErrMalformed = errors.New("wire: malformed frame")
	// ErrTooLarge is a message or an audio payload over the decoder's
	// bounds.
	ErrTooLarge = errors.New("wire: frame too large")
	// ErrNoPayload is a frame with no payload this package knows: empty,
	// or only fields past the schema's oneof (a newer schema's payload).
	ErrNoPayload = errors.New("wire: frame has no known payload")
	// ErrAudioFormat is an audio frame whose rate or channel count is
	// outside the bounds, or whose PCM is not whole 16-bit samples of
	// every channel.
	ErrAudioFormat = errors.New("wire: unsupported audio format")
)

// Decoder decodes client messages within bounds. Its zero value uses the
// Default bounds; a field set to a positive value replaces its default.
// A Decoder is a value with no state: one may serve any number of
// goroutines.
type Decoder struct {
	// MaxMessageBytes bounds a whole message (DefaultMaxMessageBytes).
	MaxMessageBytes int
	// MaxAudioBytes bounds an audio frame's PCM (DefaultMaxAudioBytes).
	MaxAudioBytes int
	// MinSampleRate and MaxSampleRate bound an audio frame's rate, in Hz
	// (DefaultMinSampleRate, DefaultMaxSampleRate).
	MinSampleRate int
	MaxSampleRate int
}

// Decode decodes b with a zero [Decoder]'s bounds.
func Decode(b []byte) (Frame, error) {
	var d Decoder
	return d.Decode(b)
}

// Decode decodes one WebSocket message's bytes into a Frame whose byte
// fields are subslices of b; it does not allocate unless it fails.
//
// It reads the protobuf as Pipecat's server does (unknown fields skipped,
// the last of a repeated scalar kept) and is stricter in what it accepts:
// exactly one payload, known fields with their schema's wire type, string
// fields in UTF-8, and audio within the bounds (rate, one or two
// channels, whole samples, size). An error wraps ErrMalformed,
// ErrTooLarge, ErrNoPayload or ErrAudioFormat.
func (d *Decoder) Decode(b []byte) (Frame, error) {
	if limit := orDefault(d.MaxMessageBytes, DefaultMaxMessageBytes); len(b) > limit {
		return Frame{}, fmt.Errorf("%w: message of %d bytes, over %d", ErrTooLarge, len(b), limit)
	}
	var f Frame
	unknown := protowire.Number(0)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return Frame{}, fmt.Errorf("%w: frame: %s", ErrMalformed, parseError(n))
		}
		if num > protowire.MaxValidNumber { // as proto.Unmarshal refuses it
			return Frame{}, fmt.Errorf("%w: frame field number %d over %d", ErrMalformed, num, protowire.MaxValidNumber)
		}
		b = b[n:]
		if num > protowire.Number(KindInterruption) {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return Frame{}, fmt.Errorf("%w: frame field %d: %s", ErrMalformed, num, parseError(n))
			}
			b = b[n:]
			if unknown == 0 {
				unknown = num
			}
			continue
		}
		kind := Kind(num)
		if typ != protowire.BytesType {
			return Frame{}, fmt.Errorf("%w: frame field %d (%s) has wire type %s, want bytes", ErrMalformed, num, kind, typeName(typ))
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return Frame{}, fmt.Errorf("%w: frame field %d (%s): %s", ErrMalformed, num, kind, parseError(n))
		}
		b = b[n:]
		if f.Kind != 0 {
			return Frame{}, fmt.Errorf("%w: frame has a second payload (%s after %s)", ErrMalformed, kind, f.Kind)
		}
		f.Kind = kind
		if err := decodePayload(&f, v); err != nil {
			return Frame{}, err
		}
	}
	switch f.Kind {
	case 0:
		if unknown != 0 {
			return Frame{}, fmt.Errorf("%w: only unknown fields (first: %d)", ErrNoPayload, unknown)
		}
		return Frame{}, fmt.Errorf("%w: empty frame", ErrNoPayload)
	case KindAudio:
		if err := d.checkAudio(&f); err != nil {
			return Frame{}, err
		}
	}
	return f, nil
}

// checkAudio holds an audio frame to the decoder's bounds.
func (d *Decoder) checkAudio(f *Frame) error {
	if limit := orDefault(d.MaxAudioBytes, DefaultMaxAudioBytes); len(f.Audio) > limit {
		return fmt.Errorf("%w: audio of %d bytes, over %d", ErrTooLarge, len(f.Audio), limit)
	}
	lo := orDefault(d.MinSampleRate, DefaultMinSampleRate)
	hi := orDefault(d.MaxSampleRate, DefaultMaxSampleRate)
	if f.SampleRate < lo || f.SampleRate > hi {
		return fmt.Errorf("%w: audio.sample_rate %d Hz, want %d to %d", ErrAudioFormat, f.SampleRate, lo, hi)
	}
	if f.Channels != 1 && f.Channels != 2 {
		return fmt.Errorf("%w: audio.num_channels %d, want 1 or 2", ErrAudioFormat, f.Channels)
	}
	if len(f.Audio)%(2*f.Channels) != 0 {
		return fmt.Errorf("%w: audio of %d bytes is not a whole number of %d-channel 16-bit frames", ErrAudioFormat, len(f.Audio), f.Channels)
	}
	return nil
}

// parseError says what protowire's error code n means: "truncated", or
// protobuf's own words without the "proto:" prefix it adds (with a space
// or a no-break space, chosen at random so that no one matches on it).
func parseError(n int) string {
	err := protowire.ParseError(n)
	if err == io.ErrUnexpectedEOF {
		return "truncated"
	}
	return strings.TrimLeft(strings.TrimPrefix(err.Error(), "proto:"), " \u00a0")
}

// typeName names a protobuf wire type, for errors.
func typeName(t protowire.Type) string {
	switch t {
	case protowire.VarintType:
		return "varint"
	case protowire.Fixed32Type:
		return "fixed32"
	case protowire.Fixed64Type:
		return "fixed64"
	case protowire.BytesType:
		return "bytes"
	case protowire.StartGroupType:
		return "group start"
	case protowire.EndGroupType:
		return "group end"
	}
	return strconv.Itoa(int(t))
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// slot is where a payload's field goes in a Frame.
type slot uint8

const (
	slotUnknown slot = iota
	slotID
	slotName
	slotText
	slotUserID
	slotTimestamp
	slotAudio
	slotSampleRate
	slotChannels
	slotPTS
	slotData
)

// slotNames are the fields' names in frames.proto, for errors.
var slotNames = [...]string{
	slotID:         "id",
	slotName:       "name",
	slotText:       "text",
	slotUserID:     "user_id",
	slotTimestamp:  "timestamp",
	slotAudio:      "audio",
	slotSampleRate: "sample_rate",
	slotChannels:   "num_channels",
	slotPTS:        "pts",
	slotData:       "data",
}

// slots maps each payload's field numbers to their slots (frames.proto).
var slots = [...][7]slot{
	KindText:          {1: slotID, 2: slotName, 3: slotText},
	KindAudio:         {1: slotID, 2: slotName, 3: slotAudio, 4: slotSampleRate, 5: slotChannels, 6: slotPTS},
	KindTranscription: {1: slotID, 2: slotName, 3: slotText, 4: slotUserID, 5: slotTimestamp},
	KindMessage:       {1: slotData},
	KindInterruption:  {1: slotID, 2: slotName},
}

// decodePayload reads the payload message b of f.Kind into f.
func decodePayload(f *Frame, b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %s: %s", ErrMalformed, f.Kind, parseError(n))
		}
		if num > protowire.MaxValidNumber {
			return fmt.Errorf("%w: %s field number %d over %d", ErrMalformed, f.Kind, num, protowire.MaxValidNumber)
		}
		b = b[n:]
		s := slotUnknown
		if num < protowire.Number(len(slots[f.Kind])) {
			s = slots[f.Kind][num]
		}
		if s == slotUnknown {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return fmt.Errorf("%w: %s field %d: %s", ErrMalformed, f.Kind, num, parseError(n))
			}
			b = b[n:]
			continue
		}
		want := protowire.BytesType
		switch s {
		case slotID, slotSampleRate, slotChannels, slotPTS:
			want = protowire.VarintType
		}
		if typ != want {
			return fmt.Errorf("%w: %s.%s has wire type %s, want %s", ErrMalformed, f.Kind, slotNames[s], typeName(typ), typeName(want))
		}
		if want == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return fmt.Errorf("%w: %s.%s: %s", ErrMalformed, f.Kind, slotNames[s], parseError(n))
			}
			b = b[n:]
			switch s {
			case slotID:
				f.ID = v
			case slotSampleRate:
				f.SampleRate = int(uint32(v)) // a uint32 field keeps the low 32 bits, as protobuf does
			case slotChannels:
				f.Channels = int(uint32(v))
			case slotPTS:
				f.PTS, f.HasPTS = v, true
			}
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return fmt.Errorf("%w: %s.%s: %s", ErrMalformed, f.Kind, slotNames[s], parseError(n))
		}
		b = b[n:]
		if s != slotAudio && !utf8.Valid(v) {
			return fmt.Errorf("%w: %s.%s is not UTF-8", ErrMalformed, f.Kind, slotNames[s])
		}
		switch s {
		case slotName:
			f.Name = v
		case slotText:
			f.Text = v
		case slotUserID:
			f.UserID = v
		case slotTimestamp:
			f.Timestamp = v
		case slotAudio:
			f.Audio = v
		case slotData:
			f.Data = v
		}
	}
	return nil
}
