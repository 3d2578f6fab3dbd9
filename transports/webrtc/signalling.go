package webrtc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	pion "github.com/pion/webrtc/v4"
)

// offerRequest is the body of POST /api/offer (docs/protocol.md §1).
type offerRequest struct {
	SDP  string `json:"sdp"`
	Type string `json:"type"`
	// PCID is null on the first connect, then the pc_id of the latest answer.
	PCID *string `json:"pc_id"`
	// RestartPC is true when the client replaced its RTCPeerConnection.
	RestartPC bool `json:"restart_pc"`
	// RequestData is the app's data; Python also accepts request_data.
	RequestData    json.RawMessage `json:"requestData"`
	RequestDataOld json.RawMessage `json:"request_data"`
}

// answerBody is the reply to an offer.
type answerBody struct {
	SDP  string `json:"sdp"`
	Type string `json:"type"`
	PCID string `json:"pc_id"`
}

// patchRequest is the body of PATCH /api/offer: trickled client candidates.
type patchRequest struct {
	PCID       *string         `json:"pc_id"`
	Candidates []candidateInit `json:"candidates"`
}

type candidateInit struct {
	Candidate     string  `json:"candidate"`
	SDPMid        *string `json:"sdp_mid"`
	SDPMLineIndex *uint16 `json:"sdp_mline_index"`
}

// startRequest is the body of POST /start; it may be empty.
type startRequest struct {
	Transport               string          `json:"transport"`
	EnableDefaultICEServers bool            `json:"enableDefaultIceServers"`
	Body                    json.RawMessage `json:"body"`
}

type startResponse struct {
	SessionID string     `json:"sessionId"`
	ICEConfig *iceConfig `json:"iceConfig,omitempty"`
}

type iceConfig struct {
	ICEServers []iceServer `json:"iceServers"`
}

// iceServer is an RTCIceServer as the browser reads it.
type iceServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username,omitempty"`
	Credential any      `json:"credential,omitempty"`
}

// errorBody is the JSON error reply; client-js reads detail (or info).
type errorBody struct {
	Detail string `json:"detail"`
}

var (
	successBody = []byte(`{"status":"success"}` + "\n")
	// defaultICEServers is what Python's runner returns when the client
	// asks for enableDefaultIceServers.
	defaultICEServers = []iceServer{{URLs: []string{"stun:stun.l.google.com:19302"}}}
)

// errBadRequest marks errors that are the client's fault and not worth a
// retry: they become 4xx replies.
var errBadRequest = errors.New("bad request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// parseOffer decodes and checks an offer body.
func parseOffer(body []byte) (offerRequest, error) {
	var req offerRequest
	if err := decodeObject(body, &req); err != nil {
		return req, err
	}
	if req.Type != "offer" {
		return req, badRequest("type is %q, want \"offer\"", req.Type)
	}
	if req.SDP == "" {
		return req, badRequest("sdp is empty")
	}
	if isNull(req.RequestData) {
		req.RequestData = req.RequestDataOld
	}
	if isNull(req.RequestData) {
		req.RequestData = nil
	}
	req.RequestDataOld = nil
	return req, nil
}

// pcID returns the offer's pc_id, or "" for null.
func (r offerRequest) pcID() string {
	if r.PCID == nil {
		return ""
	}
	return *r.PCID
}

// parsePatch decodes and checks a candidates body.
func parsePatch(body []byte) (string, []pion.ICECandidateInit, error) {
	var req patchRequest
	if err := decodeObject(body, &req); err != nil {
		return "", nil, err
	}
	if req.PCID == nil || *req.PCID == "" {
		return "", nil, badRequest("pc_id is missing")
	}
	inits := make([]pion.ICECandidateInit, len(req.Candidates))
	for i, c := range req.Candidates {
		inits[i] = pion.ICECandidateInit{Candidate: c.Candidate, SDPMid: c.SDPMid, SDPMLineIndex: c.SDPMLineIndex}
	}
	return *req.PCID, inits, nil
}

// parseStart decodes a /start body; an empty body is an empty request.
func parseStart(body []byte) (startRequest, error) {
	var req startRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	if err := decodeObject(body, &req); err != nil {
		return req, err
	}
	if req.Transport != "" && req.Transport != "webrtc" {
		return req, badRequest("transport %q is not served here, only \"webrtc\"", req.Transport)
	}
	if isNull(req.Body) {
		req.Body = nil
	}
	return req, nil
}

// decodeObject unmarshals one JSON object into v, with errors that name
// what was wrong.
func decodeObject(body []byte, v any) error {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return badRequest("the body is empty, want a JSON object")
	}
	if t[0] != '{' {
		return badRequest("the body is not a JSON object")
	}
	if err := json.Unmarshal(t, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return badRequest("field %q has a JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return badRequest("invalid JSON: %v", err)
	}
	return nil
}

// checkMediaSections refuses an offer SDP with more than limit m-sections
// (negative: no limit). It counts the "m=" lines without parsing the SDP,
// so an offer of thousands of sections is refused before pion builds a
// transceiver for each.
func checkMediaSections(sdp string, limit int) error {
	if limit < 0 {
		return nil
	}
	n := strings.Count(sdp, "\nm=")
	if strings.HasPrefix(sdp, "m=") {
		n++
	}
	if n > limit {
		return badRequest("the offer has %d media sections; the limit is %d (a browser sends 2 or 3)", n, limit)
	}
	return nil
}
