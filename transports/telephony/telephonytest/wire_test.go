package telephonytest

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/transports/telephony/twilio"
)

var update = flag.Bool("update", false, "rewrite testdata/caller.golden")

// TestTheCallersMessagesAreTwilios pins the caller's messages in
// testdata/caller.golden (one a line) and reads each back with the
// twilio package's decoder, the server's side of the wire.
func TestTheCallersMessagesAreTwilios(t *testing.T) {
	k := &call{o: Options{}, sid: "MZ1"}
	k.o.defaults()
	ramp := make([]int16, 160)
	for i := range ramp {
		ramp[i] = int16(i * 50)
	}
	msgs := []map[string]any{
		connectedMessage(),
		k.startMessage(map[string]string{"framewire_token": "t0k", "From": "+15005550006"}),
		k.mediaMessage(ramp, 0),
		k.mediaMessage(nil, 1),
		k.dtmfMessage('#'),
		k.markMessage("1600"),
		k.stopMessage(),
	}
	var got bytes.Buffer
	var events []twilio.Event
	var dec twilio.Decoder
	for _, m := range msgs {
		b, err := k.encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(b)
		got.WriteByte('\n')
		ev, err := dec.Decode(b, nil)
		if err != nil {
			t.Fatalf("twilio.Decoder refuses %s: %v", b, err)
		}
		ev.Media.Payload = nil // checked below
		events = append(events, ev)
	}
	want := []twilio.Kind{twilio.KindConnected, twilio.KindStart, twilio.KindMedia, twilio.KindMedia, twilio.KindDTMF, twilio.KindMark, twilio.KindStop}
	var kinds []twilio.Kind
	for _, ev := range events {
		kinds = append(kinds, ev.Kind)
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	st := events[1].Start
	if st.CallSID != k.o.CallSID || st.StreamSID != "MZ1" || st.Format.SampleRate != 8000 || st.Format.Encoding != twilio.EncodingMuLaw ||
		st.CustomParameters["framewire_token"] != "t0k" {
		t.Errorf("start %+v", st)
	}
	if m := events[3].Media; m.Chunk != 2 || m.Timestamp != 20 || m.Track != "inbound" {
		t.Errorf("the second media %+v, want chunk 2 at 20 ms, inbound", m)
	}
	if events[1].Sequence != 1 {
		t.Errorf("start's sequence %d, want 1 (connected has none)", events[1].Sequence)
	}
	if events[4].DTMF.Digit != "#" || events[5].Mark.Name != "1600" || events[6].Sequence != 6 {
		t.Errorf("dtmf %+v, mark %+v, stop's sequence %d", events[4].DTMF, events[5].Mark, events[6].Sequence)
	}
	const golden = "testdata/caller.golden"
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantBytes, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(wantBytes), got.String()); diff != "" {
		t.Errorf("the caller's messages differ from %s (-want +got; go test -update rewrites it):\n%s", golden, diff)
	}
}
