package webrtc

import (
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/transports"
	"github.com/framewire/framewire/transports/webrtc/internal/codec"
	"github.com/framewire/framewire/transports/webrtc/webrtctest"
)

// offlineReader returns a track reader of an offline session whose input
// pushes 20 ms frames of 16 kHz mono to push, and a second of a 440 Hz
// tone's payloads in the build's codec to feed it.
func offlineReader(tb testing.TB, push func(frames.Frame)) (*audioReader, [][]byte) {
	tb.Helper()
	s := offlineSession(tb)
	payloads, err := webrtctest.EncodeTone(440, 8000, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	s.in.format.Store(&transports.InputFormat{SampleRate: 16000, Channels: 1, FrameDuration: 20 * time.Millisecond})
	s.attachInput(pusherFunc(func(f frames.Frame, _ frames.Direction) { push(f) }))
	c, err := codec.ForMime(codec.Default().Params.MimeType)
	if err != nil {
		tb.Fatal(err)
	}
	return &audioReader{in: s.in, codec: c}, payloads
}

// BenchmarkInputPacket is the input path for one 20 ms packet: decode,
// convert to the pipeline's 16 kHz, cut a frame and push it. Frames and
// their PCM, which the pipeline owns from then on, are allocated a second
// at a time (frames.Block): 0.04 allocations per frame.
func BenchmarkInputPacket(b *testing.B) {
	n := 0
	r, payloads := offlineReader(b, func(frames.Frame) { n++ })
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
	p := offlinePlayer(b, offlineSession(b))
	o := p.o
	f := toneFrame(440, 24000, 480, 0, 8000)
	b.ReportAllocs()
	for b.Loop() {
		o.q.Push(f, frames.Downstream)
		p.tick(codec.FrameDuration)
	}
}

// BenchmarkAssistHelp is what the input and output paths pay per frame for
// the assist while no frame is overdue: a clock read and an atomic load,
// and once a millisecond a look over 100 players.
func BenchmarkAssistHelp(b *testing.B) {
	s := offlineSession(b)
	a := newTickAssist(time.Now())
	a.withHeartbeat = false
	s.srv.assist = a
	for range 100 {
		p := &player{o: s.out}
		p.next = time.Now().Add(time.Hour)
		p.publishDue()
		a.add(p)
	}
	b.ReportAllocs()
	for b.Loop() {
		a.help()
	}
}
