package plivo

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/transports/telephony"
)

func decodeFile(t *testing.T, s telephony.Stream, name string) telephony.Event {
	t.Helper()
	msg, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var ev telephony.Event
	if err := s.Decode(websocket.MessageText, msg, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// The messages are Plivo's documented examples (testdata/wire-README.md).
func TestAPlivoStreamBecomesTheCallTransportsEvents(t *testing.T) {
	s := Provider{}.NewStream()
	start := decodeFile(t, s, "wire-in-start.json")
	want := telephony.Call{CallID: "12345678-1234-1234-1234-123456789abc", StreamID: "87654321-4321-4321-4321-cba987654321",
		AccountID: "MAXXXXXXXXXXXXXXXXXX", Parameters: map[string]string{"userId": "12345", "sessionId": "abc-xyz"}, SampleRate: 8000}
	if start.Kind != telephony.EventStart {
		t.Fatalf("start decoded as %v", start.Kind)
	}
	if diff := cmp.Diff(want, start.Call); diff != "" {
		t.Errorf("call (-want +got):\n%s", diff)
	}
	if media := decodeFile(t, s, "wire-in-media.json"); media.Kind != telephony.EventAudio || len(media.Audio) == 0 {
		t.Errorf("media: %v with %d samples", media.Kind, len(media.Audio))
	}
	if played := decodeFile(t, s, "wire-in-playedstream.json"); played.Kind != telephony.EventMark || played.Mark != "customer greeting audio" {
		t.Errorf("playedStream: %+v, want the checkpoint's echo", played)
	}
	if dtmf := decodeFile(t, s, "wire-in-dtmf.json"); dtmf.Kind != telephony.EventDTMF || dtmf.Digit == "" {
		t.Errorf("dtmf: %+v", dtmf)
	}
	// Out: the stream's own encoding and rate, its id on the controls.
	var play struct {
		Event string `json:"event"`
		Media struct {
			ContentType string `json:"contentType"`
			SampleRate  int    `json:"sampleRate"`
			Payload     string `json:"payload"`
		} `json:"media"`
	}
	if err := json.Unmarshal(s.AppendAudio(nil, make([]int16, 160)), &play); err != nil {
		t.Fatal(err)
	}
	if play.Event != "playAudio" || play.Media.ContentType != EncodingMuLaw || play.Media.SampleRate != 8000 || play.Media.Payload == "" {
		t.Errorf("playAudio %+v", play)
	}
	var ctl map[string]any
	if err := json.Unmarshal(s.AppendMark(nil, "4800"), &ctl); err != nil || ctl["event"] != "checkpoint" || ctl["streamId"] != want.StreamID || ctl["name"] != "4800" {
		t.Errorf("checkpoint %v, %v", ctl, err)
	}
	if err := json.Unmarshal(s.AppendClear(nil), &ctl); err != nil || ctl["event"] != "clearAudio" || ctl["streamId"] != want.StreamID {
		t.Errorf("clearAudio %v, %v", ctl, err)
	}
}

func TestExtraHeadersCarryTheStreamsParameters(t *testing.T) {
	got := ExtraHeaders("framewire_token=abc; userId=1;flag;;=x")
	want := map[string]string{"framewire_token": "abc", "userId": "1", "flag": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
