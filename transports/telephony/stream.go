package telephony

import (
	"context"

	"github.com/coder/websocket"
)

// A Provider is one telephony provider's media stream: what its package
// gives the Server. Its streams parse and write the messages on the
// socket; everything else (the socket, the pipeline, pacing, marks) is
// the Server's.
type Provider interface {
	// Name names the provider ("twilio"), for logs and telemetry.
	Name() string
	// NewStream returns the state of one call's stream.
	NewStream() Stream
}

// HangUpper is implemented by a Provider that can end a call through its
// REST API: the Server hangs up a call whose pipeline ended before the
// caller did.
type HangUpper interface {
	HangUp(ctx context.Context, call Call) error
}

// A Stream is one call's media stream as its provider speaks it. Decode
// is called by the session's reader, one message at a time; the Append
// methods by its output, one at a time.
type Stream interface {
	// Decode reads one message from the provider into ev, overwriting it.
	// ev.Audio is decoded to linear PCM at the call's rate into a buffer
	// the Stream owns, valid until the next Decode. An unknown message is
	// not an error: it is EventOther.
	Decode(typ websocket.MessageType, msg []byte, ev *Event) error
	// MessageTypes are the WebSocket types of the audio messages the
	// server sends and of the others (marks, clear).
	MessageTypes() (audio, control websocket.MessageType)
	// AppendAudio appends a message carrying pcm (mono, at the call's
	// rate, 20 ms) to dst.
	AppendAudio(dst []byte, pcm []int16) []byte
	// AppendMark appends a message asking the provider to echo name once
	// the audio sent before it has played (a mark, a checkpoint).
	AppendMark(dst []byte, name string) []byte
	// AppendClear appends a message asking the provider to drop the
	// audio it has not played yet.
	AppendClear(dst []byte) []byte
}

// EventKind says what an [Event] is.
type EventKind uint8

// The events of a media stream.
const (
	// EventOther is a message the session has nothing to do with (the
	// provider's "connected", an unknown event).
	EventOther EventKind = iota
	// EventStart starts the stream: Call says whose it is. It comes once,
	// before any audio.
	EventStart
	// EventAudio carries the caller's audio.
	EventAudio
	// EventDTMF is a key the caller pressed.
	EventDTMF
	// EventMark echoes a mark: the audio before it has played (or was
	// cleared).
	EventMark
	// EventStop ends the stream: the call hung up or the stream stopped.
	EventStop
)

// Event is one decoded message of a media stream. Only the fields of its
// Kind are set.
type Event struct {
	Kind EventKind
	// Name is the message's own name, for logs ("connected", "media").
	Name string
	// StreamID is the stream the message names, when it names one: the
	// session checks it against the start's.
	StreamID string
	// Call is the start's metadata (EventStart).
	Call Call
	// Audio is the caller's audio, mono linear PCM at Call.SampleRate
	// (EventAudio).
	Audio []int16
	// Digit is the key pressed: 0-9, *, #, A-D (EventDTMF).
	Digit string
	// Mark is the name of the echoed mark (EventMark).
	Mark string
}

// Call is what a stream's start says of its call, given to the pipeline
// factory.
type Call struct {
	// Provider names the provider ("twilio").
	Provider string
	// CallID is the provider's id of the call (Twilio's CallSid), and
	// StreamID its media stream's.
	CallID   string
	StreamID string
	// AccountID is the provider's account the call belongs to, when the
	// start names it.
	AccountID string
	// From and To are the caller's and the called numbers, when the
	// provider gives them in the stream (else in the webhook, passed as
	// Parameters).
	From, To string
	// Parameters are the custom parameters of the stream (Twilio's
	// <Parameter> elements), the Server's own token removed.
	Parameters map[string]string
	// SampleRate of the call's audio, both ways (8000 for G.711).
	SampleRate int
}
