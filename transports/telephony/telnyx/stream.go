package telnyx

import (
	"errors"
	"fmt"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/transports/telephony"
)

// Provider is Telnyx media streaming for a telephony.Server, in its
// bidirectional RTP mode: the stream's messages (wire.go) as the server's
// telephony.Stream. It carries PCMU, PCMA and L16; a stream started with
// another codec (G722, OPUS, AMR-WB) is refused.
type Provider struct {
	// Limits bound each incoming message.
	Limits Limits
}

// Name implements telephony.Provider.
func (Provider) Name() string { return "telnyx" }

// NewStream implements telephony.Provider.
func (p Provider) NewStream() telephony.Stream {
	return &stream{dec: Decoder{Limits: p.Limits}, payload: make([]byte, 0, 1024)}
}

// stream is one call's media stream. Decode and its buffers are the
// reader's; the Append methods and out the output's. codec is set by the
// start, before the output runs.
type stream struct {
	dec     Decoder
	codec   telephony.Codec
	payload []byte
	pcm     []int16
	out     []byte
}

var errNotText = errors.New("telnyx: a binary message; media streaming sends JSON text")

// codecOf maps a start's media format to a codec.
func codecOf(f Format) (telephony.Codec, error) {
	switch f.Encoding {
	case EncodingPCMU:
		return telephony.CodecULaw, nil
	case EncodingPCMA:
		return telephony.CodecALaw, nil
	case EncodingL16:
		return telephony.CodecL16BE, nil // RTP's L16 is in network order
	}
	return 0, fmt.Errorf("telnyx: the stream's codec %q is not one framewire carries (PCMU, PCMA, L16)", f.Encoding)
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
		c, err := codecOf(e.Start.Format)
		if err != nil {
			return err
		}
		s.codec = c
		ev.Kind = telephony.EventStart
		ev.Call = telephony.Call{
			CallID: e.Start.CallControlID, StreamID: e.StreamID, AccountID: e.Start.UserID,
			From: e.Start.From, To: e.Start.To, Parameters: e.Start.CustomParameters,
			SampleRate: e.Start.Format.SampleRate,
		}
		if ev.Call.SampleRate <= 0 {
			ev.Call.SampleRate = 8000
		}
	case KindMedia:
		if e.Media.Track != "" && e.Media.Track != "inbound" {
			return nil // EventOther: not the caller
		}
		ev.Kind = telephony.EventAudio
		if cap(e.Media.Payload) > cap(s.payload) {
			s.payload = e.Media.Payload[:0]
		}
		s.pcm = s.codec.AppendSamples(s.pcm[:0], e.Media.Payload)
		ev.Audio = s.pcm
	case KindDTMF:
		ev.Kind, ev.Digit = telephony.EventDTMF, e.DTMF.Digit
	case KindMark:
		ev.Kind, ev.Mark = telephony.EventMark, e.Mark.Name
	case KindStop:
		ev.Kind = telephony.EventStop
	}
	return nil
}

// MessageTypes implements telephony.Stream: JSON text both ways.
func (*stream) MessageTypes() (audio, control websocket.MessageType) {
	return websocket.MessageText, websocket.MessageText
}

// AppendAudio implements telephony.Stream: a media message in the
// stream's codec.
func (s *stream) AppendAudio(dst []byte, pcm []int16) []byte {
	s.out = s.codec.AppendPayload(s.out[:0], pcm)
	return AppendMedia(dst, s.out)
}

// AppendMark implements telephony.Stream.
func (*stream) AppendMark(dst []byte, name string) []byte { return AppendMark(dst, name) }

// AppendClear implements telephony.Stream.
func (*stream) AppendClear(dst []byte) []byte { return AppendClear(dst) }
