package webrtc

import (
	"testing"
	"time"

	"github.com/pion/rtcp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

func TestAToneSentUpArrivesAs16kHzMonoFramesOf20ms(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{ToneHz: 440})
	_, b, _ := h.session(c)
	var got []int16
	eventually(t, 10*time.Second, "one second of input audio", func() bool {
		for _, f := range b.takeAudio() {
			if f.SampleRate != 16000 || f.Channels != 1 || len(f.PCM) != 640 {
				t.Fatalf("input frame: %d Hz, %d channels, %d bytes; want 16000, 1, 640", f.SampleRate, f.Channels, len(f.PCM))
			}
			got = append(got, samples(&f.Audio)...)
		}
		return len(got) >= 16000*3/2
	})
	// Skip the codec's and resampler's start-up.
	dominant(t, got[3200:], 16000, 440, 300, 600, 1000, 2000)
}

func TestAudioFramesSentDownArriveDecodedWithTheSameFrequency(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{})
	_, _, task := h.session(c)
	var speaking []string
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	pipeline.OnDownstream(task, func(f frames.Frame) {
		switch f.(type) {
		case *frames.BotStartedSpeaking, *frames.BotStoppedSpeaking:
			<-mu
			speaking = append(speaking, frames.TypeName(f))
			mu <- struct{}{}
		}
	})
	c.Received() // forget the silence so far
	// 1.5 s of 660 Hz at the pipeline's 24 kHz, in 40 ms frames as Pipecat's
	// TTS services produce them.
	for k := range 75 / 2 {
		task.QueueFrame(toneFrame(660, 24000, 960, k*960, 8000))
	}
	eventually(t, 10*time.Second, "bot stopped speaking", func() bool {
		<-mu
		defer func() { mu <- struct{}{} }()
		return len(speaking) == 2
	})
	if speaking[0] != "BotStartedSpeakingFrame" || speaking[1] != "BotStoppedSpeakingFrame" {
		t.Errorf("speaking frames = %v", speaking)
	}
	got := c.Received()
	rate := c.SampleRate()
	// Find the tone: skip leading silence, then check the next second.
	start := 0
	for start < len(got) && abs(got[start]) < 1000 {
		start++
	}
	if len(got)-start < rate {
		t.Fatalf("only %d samples of audio after the silence", len(got)-start)
	}
	dominant(t, got[start+rate/10:start+rate], rate, 660, 440, 1000, 2000)
}

func abs(v int16) int16 {
	if v < 0 {
		return -v
	}
	return v
}

func TestTheServerReportsReceptionOfTheClientsAudio(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := testContext(t, 20*time.Second)
	c := h.dial(ctx, webrtctest.Options{ToneHz: 440})
	var first rtcp.ReceptionReport
	eventually(t, 10*time.Second, "a receiver report", func() bool {
		var n int
		first, n = c.LastReport()
		return n > 0
	})
	var last rtcp.ReceptionReport
	eventually(t, 10*time.Second, "a later receiver report", func() bool {
		last, _ = c.LastReport()
		return last.LastSequenceNumber != first.LastSequenceNumber
	})
	// Reports come every second; 50 packets a second go up.
	if d := last.LastSequenceNumber - first.LastSequenceNumber; d < 25 || d > 100 {
		t.Errorf("the highest sequence number moved by %d between reports, want about 50", d)
	}
	if last.TotalLost != 0 || last.FractionLost != 0 {
		t.Errorf("report %+v: want nothing lost on loopback", last)
	}
	// The reports answer the client's own sender reports, so that it can
	// measure the round trip.
	eventually(t, 10*time.Second, "a receiver report answering a sender report", func() bool {
		last, _ = c.LastReport()
		return last.LastSenderReport != 0
	})
	if last.Delay > 65536 {
		t.Errorf("the report says the client's sender report came %v before it, want under the 1 s interval",
			time.Duration(last.Delay)*time.Second/65536)
	}
}

func TestTheInputAllocatesItsFramesASecondAtATime(t *testing.T) {
	var got []*frames.InputAudioRaw
	r, payloads := offlineReader(t, func(f frames.Frame) { got = append(got, f.(*frames.InputAudioRaw)) })
	for _, p := range payloads {
		r.packet(p) // the decoder and the first blocks
	}
	got = make([]*frames.InputAudioRaw, 0, 200)
	// AllocsPerRun rounds down to whole allocations per run: a second of
	// packets makes one block of frames and one of samples.
	if a := testing.AllocsPerRun(3, func() {
		for _, p := range payloads {
			r.packet(p)
		}
	}); a > 2 {
		t.Errorf("%.0f allocations per second of audio; want 2", a)
	}
	// The frames share blocks, never samples.
	last := got[len(got)-1]
	want := append([]byte(nil), last.PCM...)
	for _, f := range got[:len(got)-1] {
		f.PCM = append(f.PCM, 1, 2, 3, 4)
	}
	if string(last.PCM) != string(want) {
		t.Error("appending to a frame's samples changed the next frame's")
	}
}
