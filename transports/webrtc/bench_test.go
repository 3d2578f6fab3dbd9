package webrtc

import (
	"encoding/binary"
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

// BenchmarkOutputWriteAudio is the WebRTC part of the output path for
// one 20 ms frame of 24 kHz audio: encode it and hand it to the track
// (the base's part, taking it from the queue, is transports'
// BenchmarkOutputTick).
func BenchmarkOutputWriteAudio(b *testing.B) {
	s := offlineSession(b)
	c := s.out.conn
	rate, err := c.OpenAudio(24000)
	if err != nil {
		b.Fatal(err)
	}
	f := toneFrame(440, rate, codec.FrameSamples(rate), 0, 8000)
	pcm := make([]int16, codec.FrameSamples(rate))
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(f.Audio.PCM[2*i:]))
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.WriteAudio(pcm, transports.Tick{Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
	}
}
