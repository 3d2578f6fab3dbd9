package conformancebot

import (
	"context"
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// audioStatsType is answered with server-response {t:"audio-stats",
// d:{samples, sample_rate, num_channels, rms}} over every user-audio frame
// since the session began (conformance-bot.md §14).
const audioStatsType = "audio-stats"

// AudioStats is the answer to an audio-stats request.
type AudioStats struct {
	// Samples counts the user's samples per channel.
	Samples int64 `json:"samples"`
	// SampleRate and NumChannels are the last frame's.
	SampleRate  int `json:"sample_rate"`
	NumChannels int `json:"num_channels"`
	// RMS is √(Σx²/N) over every sample, x = int16/32768.
	RMS float64 `json:"rms"`
}

// audioMeter counts the user's audio as it passes, for audio-stats; it
// passes every frame on.
type audioMeter struct {
	mu       sync.Mutex
	samples  int64 // per channel
	total    int64 // all channels
	sumSq    float64
	rate, ch int
}

func (m *audioMeter) ProcessFrame(_ context.Context, _ *pipeline.Handle, f frames.Frame, _ frames.Direction) error {
	a, ok := f.(*frames.InputAudioRaw)
	if !ok {
		return nil
	}
	ch := max(a.Audio.Channels, 1)
	n := len(a.Audio.PCM) / 2
	var sum float64
	for i := range n {
		x := float64(int16(binary.LittleEndian.Uint16(a.Audio.PCM[2*i:]))) / 32768
		sum += x * x
	}
	m.mu.Lock()
	m.samples += int64(n / ch)
	m.total += int64(n)
	m.sumSq += sum
	m.rate, m.ch = a.Audio.SampleRate, ch
	m.mu.Unlock()
	return nil
}

func (m *audioMeter) stats() AudioStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := AudioStats{Samples: m.samples, SampleRate: m.rate, NumChannels: m.ch}
	if m.total > 0 {
		st.RMS = math.Sqrt(m.sumSq / float64(m.total))
	}
	return st
}

// toneRate and toneChunk are the bot's tone: 24 kHz mono (what the
// WebSocket client plays), pushed 20 ms at a time.
const (
	toneRate  = 24000
	toneChunk = 20 * time.Millisecond
	toneFreq  = 440
	toneLevel = 0.25 // of full scale: clearly audible, far from clipping
)

// tone plays a continuous 440 Hz tone from client-ready on, for the
// transports whose tests can only hear a signal (the WebSocket client
// plays what it receives). It paces itself on the wall clock, a chunk
// ahead of the output's, so the output's queue holds about one chunk.
type tone struct {
	outlet pipeline.Outlet
	once   sync.Once
}

// Setup implements pipeline.Setupper.
func (t *tone) Setup(_ context.Context, su pipeline.Setup) error {
	su.Attach(&t.outlet)
	return nil
}

// ProcessFrame implements pipeline.Processor: it passes every frame on.
func (t *tone) ProcessFrame(context.Context, *pipeline.Handle, frames.Frame, frames.Direction) error {
	return nil
}

// start begins the tone, once; the task owns its goroutine.
func (t *tone) start() {
	t.once.Do(func() {
		_ = t.outlet.Go("tone", func(ctx context.Context) error {
			n := int(toneRate * toneChunk / time.Second)
			tick := time.NewTicker(toneChunk)
			defer tick.Stop()
			var block frames.Block[frames.OutputAudioRaw]
			for k := 0; ; k++ {
				pcm := make([]byte, 2*n)
				for i := range n {
					v := toneLevel * math.Sin(2*math.Pi*toneFreq*float64(k*n+i)/toneRate)
					binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(v*32767)))
				}
				f := block.New()
				f.Audio = frames.Audio{PCM: pcm, SampleRate: toneRate, Channels: 1}
				t.outlet.Push(f, frames.Downstream)
				select {
				case <-ctx.Done():
					return nil
				case <-tick.C:
				}
			}
		})
	})
}
