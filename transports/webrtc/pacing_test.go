package webrtc

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// pacedReader returns a PCMU track reader of an offline session, paced
// with the default MaxAhead on clock, which counts the 20 ms frames the
// input pushes into *pushed.
func pacedReader(tb testing.TB, clock *fakeClock, pushed *int) *audioReader {
	tb.Helper()
	s := offlineSession(tb)
	s.in.format.Store(&transports.InputFormat{SampleRate: 16000, Channels: 1, FrameDuration: 20 * time.Millisecond})
	s.attachInput(pusherFunc(func(f frames.Frame, _ frames.Direction) {
		if _, ok := f.(*frames.InputAudioRaw); ok {
			*pushed++
		}
	}))
	r := &audioReader{in: s.in, codec: codec.PCMU(), pace: transports.Pacer{MaxAhead: s.in.opts.MaxAhead, Now: clock.now}}
	return r
}

// Issue 26 row 3: RTP at 10 and 240 times real time (120 ms PCMU packets,
// 83 and 2000 a second) gets real time plus the burst allowance into the
// pipeline, not everything the client sent (before: all of it, 36,958
// frames queued behind a slow processor in 5 s).
func TestInputPacesAudioFasterThanRealTime(t *testing.T) {
	if s := offlineSession(t); s.in.opts.MaxAhead != transports.DefaultMaxAhead {
		t.Fatalf("default MaxAhead %v, want %v", s.in.opts.MaxAhead, transports.DefaultMaxAhead)
	}
	payload := make([]byte, 960) // 120 ms of PCMU
	for _, speed := range []int{10, 240} {
		clock := &fakeClock{t: time.Unix(1e9, 0)}
		pushed := 0
		r := pacedReader(t, clock, &pushed)
		const wall = 5 * time.Second
		interval := 120 * time.Millisecond / time.Duration(speed)
		sent := 0
		for elapsed := time.Duration(0); elapsed < wall; elapsed += interval {
			clock.t = clock.t.Add(interval)
			r.packet(payload)
			sent++
		}
		// Real time plus the burst, give or take a packet and the
		// resampler's delay: 5.5 s of 20 ms frames is 275.
		want := int((wall + transports.DefaultMaxAhead) / (20 * time.Millisecond))
		if pushed > want || pushed < want-12 {
			t.Errorf("%d× real time: %d packets (%v of audio) in %v gave %d frames, want about %d (real time plus %v)",
				speed, sent, time.Duration(sent)*120*time.Millisecond, wall, pushed, want, transports.DefaultMaxAhead)
		}
		if got := r.in.PacketsDropped(); got == 0 || int(got)+pushed*20/120 < sent-2 {
			t.Errorf("%d× real time: %d packets dropped of %d sent, %d frames pushed", speed, got, sent, pushed)
		}
	}
}

// A client at real time loses nothing, even when its packets arrive with
// jitter (each up to 80 ms late, none reordered) and after a stall of
// 300 ms that delivers its packets at once.
func TestInputPacingLosesNothingAtRealTime(t *testing.T) {
	clock := &fakeClock{}
	start := time.Unix(1e9, 0)
	pushed := 0
	r := pacedReader(t, clock, &pushed)
	rng := rand.New(rand.NewPCG(26, 3))
	payload := make([]byte, 160) // 20 ms of PCMU
	const packets = 1000         // 20 s
	last := start
	for i := range packets {
		at := start.Add(time.Duration(i) * 20 * time.Millisecond).Add(time.Duration(rng.IntN(80)) * time.Millisecond)
		if i >= 500 && i < 515 { // a stall: these 300 ms arrive together
			at = start.Add(515 * 20 * time.Millisecond)
		}
		if at.Before(last) {
			at = last
		}
		clock.t, last = at, at
		r.packet(payload)
	}
	if d := r.in.PacketsDropped(); d != 0 {
		t.Fatalf("%d of %d packets dropped at real time", d, packets)
	}
	if pushed < packets-1 { // the resampler holds back a few samples
		t.Fatalf("%d frames pushed for %d packets", pushed, packets)
	}
}

func TestPayloadDurationReadsOpusAndPCMU(t *testing.T) {
	for _, tc := range []struct {
		mime    string
		payload []byte
		want    time.Duration
		ok      bool
	}{
		{"audio/PCMU", make([]byte, 160), 20 * time.Millisecond, true},
		{"audio/pcmu", make([]byte, 960), 120 * time.Millisecond, true},
		{"audio/PCMU", nil, 0, false},
		{"audio/opus", []byte{0xf8, 1, 2}, 20 * time.Millisecond, true},     // CELT fullband 20 ms, one frame
		{"audio/opus", []byte{0xf9, 1, 2}, 40 * time.Millisecond, true},     // two frames
		{"audio/opus", []byte{0xfb, 6}, 120 * time.Millisecond, true},       // code 3, 6 frames of 20 ms
		{"audio/opus", []byte{0xfb, 7}, 0, false},                           // 140 ms: invalid
		{"audio/opus", []byte{0x18 | 0x3, 2}, 120 * time.Millisecond, true}, // SILK 60 ms × 2
		{"audio/opus", []byte{0x80, 0}, 2500 * time.Microsecond, true},      // CELT 2.5 ms
		{"audio/opus", []byte{0x03}, 0, false},                              // code 3 without its count
		{"audio/opus", nil, 0, false},                                       // empty
		{"audio/G722", make([]byte, 160), 0, false},                         // unknown: decode to tell
	} {
		got, ok := payloadDuration(tc.mime, tc.payload)
		if got != tc.want || ok != tc.ok {
			t.Errorf("payloadDuration(%s, % x) = %v, %v; want %v, %v", tc.mime, tc.payload, got, ok, tc.want, tc.ok)
		}
	}
	if codec.HasOpus() {
		payloads, err := webrtctest.EncodeTone(440, 8000, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range payloads {
			if d, ok := opusDuration(p); !ok || d != codec.FrameDuration {
				t.Fatalf("an encoded frame reads as %v, %v; want %v", d, ok, codec.FrameDuration)
			}
		}
	}
}

// FuzzOpusDuration: any payload reads as invalid or as 2.5 to 120 ms.
func FuzzOpusDuration(f *testing.F) {
	f.Add([]byte{0xf8})
	f.Add([]byte{0xfb, 0x3f})
	f.Add([]byte{0x03})
	f.Fuzz(func(t *testing.T, p []byte) {
		d, ok := opusDuration(p)
		if ok && (d < 2500*time.Microsecond || d > 120*time.Millisecond) {
			t.Fatalf("% x reads as %v", p, d)
		}
		if !ok && d != 0 {
			t.Fatalf("% x: invalid but %v", p, d)
		}
	})
}

// BenchmarkInputPacketPaced is BenchmarkInputPacket with the pacer on, at
// real time: the pacing adds no allocation.
func BenchmarkInputPacketPaced(b *testing.B) {
	n := 0
	r, payloads := offlineReader(b, func(frames.Frame) { n++ })
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	r.pace = transports.Pacer{MaxAhead: transports.DefaultMaxAhead, Now: clock.now}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clock.t = clock.t.Add(codec.FrameDuration)
		r.packet(payloads[i%len(payloads)])
		i++
	}
	if n == 0 || r.in.PacketsDropped() != 0 {
		b.Fatalf("%d frames pushed, %d packets dropped", n, r.in.PacketsDropped())
	}
}
