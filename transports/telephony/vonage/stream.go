package vonage

import (
	"cmp"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/transports/telephony"
)

// Provider is the Vonage Voice API's WebSocket endpoint for a
// telephony.Server: binary frames of 16-bit linear PCM both ways, JSON
// text events beside them (wire.go). The call's metadata and the
// Server's token are the NCCO endpoint's headers, which Vonage sends in
// websocket:connected; put the call's uuid in a "uuid" header, as
// Vonage's examples do.
type Provider struct {
	// Limits bound each incoming message.
	Limits Limits
}

// Name implements telephony.Provider.
func (Provider) Name() string { return "vonage" }

// NewStream implements telephony.Provider.
func (p Provider) NewStream() telephony.Stream {
	s := &stream{}
	s.dec.Limits = p.Limits
	return s
}

// stream is one call's WebSocket. Decode and pcm are the reader's; the
// Append methods the output's.
type stream struct {
	dec Decoder
	pcm []int16
}

// Decode implements telephony.Stream: a binary message is audio, a text
// one an event. The socket is the stream: its events name none.
func (s *stream) Decode(typ websocket.MessageType, msg []byte, ev *telephony.Event) error {
	*ev = telephony.Event{Audio: ev.Audio[:0]}
	if typ == websocket.MessageBinary {
		pcm, err := s.dec.DecodeAudio(msg, s.pcm[:0])
		if err != nil {
			return err
		}
		s.pcm = pcm
		ev.Kind, ev.Name, ev.Audio = telephony.EventAudio, "audio", pcm
		return nil
	}
	e, err := s.dec.DecodeText(msg)
	if err != nil {
		return err
	}
	ev.Name = e.Name
	switch e.Kind {
	case KindConnected:
		ev.Kind = telephony.EventStart
		h := e.Connected.Headers
		ev.Call = telephony.Call{CallID: h["uuid"], From: cmp.Or(h["from"], h["caller"]), To: h["to"], Parameters: h, SampleRate: e.Connected.SampleRate}
		if ev.Call.SampleRate <= 0 {
			ev.Call.SampleRate = 16000
		}
	case KindDTMF:
		ev.Kind, ev.Digit = telephony.EventDTMF, e.DTMF.Digit
	case KindNotify:
		ev.Kind, ev.Mark = telephony.EventMark, e.Notify.Name
	}
	// Vonage sends no stop: the socket closes when the call ends.
	return nil
}

// MessageTypes implements telephony.Stream: binary audio, text commands.
func (*stream) MessageTypes() (audio, control websocket.MessageType) {
	return websocket.MessageBinary, websocket.MessageText
}

// AppendAudio implements telephony.Stream: 20 ms of PCM, one binary
// message, as Vonage asks.
func (*stream) AppendAudio(dst []byte, pcm []int16) []byte { return AppendAudio(dst, pcm) }

// AppendMark implements telephony.Stream: a notify command.
func (*stream) AppendMark(dst []byte, name string) []byte { return AppendNotify(dst, name) }

// AppendClear implements telephony.Stream.
func (*stream) AppendClear(dst []byte) []byte { return AppendClear(dst) }
