package webrtc

import (
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
	"github.com/framewire/framewire/transports/webrtc/internal/testclient"
)

// BenchmarkInputPacket is the input path for one 20 ms packet: decode,
// convert to the pipeline's 16 kHz, cut a frame and push it. Frames and
// their PCM, which the pipeline owns from then on, are allocated a second
// at a time (frameBlock): 0.04 allocations per frame.
func BenchmarkInputPacket(b *testing.B) {
	s := offlineSession(b)
	payloads, err := testclient.EncodeTone(440, 8000, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	s.in.format.Store(&inputFormat{rate: 16000, channels: 1, samples: 320})
	n := 0
	s.attachInput(pusherFunc(func(frames.Frame, frames.Direction) { n++ }))
	c, _ := codec.ForMime(codec.Default().Params.MimeType)
	r := audioReader{in: s.in, codec: c}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.packet(payloads[i%len(payloads)])
		i++
	}
	if n == 0 {
		b.Fatal("no frames pushed")
	}
}

// BenchmarkOutputTick is the output path for one 20 ms frame of 24 kHz
// audio: take it from the queue, encode it and hand it to the track.
func BenchmarkOutputTick(b *testing.B) {
	s := offlineSession(b)
	o := s.out
	o.out = pusherFunc(func(frames.Frame, frames.Direction) {})
	o.log = s.log
	p := &player{o: o, c: s.srv.codec, defaultRate: 24000}
	if err := p.openEncoder(); err != nil {
		b.Fatal(err)
	}
	f := toneFrame(440, 24000, 480, 0, 8000)
	b.ReportAllocs()
	for b.Loop() {
		o.q.Push(f, frames.Downstream)
		p.tick(codec.FrameDuration)
	}
}
