package wire

import "strconv"

// Kind is which payload a [Frame] carries. Its value is the payload's field
// number in the Frame message's oneof (frames.proto), so a Kind is the wire.
type Kind uint8

// The payloads of Pipecat's Frame message, by field number. The zero Kind
// is a frame with no payload, which Decode refuses.
const (
	KindText          Kind = 1 // TextFrame: text
	KindAudio         Kind = 2 // AudioRawFrame: PCM, rate, channels
	KindTranscription Kind = 3 // TranscriptionFrame: text, user id, timestamp
	KindMessage       Kind = 4 // MessageFrame: a transport message as JSON
	KindInterruption  Kind = 5 // InterruptionFrame: the bot was interrupted
)

// String names the kind as frames.proto names the oneof's field.
func (k Kind) String() string {
	switch k {
	case KindText:
		return "text"
	case KindAudio:
		return "audio"
	case KindTranscription:
		return "transcription"
	case KindMessage:
		return "message"
	case KindInterruption:
		return "interruption"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Frame is one decoded WebSocket message: the payload's kind and the fields
// that kind has (frames.proto); the others are zero.
//
// A Frame from [Decoder.Decode] shares its byte fields with the message it
// was decoded from: they stay valid only while that buffer is not reused.
// Absent fields are nil; string fields hold valid UTF-8.
type Frame struct {
	Kind Kind

	// ID and Name are Pipecat's frame id and name, set by Pipecat's
	// server and its Python clients; the browser client sends ID 0 and
	// the name "audio". Every kind but KindMessage has them.
	ID   uint64
	Name []byte

	// Text is the text of a KindText or KindTranscription frame.
	Text []byte
	// UserID and Timestamp are a KindTranscription frame's speaker and
	// time (Pipecat's ISO 8601 text).
	UserID    []byte
	Timestamp []byte

	// Audio is a KindAudio frame's signed 16-bit little-endian PCM,
	// Channels interleaved, at SampleRate Hz. PTS is Pipecat's
	// presentation timestamp in nanoseconds, when HasPTS says it was sent.
	Audio      []byte
	SampleRate int
	Channels   int
	PTS        uint64
	HasPTS     bool

	// Data is a KindMessage frame's message as JSON text: for RTVI, the
	// envelope {"label":"rtvi-ai","type":...,"id":...,"data":...}.
	Data []byte
}
