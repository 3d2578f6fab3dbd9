package twilio

import (
	"encoding/xml"
	"errors"
	"net/http"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/transports/telephony"
)

// Provider is Twilio Media Streams for a telephony.Server: the stream's
// messages (wire.go) as the server's telephony.Stream.
type Provider struct {
	// Limits bound each incoming message.
	Limits Limits
	// REST, if set, hangs the call up when its pipeline ends before the
	// caller did. Default: nil, the stream just closes (Twilio then goes
	// on with the TwiML after <Connect>, which ends the call when there
	// is none).
	REST *REST
}

// Name implements telephony.Provider.
func (Provider) Name() string { return "twilio" }

// NewStream implements telephony.Provider.
func (p Provider) NewStream() telephony.Stream {
	return &stream{dec: Decoder{Limits: p.Limits}, payload: make([]byte, 0, 1024)}
}

// stream is one call's Media Stream. Decode and its buffers are the
// reader's; the Append methods and ulaw the output's. sid is written by
// the start, before the output runs.
type stream struct {
	dec     Decoder
	sid     string
	payload []byte
	pcm     []int16
	ulaw    []byte
}

// errNotText: Twilio sends JSON text messages only.
var errNotText = errors.New("twilio: a binary message; Media Streams send JSON text")

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
	ev.Name, ev.StreamID = e.Name, e.StreamSID
	switch e.Kind {
	case KindStart:
		ev.Kind = telephony.EventStart
		s.sid = e.Start.StreamSID
		ev.Call = telephony.Call{
			CallID: e.Start.CallSID, StreamID: e.Start.StreamSID, AccountID: e.Start.AccountSID,
			Parameters: e.Start.CustomParameters, SampleRate: e.Start.Format.SampleRate,
		}
		if ev.Call.SampleRate <= 0 {
			ev.Call.SampleRate = 8000
		}
		// The Webhook passes the call's numbers as parameters.
		ev.Call.From, ev.Call.To = e.Start.CustomParameters["From"], e.Start.CustomParameters["To"]
	case KindMedia:
		if e.Media.Track != "" && e.Media.Track != "inbound" {
			return nil // EventOther: not the caller
		}
		ev.Kind = telephony.EventAudio
		if cap(e.Media.Payload) > cap(s.payload) {
			s.payload = e.Media.Payload[:0] // keep the grown buffer
		}
		s.pcm = telephony.CodecULaw.AppendSamples(s.pcm[:0], e.Media.Payload)
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

// AppendAudio implements telephony.Stream: a media message of μ-law.
func (s *stream) AppendAudio(dst []byte, pcm []int16) []byte {
	s.ulaw = telephony.CodecULaw.AppendPayload(s.ulaw[:0], pcm)
	return AppendMedia(dst, s.sid, s.ulaw)
}

// AppendMark implements telephony.Stream.
func (s *stream) AppendMark(dst []byte, name string) []byte { return AppendMark(dst, s.sid, name) }

// AppendClear implements telephony.Stream.
func (s *stream) AppendClear(dst []byte) []byte { return AppendClear(dst, s.sid) }

// The TwiML of an answer that connects the call to a bidirectional Media
// Stream, as Twilio's "TwiML Voice: <Stream>" page shows it: <Response>
// <Connect> <Stream url="wss://..."> with <Parameter name value> children.
type twiml struct {
	XMLName xml.Name `xml:"Response"`
	Stream  struct {
		URL        string      `xml:"url,attr"`
		Parameters []parameter `xml:"Parameter"`
	} `xml:"Connect>Stream"`
}

type parameter struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Answer returns the TwiML that connects a call to the Media Stream at
// streamURL (wss://), with params as its custom parameters (they come back
// in the stream's start message).
func Answer(streamURL string, params []Parameter) []byte {
	var t twiml
	t.Stream.URL = streamURL
	for _, p := range params {
		t.Stream.Parameters = append(t.Stream.Parameters, parameter(p))
	}
	b, _ := xml.Marshal(t) // a struct of strings always marshals
	return append([]byte(xml.Header), b...)
}

// Parameter is one custom parameter of a Stream.
type Parameter struct{ Name, Value string }

// Webhook answers Twilio's incoming-call webhook: it checks the request's
// signature (Verifier), then answers with the TwiML that connects the call
// to the Server's stream at StreamURL, with a one-time token and the
// call's From, To and CallSid as parameters.
type Webhook struct {
	// Verifier checks the webhook's X-Twilio-Signature; its zero value
	// refuses every request (set AuthToken, or Insecure for local tests).
	Verifier Verifier
	// Server is the telephony server the stream connects to.
	Server *telephony.Server
	// StreamURL is the stream's public URL (wss://host/path).
	StreamURL string
}

// ServeHTTP implements http.Handler.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.Verifier.Check(r); err != nil {
		code := http.StatusForbidden
		if errors.Is(err, ErrBodyTooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, http.StatusText(code), code)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "malformed webhook request", http.StatusBadRequest)
		return
	}
	params := []Parameter{{telephony.TokenParameter, h.Server.NewToken()}}
	for _, k := range []string{"From", "To", "CallSid"} {
		if v := r.PostForm.Get(k); v != "" {
			params = append(params, Parameter{k, v})
		}
	}
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write(Answer(h.StreamURL, params))
}
