package plivo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/transports/telephony"
)

// Provider is Plivo audio streams for a telephony.Server (a bidirectional
// <Stream>): the stream's messages (wire.go) as the server's
// telephony.Stream. The stream's parameters, the Server's token among
// them, travel in the <Stream>'s extraHeaders ("k=v;k=v"), which Plivo
// sends back in the start. It carries μ-law at 8 kHz, and L16 in the
// byte order L16Order says, since Plivo's pages read so far do not state
// it.
type Provider struct {
	// Limits bound each incoming message.
	Limits Limits
	// L16Order is the byte order of an L16 stream: telephony.CodecL16LE
	// or telephony.CodecL16BE (RFC 3551's). Default: CodecL16LE, what
	// public Plivo clients send.
	L16Order telephony.Codec
}

// Name implements telephony.Provider.
func (Provider) Name() string { return "plivo" }

// NewStream implements telephony.Provider.
func (p Provider) NewStream() telephony.Stream {
	order := p.L16Order
	if order != telephony.CodecL16BE {
		order = telephony.CodecL16LE
	}
	return &stream{dec: Decoder{Limits: p.Limits}, l16: order, payload: make([]byte, 0, 1024)}
}

// stream is one call's audio stream. Decode and its buffers are the
// reader's; the Append methods and out the output's. sid, codec,
// contentType and rate are set by the start, before the output runs.
type stream struct {
	dec         Decoder
	l16         telephony.Codec
	codec       telephony.Codec
	contentType string
	rate        int
	sid         string
	payload     []byte
	pcm         []int16
	out         []byte
}

var errNotText = errors.New("plivo: a binary message; audio streams send JSON text")

// ExtraHeaders parses the start's extra_headers ("k=v;k=v") into
// parameters; a pair without "=" is a name with an empty value.
func ExtraHeaders(s string) map[string]string {
	params := map[string]string{}
	for pair := range strings.SplitSeq(s, ";") {
		k, v, _ := strings.Cut(pair, "=")
		if k = strings.TrimSpace(k); k != "" {
			params[k] = strings.TrimSpace(v)
		}
	}
	return params
}

// Decode implements telephony.Stream.
func (s *stream) Decode(typ websocket.MessageType, msg []byte, ev *telephony.Event) error {
	*ev = telephony.Event{Audio: ev.Audio[:0]}
	if typ != websocket.MessageText {
		return errNotText
	}
	e, err := s.dec.Decode(msg, s.payload[:0])
	if err != nil {
		return err
	}
	ev.Name, ev.StreamID = e.Name, e.StreamID
	switch e.Kind {
	case KindStart:
		switch e.Start.Format.Encoding {
		case EncodingMuLaw:
			s.codec = telephony.CodecULaw
		case EncodingL16:
			s.codec = s.l16
		default:
			return fmt.Errorf("plivo: the stream's encoding %q is not μ-law or L16", e.Start.Format.Encoding)
		}
		s.contentType, s.rate, s.sid = e.Start.Format.Encoding, e.Start.Format.SampleRate, e.Start.StreamID
		if s.rate <= 0 {
			s.rate = 8000
		}
		ev.Kind = telephony.EventStart
		ev.Call = telephony.Call{CallID: e.Start.CallID, StreamID: e.Start.StreamID, AccountID: e.Start.AccountID,
			Parameters: ExtraHeaders(e.ExtraHeaders), SampleRate: s.rate}
	case KindMedia:
		if e.Media.Track != "" && e.Media.Track != "inbound" {
			return nil
		}
		ev.Kind = telephony.EventAudio
		if cap(e.Media.Payload) > cap(s.payload) {
			s.payload = e.Media.Payload[:0]
		}
		s.pcm = s.codec.AppendSamples(s.pcm[:0], e.Media.Payload)
		ev.Audio = s.pcm
	case KindDTMF:
		ev.Kind, ev.Digit = telephony.EventDTMF, e.DTMF.Digit
	case KindPlayedStream:
		ev.Kind, ev.Mark = telephony.EventMark, e.Checkpoint
	}
	// Plivo sends no stop: the socket closes when the call ends.
	return nil
}

// MessageTypes implements telephony.Stream: JSON text both ways.
func (*stream) MessageTypes() (audio, control websocket.MessageType) {
	return websocket.MessageText, websocket.MessageText
}

// AppendAudio implements telephony.Stream: a playAudio message.
func (s *stream) AppendAudio(dst []byte, pcm []int16) []byte {
	s.out = s.codec.AppendPayload(s.out[:0], pcm)
	return AppendPlayAudio(dst, s.contentType, s.rate, s.out)
}

// AppendMark implements telephony.Stream: a checkpoint.
func (s *stream) AppendMark(dst []byte, name string) []byte {
	return AppendCheckpoint(dst, s.sid, name)
}

// AppendClear implements telephony.Stream: a clearAudio.
func (s *stream) AppendClear(dst []byte) []byte { return AppendClearAudio(dst, s.sid) }
