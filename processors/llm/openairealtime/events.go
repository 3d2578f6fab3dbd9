package openairealtime

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/framewire/framewire/internal/jsontext"
)

// kind is what a server event is, as far as the processor cares.
type kind uint8

const (
	evOther kind = iota // an event the processor does not use
	evSessionCreated
	evSessionUpdated
	evSpeechStarted
	evSpeechStopped
	evCommitted
	evItemAdded // conversation.item.added (GA) or conversation.item.created (beta)
	evResponseCreated
	evAudioDelta      // response.output_audio.delta (GA) or response.audio.delta (beta)
	evTranscriptDelta // response.output_audio_transcript.delta or response.audio_transcript.delta
	evTextDelta       // response.output_text.delta or response.text.delta
	evInputTranscriptDelta
	evInputTranscriptDone
	evInputTranscriptFailed
	evArgumentsDone
	evResponseDone
	evError
	evRateLimits
)

// kindOf maps an event type to its kind; switching on string(b) does not
// allocate.
func kindOf(t []byte) kind {
	switch string(t) {
	case "session.created":
		return evSessionCreated
	case "session.updated":
		return evSessionUpdated
	case "input_audio_buffer.speech_started":
		return evSpeechStarted
	case "input_audio_buffer.speech_stopped":
		return evSpeechStopped
	case "input_audio_buffer.committed":
		return evCommitted
	case "conversation.item.added", "conversation.item.created":
		return evItemAdded
	case "response.created":
		return evResponseCreated
	case "response.output_audio.delta", "response.audio.delta":
		return evAudioDelta
	case "response.output_audio_transcript.delta", "response.audio_transcript.delta":
		return evTranscriptDelta
	case "response.output_text.delta", "response.text.delta":
		return evTextDelta
	case "conversation.item.input_audio_transcription.delta":
		return evInputTranscriptDelta
	case "conversation.item.input_audio_transcription.completed":
		return evInputTranscriptDone
	case "conversation.item.input_audio_transcription.failed":
		return evInputTranscriptFailed
	case "response.function_call_arguments.done":
		return evArgumentsDone
	case "response.done":
		return evResponseDone
	case "error":
		return evError
	case "rate_limits.updated":
		return evRateLimits
	}
	return evOther
}

// event is one server event as the parser leaves it: the top-level
// members the processor reads, as spans of the message. String members
// are raw JSON string contents (escapes not decoded: use [event.str]);
// object members (response, error, item, rate_limits) are raw JSON for
// encoding/json, which only rare events need. Nothing is copied, so an
// event is valid only as long as its message.
type event struct {
	kind kind
	typ  []byte

	itemID, prevItemID, responseID, callID, name []byte
	delta, transcript, arguments                 []byte
	audioStartMS, audioEndMS                     int64

	response, err, item []byte // raw JSON objects
}

// errBadEvent is wrapped by every parse failure.
var errBadEvent = errors.New("openairealtime: malformed server event")

// maxEventDepth bounds the nesting of a server event.
const maxEventDepth = 64

// parseEvent reads the top level of one server event into ev (which it
// resets). It does not allocate.
func parseEvent(msg []byte, ev *event) error {
	*ev = event{}
	i := jsontext.SkipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return fmt.Errorf("%w: not a JSON object", errBadEvent)
	}
	i++
	first := true
	for {
		i = jsontext.SkipSpace(msg, i)
		if i >= len(msg) {
			return fmt.Errorf("%w: unterminated object", errBadEvent)
		}
		if msg[i] == '}' {
			i++
			break
		}
		if !first {
			if msg[i] != ',' {
				return fmt.Errorf("%w: expected ',' at offset %d", errBadEvent, i)
			}
			i = jsontext.SkipSpace(msg, i+1)
		}
		first = false
		if i >= len(msg) || msg[i] != '"' {
			return fmt.Errorf("%w: expected a member name at offset %d", errBadEvent, i)
		}
		ks, ke, next, err := scanString(msg, i)
		if err != nil {
			return err
		}
		key := msg[ks:ke]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(str(key)) // rare: an escaped member name
		}
		i = jsontext.SkipSpace(msg, next)
		if i >= len(msg) || msg[i] != ':' {
			return fmt.Errorf("%w: expected ':' at offset %d", errBadEvent, i)
		}
		i = jsontext.SkipSpace(msg, i+1)
		vs := i
		ve, err := skipValue(msg, i)
		if err != nil {
			return err
		}
		i = ve
		val := msg[vs:ve]
		// A member of an unexpected type is ignored as if absent: the
		// event is still handled by its type.
		switch string(key) {
		case "type":
			if ev.typ, err = stringContents(val); err != nil {
				return fmt.Errorf("%w: type is not a string", errBadEvent)
			}
		case "item_id":
			ev.itemID, _ = optString(val)
		case "previous_item_id":
			ev.prevItemID, _ = optString(val)
		case "response_id":
			ev.responseID, _ = optString(val)
		case "call_id":
			ev.callID, _ = optString(val)
		case "name":
			ev.name, _ = optString(val)
		case "delta":
			ev.delta, _ = optString(val)
		case "transcript":
			ev.transcript, _ = optString(val)
		case "arguments":
			ev.arguments, _ = optString(val)
		case "audio_start_ms":
			ev.audioStartMS, _ = optInt(val)
		case "audio_end_ms":
			ev.audioEndMS, _ = optInt(val)
		case "response":
			ev.response = objectOrNil(val)
		case "error":
			ev.err = objectOrNil(val)
		case "item":
			ev.item = objectOrNil(val)
		}
	}
	if i = jsontext.SkipSpace(msg, i); i != len(msg) {
		return fmt.Errorf("%w: data after the object", errBadEvent)
	}
	if ev.typ == nil {
		return fmt.Errorf("%w: no type", errBadEvent)
	}
	ev.kind = kindOf(ev.typ)
	return nil
}

// str decodes raw string contents (from an event span) into a string.
// A malformed escape ends the text where it stands.
func str(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	b, _ := jsontext.AppendUnescaped(nil, raw)
	return string(b)
}

// appendStr appends the decoded contents of raw to dst, up to a malformed
// escape.
func appendStr(dst, raw []byte) []byte {
	out, _ := jsontext.AppendUnescaped(dst, raw)
	return out
}

// decodeAudio decodes the base64 audio of a delta into dst (grown as
// needed, reused across calls) and returns the PCM. scratch holds the
// unescaped text when the JSON string has escapes (a server may write
// "\/" for "/").
func decodeAudio(dst, scratch []byte, raw []byte) (pcm, scratchOut []byte, err error) {
	src := raw
	if bytes.IndexByte(raw, '\\') >= 0 {
		scratch, err = jsontext.AppendUnescaped(scratch[:0], raw)
		if err != nil {
			return dst[:0], scratch, fmt.Errorf("%w: audio delta: %v", errBadEvent, err)
		}
		src = scratch
	}
	n := base64.StdEncoding.DecodedLen(len(src))
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	k, err := base64.StdEncoding.Decode(dst, src)
	if err != nil {
		return dst[:0], scratch, fmt.Errorf("%w: audio delta is not base64: %v", errBadEvent, err)
	}
	return dst[:k], scratch, nil
}

// scanString reads the JSON string at msg[i] (a quote) and returns the
// span of its contents and the offset after its closing quote. It looks
// for the closing quote with bytes.IndexByte, so a long audio delta costs
// little; it does not check the contents (control characters, escapes),
// which the members the processor reads are decoded for separately.
func scanString(msg []byte, i int) (start, end, next int, err error) {
	start = i + 1
	for j := start; j <= len(msg); {
		k := bytes.IndexByte(msg[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		n := 0 // backslashes right before the quote
		for p := q - 1; p >= start && msg[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return start, q, q + 1, nil
		}
		j = q + 1
	}
	return 0, 0, 0, fmt.Errorf("%w: unterminated string", errBadEvent)
}

// skipValue returns the offset just past the JSON value at msg[i]. It
// checks structure (brackets, strings, the bytes of literals) but not the
// grammar of numbers, which the members it reads are checked for.
func skipValue(msg []byte, i int) (int, error) {
	if i >= len(msg) {
		return i, fmt.Errorf("%w: missing value", errBadEvent)
	}
	switch c := msg[i]; c {
	case '"':
		_, _, next, err := scanString(msg, i)
		return next, err
	case '{', '[':
		depth := 0
		for j := i; j < len(msg); j++ {
			switch msg[j] {
			case '"':
				_, _, next, err := scanString(msg, j)
				if err != nil {
					return 0, err
				}
				j = next - 1
			case '{', '[':
				depth++
				if depth > maxEventDepth {
					return 0, fmt.Errorf("%w: nested deeper than %d", errBadEvent, maxEventDepth)
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("%w: unterminated value", errBadEvent)
	default:
		j := i
		for j < len(msg) {
			c := msg[j]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			if c == '"' || c == '{' || c == '[' || c == ':' {
				return 0, fmt.Errorf("%w: unexpected %q at offset %d", errBadEvent, c, j)
			}
			j++
		}
		if j == i {
			return 0, fmt.Errorf("%w: missing value at offset %d", errBadEvent, i)
		}
		return j, nil
	}
}

// objectOrNil returns val when it is a JSON object.
func objectOrNil(val []byte) []byte {
	if len(val) > 0 && val[0] == '{' {
		return val
	}
	return nil
}

// stringContents returns the contents of a JSON string value.
func stringContents(val []byte) ([]byte, error) {
	if len(val) < 2 || val[0] != '"' {
		return nil, errors.New("not a string")
	}
	return val[1 : len(val)-1], nil
}

// optString is stringContents that takes null as "absent".
func optString(val []byte) ([]byte, error) {
	if string(val) == "null" {
		return nil, nil
	}
	return stringContents(val)
}

// optInt reads a non-negative integer member (milliseconds); null is 0.
// It does not allocate.
func optInt(val []byte) (int64, error) {
	if string(val) == "null" {
		return 0, nil
	}
	if len(val) == 0 || len(val) > 15 {
		return 0, errNotInt
	}
	var n int64
	for _, c := range val {
		if c < '0' || c > '9' {
			return 0, errNotInt
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

var errNotInt = errors.New("not a non-negative integer")
