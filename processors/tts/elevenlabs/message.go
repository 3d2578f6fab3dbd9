package elevenlabs

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/framewire/framewire/internal/jsontext"
	"github.com/framewire/framewire/processors/tts"
)

// message is one message from ElevenLabs: on the multi-context websocket
// an audio chunk ({"audio", "alignment", "normalizedAlignment",
// "contextId"}), the end of a context ({"isFinal": true, "contextId"}) or
// an error ({"message", "error", "code"}); on the HTTP stream one line of
// {"audio_base64", "alignment", "normalized_alignment"}. A decoder reuses
// its buffers from message to message, so a chunk costs no allocation once
// they have grown.
type message struct {
	sc jsontext.Scanner

	contextID []byte
	final     bool
	audio     []byte // decoded PCM
	// b64 is the audio's base64 text: a slice of the input, or of unescaped
	// when the JSON string held escapes.
	b64, unescaped []byte
	// align is the alignment of the text as sent; normal that of the text
	// as ElevenLabs normalised it (numbers spelled out), used when align
	// is missing.
	align, normal alignment

	// An error message: its text and ElevenLabs' code for it.
	errText, errCode string
}

// alignment is the timing of a run of characters: chars[ends[i-1]:ends[i]]
// is character i, starting at starts[i] into the audio.
type alignment struct {
	chars  []byte
	ends   []int
	starts []time.Duration
	// seen reports that the message had this member (possibly empty).
	seen bool
}

func (a *alignment) reset() {
	a.chars, a.ends, a.starts, a.seen = a.chars[:0], a.ends[:0], a.starts[:0], false
}

// maxTime bounds a character's start time; later ones are dropped as
// nonsense.
const maxTime = 24 * time.Hour

func (m *message) reset() {
	m.contextID, m.final = m.contextID[:0], false
	m.audio, m.b64 = m.audio[:0], nil
	m.align.reset()
	m.normal.reset()
	m.errText, m.errCode = "", ""
}

// isError reports whether the message is an error report.
func (m *message) isError() bool {
	return (m.errText != "" || m.errCode != "") && len(m.audio) == 0
}

// decode parses one message. The audio is decoded into m.audio.
func (m *message) decode(data []byte) error {
	m.reset()
	s := &m.sc
	s.Prefix = "elevenlabs"
	s.Reset(data)
	if !s.Open('{') {
		if s.Err() == nil {
			s.Fail("message is null")
		}
		return s.Err()
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "audio", "audio_base64":
			m.audioText()
		case "isFinal", "is_final":
			m.final = string(s.Raw()) == "true"
		case "contextId", "context_id":
			m.contextID = s.AppendString(m.contextID[:0])
		case "alignment":
			m.alignment(&m.align)
		case "normalizedAlignment", "normalized_alignment":
			m.alignment(&m.normal)
		case "message":
			m.errText = s.String()
		case "error":
			if s.Peek() == '"' {
				m.errCode = s.String()
			} else {
				s.Skip()
			}
		default:
			s.Skip()
		}
	}
	s.End()
	if err := s.Err(); err != nil {
		return err
	}
	if len(m.b64) > 0 {
		n := base64.StdEncoding.DecodedLen(len(m.b64))
		if cap(m.audio) < n {
			m.audio = make([]byte, 0, n)
		}
		k, err := base64.StdEncoding.Decode(m.audio[:n], m.b64)
		if err != nil {
			m.audio = m.audio[:0]
			s.Fail("bad base64 audio")
			return s.Err()
		}
		m.audio = m.audio[:k]
	}
	return nil
}

// audioText reads the audio's base64 string without copying it when it
// holds no escapes (base64 needs none, though JSON allows "\/").
func (m *message) audioText() {
	s := &m.sc
	raw := s.Raw()
	switch {
	case s.Err() != nil || string(raw) == "null":
	case len(raw) < 2 || raw[0] != '"':
		s.Fail("audio is not a string")
	case bytes.IndexByte(raw, '\\') < 0:
		m.b64 = raw[1 : len(raw)-1]
	default:
		var err error
		if m.unescaped, err = jsontext.AppendUnescaped(m.unescaped[:0], raw[1:len(raw)-1]); err != nil {
			s.Fail("bad escape in the audio")
			return
		}
		m.b64 = m.unescaped
	}
}

// alignment reads an alignment object: the websocket's chars and
// charStartTimesMs, or the HTTP stream's characters and
// character_start_times_seconds. Durations and end times are skipped: a
// word only needs its start.
func (m *message) alignment(a *alignment) {
	s := &m.sc
	if !s.Open('{') {
		return
	}
	a.seen = true
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "chars", "characters":
			if !s.Open('[') {
				continue
			}
			for f := true; s.More(']', &f); {
				a.chars = s.AppendString(a.chars)
				a.ends = append(a.ends, len(a.chars))
			}
		case "charStartTimesMs":
			if !s.Open('[') {
				continue
			}
			for f := true; s.More(']', &f); {
				a.starts = append(a.starts, time.Duration(s.Int())*time.Millisecond)
			}
		case "character_start_times_seconds":
			if !s.Open('[') {
				continue
			}
			for f := true; s.More(']', &f); {
				a.starts = append(a.starts, seconds(s))
			}
		default:
			s.Skip()
		}
	}
	if len(a.ends) != len(a.starts) {
		s.Fail("alignment with " + strconv.Itoa(len(a.ends)) + " characters and " + strconv.Itoa(len(a.starts)) + " start times")
	}
}

// seconds reads a number of seconds as a duration; a value that is not a
// finite number in range reads as -1 (dropped later).
func seconds(s *jsontext.Scanner) time.Duration {
	raw := s.Raw()
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxTime.Seconds() {
		return -1
	}
	return time.Duration(f * float64(time.Second))
}

// timing returns the alignment to build words from: the text as sent when
// the message has it, else the normalised text.
func (m *message) timing() *alignment {
	if len(m.align.ends) > 0 {
		return &m.align
	}
	return &m.normal
}

// maxWordBytes bounds one word: a longer run without spaces is cut.
const maxWordBytes = 256

// wordBuilder turns character timings into words. A word may straddle two
// chunks, so it keeps the word in progress between calls.
type wordBuilder struct {
	word  []byte
	start time.Duration
	// spoken counts the non-space characters aligned so far.
	spoken int
}

// add appends to words the words that a's characters complete, with their
// starts shifted by offset (the audio before the chunk: the websocket's
// times count from the chunk's start).
func (w *wordBuilder) add(words []tts.Word, a *alignment, offset time.Duration) []tts.Word {
	prev := 0
	for i, end := range a.ends {
		ch := a.chars[prev:end]
		prev = end
		if isSpace(ch) {
			words = w.flush(words)
			continue
		}
		w.spoken++
		if len(w.word) == 0 {
			start := a.starts[i]
			if start < 0 || start > maxTime {
				start = 0
			}
			w.start = offset + start
		}
		w.word = append(w.word, ch...)
		if len(w.word) >= maxWordBytes {
			words = w.flush(words)
		}
	}
	return words
}

// flush appends the word in progress, if any.
func (w *wordBuilder) flush(words []tts.Word) []tts.Word {
	if len(w.word) == 0 {
		return words
	}
	words = append(words, tts.Word{Text: string(w.word), Start: w.start})
	w.word = w.word[:0]
	return words
}

// isSpace reports whether a character (one or more bytes) is white space.
func isSpace(ch []byte) bool {
	if len(ch) == 0 {
		return true
	}
	for len(ch) > 0 {
		r, n := utf8.DecodeRune(ch)
		if !unicode.IsSpace(r) {
			return false
		}
		ch = ch[n:]
	}
	return true
}

// countSpoken counts the non-space characters of text, which the
// alignment of its audio covers once it is complete.
func countSpoken(text string) int {
	n := 0
	for _, r := range text {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// router reads what the connection's reader needs to hand a message to its
// request: the context id, and whether it is an error for the connection.
type router struct {
	sc jsontext.Scanner
	id []byte
}

// route returns the message's context id (valid until the next call) and
// whether it reports an error. A message it cannot parse returns an error.
func (r *router) route(data []byte) (id []byte, isErr bool, err error) {
	s := &r.sc
	s.Prefix = "elevenlabs"
	s.Reset(data)
	r.id = r.id[:0]
	if !s.Open('{') {
		if s.Err() == nil {
			s.Fail("message is null")
		}
		return nil, false, s.Err()
	}
	audio := false
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "contextId", "context_id":
			r.id = s.AppendString(r.id)
		case "audio":
			audio = s.Peek() == '"'
			s.Skip()
		case "message", "error":
			isErr = s.Peek() == '"'
			s.Skip()
		default:
			s.Skip()
		}
	}
	s.End()
	if err := s.Err(); err != nil {
		return nil, false, err
	}
	return r.id, isErr && !audio, nil
}
