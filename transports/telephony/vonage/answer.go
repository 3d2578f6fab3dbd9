package vonage

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/framewire/framewire/transports/telephony"
)

// The NCCO of an answer that connects the call to a WebSocket, as
// Vonage's "Connect to a WebSocket" tutorial and NCCO reference write it:
// a connect action whose endpoint is of type websocket, with the
// socket's uri, the audio's content-type ("audio/l16;rate=16000") and
// the headers Vonage sends back in websocket:connected.
type ncco []connectAction

type connectAction struct {
	Action   string     `json:"action"`
	Endpoint []endpoint `json:"endpoint"`
}

type endpoint struct {
	Type        string            `json:"type"`
	URI         string            `json:"uri"`
	ContentType string            `json:"content-type"`
	Headers     map[string]string `json:"headers,omitempty"`
}

// Answer returns the NCCO that connects a call to the WebSocket at
// streamURL (wss://) in 16-bit linear PCM at rate (8000 or 16000), with
// headers as the metadata Vonage gives the socket.
func Answer(streamURL string, rate int, headers map[string]string) []byte {
	b, _ := json.Marshal(ncco{{Action: "connect", Endpoint: []endpoint{{
		Type: "websocket", URI: streamURL, ContentType: "audio/l16;rate=" + strconv.Itoa(rate), Headers: headers,
	}}}})
	return b // maps and strings always marshal
}

// Webhook answers Vonage's answer webhook: it checks the request's signed
// JWT (Verifier), then answers with the NCCO that connects the call to
// the Server's socket at StreamURL, with a one-time token and the call's
// uuid, from and to as headers.
type Webhook struct {
	// Verifier checks the webhook's Authorization: Bearer JWT; its zero
	// value refuses every request (set SignatureSecret, or Insecure for
	// local tests).
	Verifier Verifier
	// Server is the telephony server the socket connects to.
	Server *telephony.Server
	// StreamURL is the socket's public URL (wss://host/path).
	StreamURL string
	// SampleRate is the audio's rate: 8000 or 16000. Default: 16000.
	SampleRate int
}

// ServeHTTP implements http.Handler. Vonage asks with a GET whose query
// names the call (uuid, from, to), or a POST of the same as JSON.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.Verifier.Check(r); err != nil {
		code := http.StatusForbidden
		if errors.Is(err, ErrBodyTooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, http.StatusText(code), code)
		return
	}
	call := map[string]string{}
	for _, k := range []string{"uuid", "from", "to"} {
		call[k] = r.URL.Query().Get(k)
	}
	if r.Method == http.MethodPost {
		var body map[string]any
		if json.NewDecoder(http.MaxBytesReader(w, r.Body, DefaultMaxBody)).Decode(&body) == nil {
			for k := range call {
				if s, ok := body[k].(string); ok {
					call[k] = s
				}
			}
		}
	}
	headers := map[string]string{telephony.TokenParameter: h.Server.NewToken()}
	for k, v := range call {
		if v != "" {
			headers[k] = v
		}
	}
	rate := h.SampleRate
	if rate != 8000 {
		rate = 16000
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(Answer(h.StreamURL, rate, headers))
}
