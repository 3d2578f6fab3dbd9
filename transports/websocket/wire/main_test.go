package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/framewire/framewire/transports/websocket/wire/internal/framespb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// equateEmpty compares Frames whose absent and empty byte fields differ
// only in being nil or empty: protobuf does not tell them apart.
var equateEmpty = cmpopts.EquateEmpty()

// toProto is f as protoc-gen-go's types, the reference the hand-written
// code is checked against.
func toProto(f *Frame) *framespb.Frame {
	switch f.Kind {
	case KindText:
		return &framespb.Frame{Frame: &framespb.Frame_Text{Text: &framespb.TextFrame{
			Id: f.ID, Name: string(f.Name), Text: string(f.Text)}}}
	case KindAudio:
		a := &framespb.AudioRawFrame{Id: f.ID, Name: string(f.Name), Audio: f.Audio,
			SampleRate: uint32(f.SampleRate), NumChannels: uint32(f.Channels)}
		if f.HasPTS {
			a.Pts = proto.Uint64(f.PTS)
		}
		return &framespb.Frame{Frame: &framespb.Frame_Audio{Audio: a}}
	case KindTranscription:
		return &framespb.Frame{Frame: &framespb.Frame_Transcription{Transcription: &framespb.TranscriptionFrame{
			Id: f.ID, Name: string(f.Name), Text: string(f.Text), UserId: string(f.UserID), Timestamp: string(f.Timestamp)}}}
	case KindMessage:
		return &framespb.Frame{Frame: &framespb.Frame_Message{Message: &framespb.MessageFrame{Data: string(f.Data)}}}
	case KindInterruption:
		return &framespb.Frame{Frame: &framespb.Frame_Interruption{Interruption: &framespb.InterruptionFrame{
			Id: f.ID, Name: string(f.Name)}}}
	}
	return &framespb.Frame{}
}

// fromProto is the Frame that pb describes; a Frame with no payload has
// the zero Kind.
func fromProto(pb *framespb.Frame) Frame {
	switch p := pb.Frame.(type) {
	case *framespb.Frame_Text:
		return Frame{Kind: KindText, ID: p.Text.Id, Name: []byte(p.Text.Name), Text: []byte(p.Text.Text)}
	case *framespb.Frame_Audio:
		a := p.Audio
		f := Frame{Kind: KindAudio, ID: a.Id, Name: []byte(a.Name), Audio: a.Audio,
			SampleRate: int(a.SampleRate), Channels: int(a.NumChannels)}
		if a.Pts != nil {
			f.PTS, f.HasPTS = *a.Pts, true
		}
		return f
	case *framespb.Frame_Transcription:
		t := p.Transcription
		return Frame{Kind: KindTranscription, ID: t.Id, Name: []byte(t.Name), Text: []byte(t.Text),
			UserID: []byte(t.UserId), Timestamp: []byte(t.Timestamp)}
	case *framespb.Frame_Message:
		return Frame{Kind: KindMessage, Data: []byte(p.Message.Data)}
	case *framespb.Frame_Interruption:
		return Frame{Kind: KindInterruption, ID: p.Interruption.Id, Name: []byte(p.Interruption.Name)}
	}
	return Frame{}
}

// marshal is proto.Marshal of f's protobuf message, failing the test on
// error.
func marshal(t testing.TB, f *Frame) []byte {
	t.Helper()
	b, err := proto.Marshal(toProto(f))
	if err != nil {
		t.Fatalf("proto.Marshal(%+v): %v", f, err)
	}
	return b
}

// diffFrames is cmp.Diff of two Frames with nil and empty equated.
func diffFrames(want, got Frame) string { return cmp.Diff(want, got, equateEmpty) }

// pcm is n bytes of a deterministic pattern.
func pcm(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + 7)
	}
	return b
}
