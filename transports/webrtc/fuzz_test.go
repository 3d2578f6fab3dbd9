package webrtc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pion/sdp/v3"

	"github.com/framewire/framewire/frames"
)

// seedBodies adds the recorded request bodies in testdata (real browser
// traffic) to a fuzz corpus.
func seedBodies(f *testing.F, prefix string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", prefix+"*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzParseOffer(f *testing.F) {
	seedBodies(f, "offer")
	f.Add([]byte(`{"sdp":"v=0\r\n","type":"offer","pc_id":null,"restart_pc":false}`))
	f.Add([]byte(`{"sdp":"v=0","type":"offer","pc_id":"abc","restart_pc":true,"requestData":{"a":[1,2]}}`))
	f.Add([]byte(`{"sdp":"v=0","type":"offer","request_data":"x"}`))
	f.Add([]byte(`{"sdp":"v=0\r\no=- 1 2 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\nm=audio 9 RTP/AVP 0\r\nm=audio 9 RTP/AVP 0\r\n","type":"offer"}`))
	f.Add([]byte(`{"sdp":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseOffer(body)
		if err != nil {
			if !strings.Contains(err.Error(), "bad request") {
				t.Fatalf("error %q is not a bad request", err)
			}
			return
		}
		if req.Type != "offer" || req.SDP == "" {
			t.Fatalf("accepted %+v", req)
		}
		if req.RequestData != nil && !json.Valid(req.RequestData) {
			t.Fatalf("requestData %q is not JSON", req.RequestData)
		}
		// The m-section count agrees with pion's parse of the SDP: an offer
		// it admits has at most the limit.
		if checkMediaSections(req.SDP, 2) == nil {
			var parsed sdp.SessionDescription
			if parsed.UnmarshalString(req.SDP) == nil && len(parsed.MediaDescriptions) > 2 {
				t.Fatalf("%d media sections passed a limit of 2", len(parsed.MediaDescriptions))
			}
		}
	})
}

func FuzzParsePatch(f *testing.F) {
	seedBodies(f, "patch")
	f.Add([]byte(`{"pc_id":"p","candidates":[{"candidate":"candidate:1 1 udp 2122260223 192.168.1.5 54321 typ host","sdp_mid":"0","sdp_mline_index":0}]}`))
	f.Add([]byte(`{"pc_id":"p","candidates":[{"candidate":"","sdp_mid":null,"sdp_mline_index":70000}]}`))
	f.Add([]byte(`{"pc_id":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		id, cands, err := parsePatch(body)
		if err != nil {
			return
		}
		if id == "" {
			t.Fatal("accepted an empty pc_id")
		}
		for _, c := range cands {
			_ = c.Candidate
		}
	})
}

func FuzzParseStart(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"transport":"webrtc","enableDefaultIceServers":true,"body":{"x":1}}`))
	f.Add([]byte(`{"body":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseStart(body)
		if err != nil {
			return
		}
		if req.Body != nil && !json.Valid(req.Body) {
			t.Fatalf("body %q is not JSON", req.Body)
		}
	})
}

// FuzzDataChannelMessage feeds arbitrary client frames through the
// session's inbound path: nothing panics, pings and signalling never reach
// the pipeline, and everything that does is valid JSON, in order.
func FuzzDataChannelMessage(f *testing.F) {
	for _, s := range []string{
		`ping: 1732900000000`,
		`{"type":"signalling","message":{"type":"trackStatus","receiver_index":0,"enabled":true}}`,
		`{"type":"signalling","message":{"type":"trackStatus","receiver_index":7,"enabled":false}}`,
		`{"type":"signalling","message":{"type":"renegotiate"}}`,
		`{"type":"signalling","message":"signalling"}`,
		`{"label":"rtvi-ai","type":"client-ready","id":"a1b2c3d4","data":{"version":"2.1.0","about":{"library":"@pipecat-ai/client-js","library_version":"1.13.1","platform_details":{"browser":"Chrome"}}}}`,
		`{"label":"rtvi-ai","type":"client-message","id":"e5f6a7b8","data":{"t":"echo","d":{"s":"héllo"}}}`,
		`{this is not json`,
		`"signalling"`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := offlineSession(t)
		var got [][]byte
		s.attachInput(pusherFunc(func(fr frames.Frame, _ frames.Direction) {
			got = append(got, fr.(*frames.InputTransportMessage).Message)
		}))
		s.onMessage(msg)
		s.mu.Lock()
		if s.watchdog != nil {
			s.watchdog.Stop()
		}
		s.mu.Unlock()
		kind, _ := classify(msg)
		switch {
		case kind == kindApp && len(got) != 1:
			t.Fatalf("an app message was not delivered: %q", msg)
		case kind != kindApp && len(got) != 0:
			t.Fatalf("a %v message reached the pipeline: %q", kind, msg)
		case len(got) == 1 && !json.Valid(got[0]):
			t.Fatalf("invalid JSON reached the pipeline: %q", got[0])
		}
	})
}
