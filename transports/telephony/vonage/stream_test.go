package vonage

import (
	"os"
	"testing"

	"github.com/coder/websocket"

	"github.com/framewire/framewire/transports/telephony"
)

func decodeFile(t *testing.T, s telephony.Stream, typ websocket.MessageType, name string) telephony.Event {
	t.Helper()
	msg, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var ev telephony.Event
	if err := s.Decode(typ, msg, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// The messages are Vonage's documented shapes (testdata/wire-README.md).
func TestAVonageSocketBecomesTheCallTransportsEvents(t *testing.T) {
	s := Provider{}.NewStream()
	start := decodeFile(t, s, websocket.MessageText, "wire-in-connected.json")
	if start.Kind != telephony.EventStart || start.Call.SampleRate != 16000 || start.Call.From != "447700900000" || start.Call.Parameters["token"] != "t-123" {
		t.Errorf("connected: %+v", start)
	}
	if a := decodeFile(t, s, websocket.MessageBinary, "wire-in-audio-16k.bin"); a.Kind != telephony.EventAudio || len(a.Audio) != 320 {
		t.Errorf("audio: %v with %d samples, want 20 ms at 16 kHz", a.Kind, len(a.Audio))
	}
	if n := decodeFile(t, s, websocket.MessageText, "wire-in-notify.json"); n.Kind != telephony.EventMark || n.Mark == "" {
		t.Errorf("notify: %+v, want a mark's echo", n)
	}
	if d := decodeFile(t, s, websocket.MessageText, "wire-in-dtmf.json"); d.Kind != telephony.EventDTMF || d.Digit == "" {
		t.Errorf("dtmf: %+v", d)
	}
	audio, control := s.MessageTypes()
	if audio != websocket.MessageBinary || control != websocket.MessageText {
		t.Errorf("message types %v, %v; want binary audio and text commands", audio, control)
	}
	if b := s.AppendAudio(nil, make([]int16, 320)); len(b) != FrameBytes(16000) {
		t.Errorf("a 20 ms frame is %d bytes, want %d", len(b), FrameBytes(16000))
	}
}
