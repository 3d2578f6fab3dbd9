package webrtc

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pion/sdp/v3"

	"github.com/framewire/framewire/transports/webrtc/internal/codec"
)

// TestAnswerToARecordedChromeOffer answers the offer Chromium 148 sent
// (client-js 1.13.1, small-webrtc-transport 1.10.8, stub media manager):
// the bot's audio must ride on mid 0 as sendrecv, the video line must be
// accepted, and the answer must carry the server's candidates.
func TestAnswerToARecordedChromeOffer(t *testing.T) {
	body, err := os.ReadFile("testdata/offer-chrome.json")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{})
	status, _, resp := do(t, "POST", h.url("/api/offer"), string(body))
	if status != 200 {
		t.Fatalf("status %d: %s", status, resp)
	}
	var ans struct {
		SDP, Type string
		PCID      string `json:"pc_id"`
	}
	if err := json.Unmarshal([]byte(resp), &ans); err != nil {
		t.Fatal(err)
	}
	if ans.Type != "answer" || ans.PCID == "" {
		t.Fatalf("answer type %q, pc_id %q", ans.Type, ans.PCID)
	}
	var d sdp.SessionDescription
	if err := d.UnmarshalString(ans.SDP); err != nil {
		t.Fatal(err)
	}
	if len(d.MediaDescriptions) != 3 {
		t.Fatalf("%d media sections, want audio, video and application", len(d.MediaDescriptions))
	}
	audio, video := d.MediaDescriptions[0], d.MediaDescriptions[1]
	if mid, _ := audio.Attribute("mid"); audio.MediaName.Media != "audio" || mid != "0" {
		t.Errorf("first section is %s mid %s, want audio mid 0", audio.MediaName.Media, mid)
	}
	if _, ok := audio.Attribute("sendrecv"); !ok {
		t.Error("the audio line is not sendrecv: the bot's track did not bind to transceiver 0")
	}
	want := strings.ToLower(strings.TrimPrefix(codec.Default().Params.MimeType, "audio/"))
	rtpmap := strings.Join(attributes(audio, "rtpmap"), " | ")
	if !strings.Contains(strings.ToLower(rtpmap), want+"/") {
		t.Errorf("audio codecs %q do not include %s", rtpmap, want)
	}
	if codec.HasOpus() && !strings.Contains(rtpmap, "opus/48000/2") {
		t.Errorf("audio codecs %q: want opus/48000/2", rtpmap)
	}
	if video.MediaName.Port.Value == 0 {
		t.Error("the video line was rejected (port 0)")
	}
	if _, ok := video.Attribute("recvonly"); !ok {
		t.Error("the video line is not recvonly")
	}
	if !strings.Contains(ans.SDP, "a=candidate:") || !strings.Contains(ans.SDP, "a=end-of-candidates") {
		t.Error("the answer is not complete: candidates or end-of-candidates missing")
	}
	// The recorded PATCH applies to the new connection.
	patch, err := os.ReadFile("testdata/patch-chrome.json")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	_ = json.Unmarshal(patch, &p)
	p["pc_id"] = ans.PCID
	patch, _ = json.Marshal(p)
	if status, _, resp := do(t, "PATCH", h.url("/api/offer"), string(patch)); status != 200 {
		t.Errorf("recorded PATCH: %d %s", status, resp)
	}
}

func attributes(m *sdp.MediaDescription, key string) []string {
	var out []string
	for _, a := range m.Attributes {
		if a.Key == key {
			out = append(out, a.Value)
		}
	}
	return out
}
