package openairealtime

import (
	"testing"

	"go.uber.org/zap"

	"github.com/framewire/framewire/frames"
)

func inputState() *state {
	svc := New(Options{APIKey: "k"})
	svc.main.log = zap.NewNop()
	return &state{p: &svc.main}
}

func frame(rate, channels, ms int) *frames.InputAudioRaw {
	return &frames.InputAudioRaw{Audio: frames.Audio{PCM: make([]byte, max(rate/1000*ms*2*channels, 640)), SampleRate: rate, Channels: channels}}
}

// User audio outside 8 to 48 kHz, mono or stereo, is dropped before any
// resampler is built: a client's raw-audio may claim any rate, and a
// filter for 1 Hz or 200 kHz costs memory and time for no audio anyone
// records.
func TestInputAudioOutsideRealFormatsIsDropped(t *testing.T) {
	st := inputState()
	for _, a := range []*frames.InputAudioRaw{
		frame(200_000, 1, 20), frame(4000, 1, 20), frame(1, 1, 20), frame(16000, 3, 20), frame(16000, 0, 20),
	} {
		if pcm := st.inputPCM(a); len(pcm) != 0 {
			t.Errorf("%d Hz, %d channels: %d bytes sent, want none", a.SampleRate, a.Channels, len(pcm))
		}
	}
	if len(st.inRS) != 0 {
		t.Errorf("%d resamplers built for dropped audio", len(st.inRS))
	}
	if st.badAudio != 5 {
		t.Errorf("%d frames counted dropped, want 5", st.badAudio)
	}
	if got := len(st.inputPCM(frame(48000, 2, 20))); got != 960 {
		t.Errorf("20 ms of 48 kHz stereo became %d bytes, want 960 (24 kHz mono)", got)
	}
}

// A stream that switches between rates builds one resampler per rate and
// then costs no allocation per frame: no filter is designed per message.
func TestInputRateSwitchesReuseTheirResamplers(t *testing.T) {
	st := inputState()
	a, b := frame(16000, 1, 20), frame(48000, 1, 20)
	st.inputPCM(a)
	st.inputPCM(b)
	rsA, rsB := st.inRS[16000], st.inRS[48000]
	if allocs := testing.AllocsPerRun(100, func() {
		st.inputPCM(a)
		st.inputPCM(b)
	}); allocs != 0 {
		t.Errorf("%v allocations per pair of frames, want 0", allocs)
	}
	if len(st.inRS) != 2 || st.inRS[16000] != rsA || st.inRS[48000] != rsB {
		t.Errorf("resamplers rebuilt: %d kept", len(st.inRS))
	}
}
