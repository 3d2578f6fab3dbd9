package transports

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
)

// collect is a pipeline.Pusher that keeps the audio frames pushed into it.
type collect []*frames.InputAudioRaw

func (c *collect) Push(f frames.Frame, _ frames.Direction) {
	if a, ok := f.(*frames.InputAudioRaw); ok {
		*c = append(*c, a)
	}
}

func (c *collect) PushError(error) {}

func ramp(n int) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(i)
	}
	return s
}

// Samples at the pipeline's rate are cut into frames of FrameDuration, in
// order, and what is left of a frame waits for the next Write.
func TestFramerCutsFramesAndCarriesTheRest(t *testing.T) {
	a, err := NewAudioFramer(InputFormat{SampleRate: 16000}, 16000)
	if err != nil {
		t.Fatal(err)
	}
	var out collect
	in := ramp(1000) // 62.5 ms
	if n := a.Write(in[:500], &out); n != 1 {
		t.Fatalf("500 samples made %d frames, want 1", n)
	}
	if n := a.Write(in[500:], &out); n != 2 {
		t.Fatalf("500 more made %d frames, want 2", n)
	}
	for i, f := range out {
		if f.Audio.SampleRate != 16000 || f.Audio.Channels != 1 || len(f.Audio.PCM) != 640 {
			t.Fatalf("frame %d: %d Hz, %d channels, %d bytes; want 16000, 1, 640", i, f.Audio.SampleRate, f.Audio.Channels, len(f.Audio.PCM))
		}
		for j := range 320 {
			if got, want := int16(binary.LittleEndian.Uint16(f.Audio.PCM[2*j:])), int16(i*320+j); got != want {
				t.Fatalf("frame %d sample %d = %d, want %d", i, j, got, want)
			}
		}
	}
	a.Reset()
	out = out[:0]
	if n := a.Write(in[:300], &out); n != 0 {
		t.Fatalf("after Reset, 300 samples made %d frames (the 40 left before Reset were kept)", n)
	}
}

// Audio at another rate (a telephone's 8 kHz) is resampled to the
// pipeline's: a second in is a second of frames out, less the filter's
// delay.
func TestFramerResamplesToThePipelineRate(t *testing.T) {
	a, err := NewAudioFramer(InputFormat{SampleRate: 16000}, 8000)
	if err != nil {
		t.Fatal(err)
	}
	var out collect
	for range 50 {
		a.Write(make([]int16, 160), &out)
	}
	if len(out) < 48 || len(out) > 50 {
		t.Fatalf("a second of 8 kHz audio made %d frames of 20 ms at 16 kHz, want 48 to 50", len(out))
	}
}

// A two-channel format copies the mono input to both channels.
func TestFramerCopiesMonoToStereo(t *testing.T) {
	a, err := NewAudioFramer(InputFormat{SampleRate: 16000, Channels: 2, FrameDuration: 10 * time.Millisecond}, 16000)
	if err != nil {
		t.Fatal(err)
	}
	var out collect
	a.Write(ramp(160), &out)
	if len(out) != 1 || len(out[0].Audio.PCM) != 640 || out[0].Audio.Channels != 2 {
		t.Fatalf("got %d frames; want one stereo 10 ms frame of 640 bytes", len(out))
	}
	pcm := out[0].Audio.PCM
	for i := range 160 {
		l, r := binary.LittleEndian.Uint16(pcm[4*i:]), binary.LittleEndian.Uint16(pcm[4*i+2:])
		if l != uint16(i) || r != uint16(i) {
			t.Fatalf("sample %d: left %d right %d, want %d in both", i, l, r, i)
		}
	}
}

// A rate the framer cannot work with is an error, not a framer that
// divides by zero later.
func TestFramerRefusesBadRates(t *testing.T) {
	for _, c := range []struct{ frameRate, inRate int }{{0, 16000}, {16000, 0}, {-8000, 8000}} {
		if _, err := NewAudioFramer(InputFormat{SampleRate: c.frameRate}, c.inRate); err == nil {
			t.Errorf("NewAudioFramer(%d Hz frames, %d Hz in) succeeded", c.frameRate, c.inRate)
		}
	}
}

// Framing allocates a second of frames at a time, not one per frame.
func TestFramerAllocatesLessThanOncePerFrame(t *testing.T) {
	a, err := NewAudioFramer(InputFormat{SampleRate: 16000}, 48000)
	if err != nil {
		t.Fatal(err)
	}
	var out collect
	out = make(collect, 0, 1000)
	in := make([]int16, 960)
	a.Write(in, &out)
	allocs := testing.AllocsPerRun(200, func() {
		if len(out) == cap(out) {
			out = out[:0]
		}
		a.Write(in, &out)
	})
	if allocs > 0.1 {
		t.Fatalf("%.2f allocations per 20 ms frame, want at most one per second of frames", allocs)
	}
}

func TestAudioInDropsBeforeStartPacesAndFollowsTheStreamsRate(t *testing.T) {
	clock := time.Unix(1000, 0)
	a := AudioIn{Pacer: Pacer{MaxAhead: 100 * time.Millisecond, Now: func() time.Time { return clock }}}
	var out collect
	if n, ok, err := a.Write(nil, ramp(160), 8000, &out); n != 0 || !ok || err != nil {
		t.Fatalf("before Start: %d frames, %v, %v; want the samples dropped quietly", n, ok, err)
	}
	f := &InputFormat{SampleRate: 16000, Channels: 1}
	// 20 ms of 8 kHz at a time: the first 100 ms ahead pass, the next are
	// dropped until the clock moves.
	pushed, dropped := 0, 0
	for range 10 {
		n, ok, err := a.Write(f, ramp(160), 8000, &out)
		if err != nil {
			t.Fatal(err)
		}
		pushed += n
		if !ok {
			dropped++
		}
	}
	if dropped == 0 || dropped > 5 {
		t.Errorf("%d of 10 frames sent at once dropped, want those past MaxAhead", dropped)
	}
	if len(out) != pushed || pushed == 0 || out[0].Audio.SampleRate != 16000 {
		t.Fatalf("%d frames pushed (%d counted), want 16 kHz frames", len(out), pushed)
	}
	// The stream's rate changes: the framer follows.
	clock = clock.Add(time.Second)
	if _, ok, err := a.Write(f, ramp(320), 16000, &out); !ok || err != nil {
		t.Fatalf("16 kHz after 8 kHz: %v, %v", ok, err)
	}
	if a.framer.InRate() != 16000 {
		t.Errorf("the framer converts from %d Hz, want the stream's new 16000", a.framer.InRate())
	}
}
