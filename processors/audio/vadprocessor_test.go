package audio

import (
	"fmt"
	"testing"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

// audioFrames cuts pcm into InputAudioRaw frames of d.
func audioFrames(pcm []byte, rate, channels int, d time.Duration) []frames.Frame {
	n := dsp.FrameBytes(rate, channels, d)
	var out []frames.Frame
	for i := 0; i+n <= len(pcm); i += n {
		out = append(out, &frames.InputAudioRaw{Audio: frames.Audio{PCM: pcm[i : i+n], SampleRate: rate, Channels: channels}})
	}
	return out
}

// event is a non-audio frame and how many audio frames went before it.
type event struct {
	after int
	kind  string
}

func (e event) String() string { return fmt.Sprintf("%s after %d", e.kind, e.after) }

// events summarises a frame sequence: the audio frames must come in order,
// and every other frame is reported with the number of audio frames
// before it.
func events(t *testing.T, fs []frames.Frame, sent []frames.Frame) []event {
	t.Helper()
	var out []event
	audio := 0
	for _, f := range fs {
		if a, ok := f.(*frames.InputAudioRaw); ok {
			if audio >= len(sent) || sent[audio] != a {
				t.Fatalf("audio frame %d out of order or unknown", audio)
			}
			audio++
			continue
		}
		out = append(out, event{audio, frames.TypeName(f)})
	}
	if audio != len(sent) && sent != nil {
		t.Fatalf("%d of %d audio frames forwarded", audio, len(sent))
	}
	return out
}

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The tone scene of TestVADToneExactTiming in 20 ms frames: window w is in
// frame w/2, so the start (window 123) comes after frame 61 and the stop
// (window 226) after frame 113; UserSpeaking comes with the start and then
// every 200 ms (10 frames) of audio until the stop.
func TestVADProcessorEmitsStartSpeakingStop(t *testing.T) {
	pcm := new(scene).silence(time.Second).tone(440, 0.5, time.Second).silence(time.Second).pcm
	send := audioFrames(pcm, rate16k, 1, 20*time.Millisecond)
	p := NewVADProcessor(VADProcessorOptions{Now: func() time.Time { return fixedNow }})
	res := pipelinetest.Run(t, p, pipelinetest.Options{Send: send})

	want := []event{
		{62, "VADUserStartedSpeakingFrame"}, {62, "UserSpeakingFrame"},
		{72, "UserSpeakingFrame"}, {82, "UserSpeakingFrame"}, {92, "UserSpeakingFrame"},
		{102, "UserSpeakingFrame"}, {112, "UserSpeakingFrame"},
		{114, "VADUserStoppedSpeakingFrame"},
	}
	down := res.Down()
	if got := events(t, down, send); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("downstream:\n got %v\nwant %v", got, want)
	}
	for _, f := range down {
		switch f := f.(type) {
		case *frames.VADUserStartedSpeaking:
			if f.StartSecs != 0.2 || !f.Timestamp.Equal(fixedNow) {
				t.Errorf("VADUserStartedSpeaking{StartSecs: %v, Timestamp: %v}, want 0.2 and the clock's time", f.StartSecs, f.Timestamp)
			}
		case *frames.VADUserStoppedSpeaking:
			if f.StopSecs != 0.2 || !f.Timestamp.Equal(fixedNow) {
				t.Errorf("VADUserStoppedSpeaking{StopSecs: %v, Timestamp: %v}, want 0.2 and the clock's time", f.StopSecs, f.Timestamp)
			}
		}
	}
	// The same frames are broadcast upstream, as sibling pairs.
	up := res.Up()
	if len(up) != len(want) {
		t.Fatalf("%d frames upstream, want %d", len(up), len(want))
	}
	var downVAD []frames.Frame
	for _, f := range down {
		if _, ok := f.(*frames.InputAudioRaw); !ok {
			downVAD = append(downVAD, f)
		}
	}
	for i, f := range up {
		if frames.TypeName(f) != want[i].kind || f.FrameBase().SiblingID != downVAD[i].FrameBase().ID() {
			t.Errorf("upstream %d: %s with sibling %d, want %s paired with %d", i, frames.TypeName(f), f.FrameBase().SiblingID, want[i].kind, downVAD[i].FrameBase().ID())
		}
	}
}

// Stereo and 48 kHz input give the same decisions: the audio is mixed down
// and the analyzer follows the frames' rate, keeping 10 ms windows.
func TestVADProcessorFollowsFormat(t *testing.T) {
	want := []event{{62, "VADUserStartedSpeakingFrame"}, {114, "VADUserStoppedSpeakingFrame"}}
	for _, c := range []struct{ rate, channels int }{{16000, 2}, {48000, 1}, {24000, 2}} {
		var pcm []byte
		tone := dsp.Tone{Freq: 440, Amplitude: 0.5, SampleRate: c.rate, Channels: c.channels}
		pcm = dsp.AppendSilence(pcm, c.rate, c.channels, time.Second)
		pcm = tone.AppendDuration(pcm, time.Second)
		pcm = dsp.AppendSilence(pcm, c.rate, c.channels, time.Second)
		send := audioFrames(pcm, c.rate, c.channels, 20*time.Millisecond)
		p := NewVADProcessor(VADProcessorOptions{SpeakingPeriod: -1, DownstreamOnly: true})
		res := pipelinetest.Run(t, p, pipelinetest.Options{Send: send})
		if got := events(t, res.Down(), send); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%d Hz, %d channels: %v, want %v", c.rate, c.channels, got, want)
		}
		if up := res.Up(); len(up) != 0 {
			t.Errorf("DownstreamOnly sent %d frames upstream", len(up))
		}
	}
}

// Frames of any length work: 30 ms frames put the start (window 123) in
// frame 41 and the stop (window 226) in frame 75.
func TestVADProcessorOddFrameSizes(t *testing.T) {
	pcm := new(scene).silence(time.Second).tone(440, 0.5, time.Second).silence(time.Second).pcm
	send := audioFrames(pcm, rate16k, 1, 30*time.Millisecond)
	res := pipelinetest.Run(t, NewVADProcessor(VADProcessorOptions{SpeakingPeriod: -1}), pipelinetest.Options{Send: send})
	want := []event{{42, "VADUserStartedSpeakingFrame"}, {76, "VADUserStoppedSpeakingFrame"}}
	if got := events(t, res.Down(), send); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Audio the analyzer cannot take (no rate, no channels) is forwarded and
// otherwise ignored: no VAD frames, no errors.
func TestVADProcessorSkipsUnusableAudio(t *testing.T) {
	tone := new(scene).silence(500*time.Millisecond).tone(440, 0.5, time.Second).pcm
	send := []frames.Frame{
		&frames.InputAudioRaw{Audio: frames.Audio{PCM: tone, SampleRate: 0, Channels: 1}},
		&frames.InputAudioRaw{Audio: frames.Audio{PCM: tone, SampleRate: 16000, Channels: 0}},
		&frames.InputAudioRaw{Audio: frames.Audio{PCM: tone, SampleRate: 16000, Channels: 1}},
	}
	res := pipelinetest.Run(t, NewVADProcessor(VADProcessorOptions{}), pipelinetest.Options{Send: send})
	// Only the last frame is analysed: its second of tone starts speech.
	got := events(t, res.Down(), send)
	if len(got) == 0 || got[0].kind != "VADUserStartedSpeakingFrame" {
		t.Fatalf("got %v, want a start after the third frame", got)
	}
	for _, e := range got {
		if e.after != 3 {
			t.Fatalf("got %v, want every VAD frame after the third frame", got)
		}
	}
	for _, f := range res.Up() {
		if _, ok := f.(*frames.Error); ok {
			t.Fatalf("unusable audio raised an error: %v", f)
		}
	}
}
